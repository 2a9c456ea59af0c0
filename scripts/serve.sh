#!/usr/bin/env bash
# Serve the app under gunicorn with a Celery worker beside it; Ctrl-C stops both.
# The terminal stays quiet: requests, server errors and the workers log to files under var/log/
# (ACCESS_LOG=- puts the access log back on the terminal).
set -euo pipefail
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
# 4 processes of 2 threads: the lowest tail latency on 2 cores (docs/performance-history.md).
WORKERS=${GUNICORN_WORKERS:-4}
THREADS=${GUNICORN_THREADS:-2}
LOG_DIR=var/log
ACCESS_LOG=${ACCESS_LOG:-$LOG_DIR/access.log}
SERVER_LOG=$LOG_DIR/server.log
mkdir -p "$LOG_DIR"

# A port already taken (often the previous `make demo` still running) is one clear line.
"$PY" "$(dirname "$0")/check_port.py" "$HOST" "$PORT" || exit 1

# Each background job gets a process group of its own (job control), so the terminal's Ctrl-C
# reaches this script alone, which stops the server and the workers itself, at once
# (gunicorn's own 30 s graceful timeout ended in "Perhaps out of memory?" and no "Stopped" line).
set -m
"$PY" -m celery -A acrb_web worker -Q default -c 2 -l info --logfile "$LOG_DIR/worker.log" >>"$LOG_DIR/worker.log" 2>&1 &
WORKER=$!
GPU_WORKER=""
if "$PY" -c "import torch" 2>/dev/null; then
  # Model work runs in its own queue, one task at a time per process, model kept loaded.
  "$PY" -m celery -A acrb_web worker -Q gpu -P solo -n gpu@%h -l info --logfile "$LOG_DIR/gpu-worker.log" >>"$LOG_DIR/gpu-worker.log" 2>&1 &
  GPU_WORKER=$!
fi
SERVER=""
STOP_WAIT_S=${STOP_WAIT_S:-3}
stop_all() {
  # gunicorn: quick shutdown (QUIT); Celery: warm shutdown (TERM; tasks acknowledge late, so a
  # task cut short runs again). Whatever still runs after STOP_WAIT_S is killed with its whole
  # process group (gunicorn's workers too), by us rather than by gunicorn's timeout.
  local pids="$SERVER $WORKER $GPU_WORKER" pid
  set +m  # no "Terminated" job notices for the processes we stop
  if [ -n "$SERVER" ]; then kill -QUIT "$SERVER" 2>/dev/null || true; fi
  # shellcheck disable=SC2086  # GPU_WORKER may be empty
  kill -TERM $WORKER $GPU_WORKER 2>/dev/null || true
  for _ in $(seq $((STOP_WAIT_S * 10))); do
    alive=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  for pid in $pids; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_all EXIT
trap 'trap - INT TERM EXIT; echo; echo "Stopping the server and the worker ..."; stop_all; echo "Stopped. Start again with: make serve PORT=$PORT"; exit 0' INT TERM

echo "Serving on http://$HOST:$PORT/  (staff pages: /staff/, admin: /admin/, API docs: /api/docs/)"
echo "Logs: $LOG_DIR/ (access.log: requests, server.log: errors, worker.log: background jobs). Ctrl-C stops."
"$PY" -m gunicorn acrb_web.wsgi -b "$HOST:$PORT" --workers "$WORKERS" --threads "$THREADS" \
  --keep-alive 75 --access-logfile "$ACCESS_LOG" --error-logfile "$SERVER_LOG" 2>>"$SERVER_LOG" &
SERVER=$!
# wait returns as soon as Ctrl-C arrives (the trap above runs then).
status=0
wait "$SERVER" || status=$?
SERVER=""
if [ "$status" -ne 0 ]; then
  echo "The server stopped with an error (exit $status); the end of $SERVER_LOG:" >&2
  tail -n 15 "$SERVER_LOG" >&2
  exit "$status"
fi
