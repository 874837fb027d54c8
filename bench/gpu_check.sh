#!/usr/bin/env bash
# One short GPU check: the CWRU 0 HP experiment (A and B, seeds 0,1,2, default settings) on CUDA through
# the CLI (core.experiment, the page's code path); prints the GPU, windows/s of every run and the accuracies.
# One run at a time (--workers 1), so each run's windows/s is its own.
#
#   bash bench/gpu_check.sh                      # on a machine with a CUDA GPU
#   ALLOW_CPU=1 EPOCHS=1 SEEDS=0 bash bench/gpu_check.sh # the CPU fallback, as a smoke test of the script itself
#
# Without a CUDA GPU it stops with status 1 and says so, unless ALLOW_CPU=1. The CWRU files are read from
# ../shared/data/cwru beside the repository (DATA=... to point elsewhere); OUT=... keeps the results JSON;
# SEEDS=... trains other seeds. tests/test_benches.py runs the smoke line above.
set -euo pipefail
cd "$(dirname "$0")/.."

device=cuda
if ! python -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    if [ "${ALLOW_CPU:-0}" != 1 ]; then
        echo "gpu_check: torch $(python -c 'import torch; print(torch.__version__)') sees no CUDA GPU." \
             "Run this on a CUDA machine, or set ALLOW_CPU=1 for the CPU fallback." >&2
        exit 1
    fi
    device=cpu
    echo "gpu_check: no CUDA GPU, running the CPU fallback (ALLOW_CPU=1)"
fi

out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
data=()
[ -n "${DATA:-}" ] && data=(--data "$DATA")
epochs=()
[ -n "${EPOCHS:-}" ] && epochs=(--epochs "$EPOCHS")

python - "$device" <<'EOF'
import sys, torch
from core.lab.training import describe_device
device = torch.device(sys.argv[1])
print(f"device: {describe_device(device)}; torch {torch.__version__}, CUDA {torch.version.cuda}")
if device.type == "cuda":
    free, total = torch.cuda.mem_get_info()
    print(f"GPU memory: {total / 2**30:.0f} GiB, {free / 2**30:.0f} GiB free")
EOF

started=$(date +%s)
python -m core.experiment --dataset cwru "${data[@]}" --loads 0 --window 1024 --split time --models A,B \
    --seeds "${SEEDS:-0,1,2}" "${epochs[@]}" --device "$device" --workers 1 --out "$out/gpu_check.json"
echo "wall $(( $(date +%s) - started )) s (data loading included, and on CUDA its start)"

python - "$out/gpu_check.json" <<'EOF'
import json, statistics, sys
results = json.load(open(sys.argv[1]))
print("model seed  accuracy %  F1 %  epochs  windows/s (training passes)  device")
for run in results["runs"]:
    print(f"{run['model']:<5} {run['seed']:>4}  {100 * run['accuracy']:10.1f}  {100 * run['f1']:4.1f}  {run['epochs']:6d}  "
          f"{run['windows_per_second']:27.0f}  {run['device']}")
for model, by_metric in results["summary"].items():
    speeds = [run["windows_per_second"] for run in results["runs"] if run["model"] == model]
    accuracy = by_metric["accuracy"]
    print(f"{model}: accuracy {100 * accuracy['mean']:.1f} ± {100 * (accuracy['sd'] or 0):.1f} %, "
          f"median {statistics.median(speeds):.0f} windows/s")
print(results["verdict"])
EOF
echo "results JSON: $out/gpu_check.json"
