#!/usr/bin/env bash
# The GPU checks of the CUDA backend, in one call on a GPU machine (no Go,
# no network there; this script builds nothing). From the repository root:
#
#   bash tests/gpu/run.sh
#
# It needs the package's two libraries in python/graphferry/lib/ (built on a
# CPU machine: `make lib lib-cuda`; with the device tool, carry
# "python/graphferry/lib", which git ignores), python3 with torch (and
# pyarrow, for the PyTorch baseline), compute-sanitizer on PATH or in
# /usr/local/cuda/bin. Steps, each bounded by a timeout, at most 9.5 minutes in all (the device tool allows 10 per call):
#
#   1. pytest tests/gpu (kernels vs CPU engine through the library's hooks,
#      backend selection on a GPU) and tests/python/test_backend.py
#   2. compute-sanitizer memcheck, then racecheck, on tests/gpu/selfcheck.py
#   3. bench/gpu_bench.py: products-like generated here, sampling epochs of
#      graphferry GPU and CPU (16 threads) and the PyTorch GPU baseline, copy
#      bandwidths -> bench/results/gpu/results.{json,md}
#
# Every step runs even when an earlier one fails; the summary lists each
# step's outcome and the exit status is 1 if any failed. The log and results
# are also copied to $OUT when it is set (the device tool's return folder).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 1
py=${PYTHON:-python3}
results=bench/results/gpu
mkdir -p "$results"
log=$results/run.log
: >"$log"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
unset GRAPHFERRY_LIB_PATH GRAPHFERRY_BACKEND

say() { echo "$*" | tee -a "$log"; }
declare -a summary=()
failed=0
step() { # step NAME SECONDS COMMAND...: run, log, record the outcome
  local name=$1 limit=$2
  shift 2
  say ""
  say "=== $name (limit ${limit}s): $*"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  local outcome=PASS
  if [[ $rc -ne 0 ]]; then
    outcome="FAIL (exit $rc)"
    [[ $rc -eq 124 ]] && outcome="FAIL (timed out after ${limit}s)"
    failed=1
  fi
  summary+=("$outcome  $name  $((SECONDS - t0))s")
  save
}
save() { # the log and results so far to $OUT, in case the call is cut off
  if [[ -n "${OUT:-}" && -d "${OUT:-}" ]]; then
    cp -f "$log" "$OUT/" 2>/dev/null
    cp -f "$results"/results.json "$results"/results.md "$OUT/" 2>/dev/null
  fi
  return 0
}
finish() {
  say ""
  say "=== summary"
  for s in "${summary[@]}"; do say "$s"; done
  save
  exit "$failed"
}

for f in python/graphferry/lib/libgraphferry.so python/graphferry/lib/libgraphferry_cuda.so; do
  if [[ ! -f $f ]]; then
    say "run.sh: $f is missing: build it on a CPU machine (make lib lib-cuda) and bring python/graphferry/lib along"
    failed=1
    finish
  fi
done
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)

step "environment" 25 bash -c "nvidia-smi -L; $py -c 'import sys, torch; print(sys.version.split()[0], \"torch\", torch.__version__, \"cuda\", torch.version.cuda, torch.cuda.get_device_name())'; ${sanitizer:-echo no compute-sanitizer} --version | tail -1; readelf -d python/graphferry/lib/libgraphferry_cuda.so | grep NEEDED"
step "pytest tests/gpu" 120 "$py" -m pytest -q -c tests/gpu/pytest.ini tests/gpu
step "pytest tests/python/test_backend.py" 60 "$py" -m pytest -q tests/python/test_backend.py
if [[ -n $sanitizer ]]; then
  step "compute-sanitizer memcheck" 120 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 \
    "$py" tests/gpu/selfcheck.py --nodes 1200 --batches 1
  step "compute-sanitizer racecheck" 90 "$sanitizer" --tool racecheck --error-exitcode 9 \
    "$py" tests/gpu/selfcheck.py --nodes 1200 --batches 1
else
  say "run.sh: compute-sanitizer not found"
  summary+=("FAIL  compute-sanitizer (not found)")
  failed=1
fi
step "benchmark (bench/gpu_bench.py)" 165 "$py" bench/gpu_bench.py --out "$results"
finish
