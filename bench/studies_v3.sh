#!/usr/bin/env bash
# The version-3 studies of results/study_protocol.md, one after another, each resumable: stop this script and
# start it again, and every study resumes from its checkpoint (checkpoints/, not tracked). Each study's exact
# command is also stored in its JSON (config.command).
#   bash bench/studies_v3.sh                          # every study (hours on 2 cores)
#   ONLY=study_cwru_load-shift_v3 bash bench/studies_v3.sh
#   DRY_RUN=1 bash bench/studies_v3.sh                # print each command instead (its smoke test, in the suite)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -n "${DRY_RUN:-}" ]] || mkdir -p checkpoints
common=(--protocol 3 --tune-lr --seeds 0,1,2,3,4 --epochs 100 --patience 20 --min-delta 0.001 --margin 2)
every=(--models A,A+PE,B-noPE,B,spectrum-LR)
run() {  # name, then the study's own arguments
  local name=$1; shift
  [[ -n "${ONLY:-}" && "$ONLY" != *"$name"* ]] && return 0
  local command=(python -m core.study "${common[@]}" "$@" --checkpoint "checkpoints/$name.jsonl"
    --out "results/$name.json.gz" --quiet)
  if [[ -n "${DRY_RUN:-}" ]]; then echo "${command[*]}"; return 0; fi
  echo "$(date -u +%H:%M:%S) $name"
  "${command[@]}"
}
run study_cwru_0hp_time-cv_v3 --dataset cwru --loads 0 --design time-cv --folds 5 --repeats 3 \
  --models A,B-noPE,B,spectrum-LR
# the curve's first run (cap 100, kept as results/study_order_curve_cap100.json.gz), then protocol 3's amendment 1:
# the runs' cap at 300, what stopped before 100 carried from the first run's checkpoints
curve=(python bench/order_curve.py --protocol 3 --out results/study_order_curve_cap100.json.gz)
amended=(python bench/order_curve.py --protocol 3 --epochs 300 --tune-epochs 100 --work checkpoints/order_curve_cap300 \
  --carry-from checkpoints/order_curve -- --workers 2)
if [[ -z "${ONLY:-}" || "$ONLY" == *order_curve* ]]; then
  if [[ -n "${DRY_RUN:-}" ]]; then echo "${curve[*]}"; echo "${amended[*]}"
  else
    echo "$(date -u +%H:%M:%S) study_order_curve"
    "${curve[@]}"
    "${amended[@]}"
  fi
fi
run study_cwru_load-shift_v3 --dataset cwru --loads 0,1,2,3 --design load-out --train-loads 0 --test-loads 1,2,3 \
  "${every[@]}"
run study_spectraquest_a4_load-shift_v3 --dataset spectraquest --channel a4 --window 256 --design load-out \
  --train-loads 0,10,20 --test-loads 30,40,50,60,70,80,90 "${every[@]}"
run study_cwru_load-out_v3 --dataset cwru --loads 0,1,2,3 --design load-out "${every[@]}"
run study_spectraquest_load-out_v3 --dataset spectraquest --channel a2 --design load-out "${every[@]}"
[[ -n "${DRY_RUN:-}" ]] || echo "$(date -u +%H:%M:%S) done"
