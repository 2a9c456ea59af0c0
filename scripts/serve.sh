#!/usr/bin/env bash
# Serve the app under gunicorn with a Celery worker beside it; Ctrl-C stops both.
# The terminal stays quiet: requests, server errors and the workers log to files under var/log/
# (ACCESS_LOG=- puts the access log back on the terminal).
set -euo pipefail
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
# 4 processes of 2 threads: the lowest tail latency on 2 cores (docs/performance.md).
WORKERS=${GUNICORN_WORKERS:-4}
THREADS=${GUNICORN_THREADS:-2}
LOG_DIR=var/log
ACCESS_LOG=${ACCESS_LOG:-$LOG_DIR/access.log}
SERVER_LOG=$LOG_DIR/server.log
mkdir -p "$LOG_DIR"

# A port already taken (often the previous `make demo` still running) is one clear line.
if ! "$PY" -c "import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], int(sys.argv[2])))" "$HOST" "$PORT" 2>/dev/null; then
  echo "Port $PORT on $HOST is in use (is another 'make demo' or 'make serve' running?). Stop it, or pick another port: make serve PORT=8001" >&2
  exit 1
fi

"$PY" -m celery -A acrb_web worker -Q default -c 2 -l info --logfile "$LOG_DIR/worker.log" >>"$LOG_DIR/worker.log" 2>&1 &
WORKER=$!
GPU_WORKER=""
if "$PY" -c "import torch" 2>/dev/null; then
  # Model work runs in its own queue, one task at a time per process, model kept loaded.
  "$PY" -m celery -A acrb_web worker -Q gpu -P solo -n gpu@%h -l info --logfile "$LOG_DIR/gpu-worker.log" >>"$LOG_DIR/gpu-worker.log" 2>&1 &
  GPU_WORKER=$!
fi
stop_workers() {
  # shellcheck disable=SC2086  # GPU_WORKER may be empty
  kill $WORKER $GPU_WORKER 2>/dev/null || true
  wait $WORKER $GPU_WORKER 2>/dev/null || true
}
trap stop_workers EXIT
trap 'echo; echo "Stopped. Start again with: make serve PORT=$PORT"; exit 0' INT TERM

echo "Serving on http://$HOST:$PORT/  (staff pages: /staff/, admin: /admin/, API schema: /api/schema/)"
echo "Logs: $LOG_DIR/ (access.log: requests, server.log: errors, worker.log: background jobs). Ctrl-C stops."
# Not exec: the traps above must stop the workers when gunicorn ends.
status=0
"$PY" -m gunicorn acrb_web.wsgi -b "$HOST:$PORT" --workers "$WORKERS" --threads "$THREADS" \
  --keep-alive 75 --access-logfile "$ACCESS_LOG" --error-logfile "$SERVER_LOG" 2>>"$SERVER_LOG" || status=$?
if [ "$status" -ne 0 ]; then
  echo "The server stopped with an error (exit $status); the end of $SERVER_LOG:" >&2
  tail -n 15 "$SERVER_LOG" >&2
  exit "$status"
fi
