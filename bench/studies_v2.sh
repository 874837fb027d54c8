#!/usr/bin/env bash
# The five version-2 studies of results/study_protocol.md, one after another, each resumable: stop this script
# and start it again, and every study resumes from its checkpoint (checkpoints/, not tracked) without
# retraining a finished run. Each study's exact command is also stored in its JSON (config.command).
#
#   bash bench/studies_v2.sh                           # all five (days on 2 cores)
#   ONLY=study_cwru_fault-size bash bench/studies_v2.sh  # the studies whose names contain this
#   DRY_RUN=1 bash bench/studies_v2.sh                 # print each study's command instead of running it
#
# Its smoke test (tests/test_benches.py) is the dry run: training even one study takes hours and writes results/,
# so the test parses every printed command with core.study's own parser and checks it against the shipped study.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -n "${DRY_RUN:-}" ]] || mkdir -p checkpoints
common=(--seeds 0,1,2 --patience 10 --tune-lr --margin 2)
# The epoch cap: 80 on the real data, where v1's cap of 40 left B unconverged in a third of its runs. Where a
# model reaches every window its validation loss keeps shrinking toward zero by crumbs and the run never stops
# early: the three studies that missed the 90 % convergence target that way (the control at a cap of 20,
# SpectraQuest, fault-size) were run again with --min-delta 0.001 (the protocol's second amendment), the
# control at a cap of 40.
models=(--models A,A+PE,B-noPE,B)
run() {  # name, then the study's own arguments
  local name=$1; shift
  [[ -n "${ONLY:-}" && "$ONLY" != *"$name"* ]] && return 0
  local command=(python -m core.study "${models[@]}" "${common[@]}" "$@" --checkpoint "checkpoints/$name.jsonl" --quiet)
  if [[ -n "${DRY_RUN:-}" ]]; then echo "${command[*]}"; return 0; fi
  "${command[@]}"
}
run study_order_control --dataset order_control --order-classes 4 --duration 30 --design time-cv --folds 5 \
  --repeats 3 --epochs 40 --min-delta 0.001 --out results/study_order_control.json
run study_cwru_0hp_time-cv --epochs 80 --dataset cwru --loads 0 --design time-cv --folds 5 --repeats 3 \
  --pe-scale-sweep 0.1,0.3 --out results/study_cwru_0hp_time-cv.json.gz
run study_spectraquest_load-out --epochs 80 --min-delta 0.001 --dataset spectraquest --channel a2 --design load-out \
  --out results/study_spectraquest_load-out.json
run study_cwru_load-out --epochs 80 --dataset cwru --loads 0,1,2,3 --design load-out --out results/study_cwru_load-out.json.gz
run study_cwru_fault-size --epochs 80 --min-delta 0.001 --dataset cwru --loads 0 --design fault-size --out results/study_cwru_fault-size.json
