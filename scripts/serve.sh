#!/usr/bin/env bash
# Serve the app under gunicorn with a Celery worker beside it; Ctrl-C stops both.
set -euo pipefail
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
# 4 processes of 2 threads: the lowest tail latency on 2 cores (docs/performance.md).
WORKERS=${GUNICORN_WORKERS:-4}
THREADS=${GUNICORN_THREADS:-2}
BIN=$(dirname "$PY")
mkdir -p var/log

"$PY" -m celery -A acrb_web worker -Q default -c 2 -l info --logfile var/log/worker.log &
WORKER=$!
GPU_WORKER=""
if "$PY" -c "import torch" 2>/dev/null; then
  # Model work runs in its own queue, one task at a time per process, model kept loaded.
  "$PY" -m celery -A acrb_web worker -Q gpu -P solo -n gpu@%h -l info --logfile var/log/gpu-worker.log &
  GPU_WORKER=$!
fi
trap 'kill $WORKER $GPU_WORKER 2>/dev/null || true' EXIT INT TERM

echo "Celery worker running (log: var/log/worker.log)${GPU_WORKER:+; model worker on queue gpu (var/log/gpu-worker.log)}"
echo "Serving on http://$HOST:$PORT/  (staff pages: /staff/, admin: /admin/, API schema: /api/schema/)"
"$BIN/gunicorn" acrb_web.wsgi -b "$HOST:$PORT" --workers "$WORKERS" --threads "$THREADS" \
  --keep-alive 75 --access-logfile - --error-logfile -
