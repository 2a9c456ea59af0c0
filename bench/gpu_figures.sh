#!/bin/bash
# The GPU-host figures of docs/performance.md ("The GPU host"), one command per row, each
# run's last line (its JSON) printed and its whole log kept in $LOGS (default var/bench/gpu).
# Usage: bench/gpu_figures.sh [all|check|judge|png|jpeg|scaling ...] ; IMAGES=10000 REPEATS=3
# Each step has its own time limit (STEP_S, default 300 s) so one slow step cannot eat a lease.
set -u
LOGS=${LOGS:-var/bench/gpu}
IMAGES=${IMAGES:-10000}
REPEATS=${REPEATS:-3}
STEP_S=${STEP_S:-300}
PYTHON=${PYTHON:-python3}
mkdir -p "$LOGS"
export PYTHONUNBUFFERED=1

step() {
    local name=$1
    shift
    echo "=== $name: $*"
    timeout "$STEP_S" "$PYTHON" "$@" >"$LOGS/$name.log" 2>&1
    echo "exit $? · $(tail -n 1 "$LOGS/$name.log")"
}

clip=(bench/score_bench.py --device cuda --model ViT-B-32 --precision bf16 --batch-size 256
      --images "$IMAGES" --repeats "$REPEATS")

for what in "${@:-all}"; do
case $what in check | all) step gpu_check bench/gpu_check.py --device cuda ;; esac
case $what in judge | all) step judge bench/judge_bench.py --device cuda --precision bf16 --batch-size 256 ;; esac
case $what in png | all)
    step png "${clip[@]}"
    step png_device "${clip[@]}" --preprocess-on-device --pool process
    step png_device_thread "${clip[@]}" --preprocess-on-device --pool thread
    ;;
esac
case $what in jpeg | all)
    step jpeg_device "${clip[@]}" --format jpeg --jpeg-decode-on-device
    step jpeg_host "${clip[@]}" --format jpeg
    step jpeg_host_device "${clip[@]}" --format jpeg --preprocess-on-device
    step jpeg_host_device_draft "${clip[@]}" --format jpeg --preprocess-on-device --jpeg-draft
    step jpeg_draft "${clip[@]}" --format jpeg --jpeg-draft
    ;;
esac
case $what in scaling | all)
    step scaling_process bench/score_bench.py --model none --images "$IMAGES" --repeats "$REPEATS" --workers 16 --pool process
    step scaling_thread bench/score_bench.py --model none --images "$IMAGES" --repeats "$REPEATS" --workers 16 --pool thread
    step scaling_device_process bench/score_bench.py --model none --images "$IMAGES" --repeats "$REPEATS" --workers 16 --pool process --preprocess-on-device
    step scaling_device_thread bench/score_bench.py --model none --images "$IMAGES" --repeats "$REPEATS" --workers 16 --pool thread --preprocess-on-device
    ;;
esac
done
