#!/usr/bin/env bash
# The GPU check of graphferry's CUDA backend: one call on a GPU machine tells
# whether it works. No Go and no network there: this script builds nothing.
#
#   bash tests/gpu/run.sh [--dry-run] [--only STEP[,STEP...]] [--lib-dir DIR] [--test-bin FILE]
#
# It needs, built here on a CPU machine by `make lib lib-cuda` and brought
# along (the device tool: carry ["python/graphferry/lib", "build/gpu"]):
# python/graphferry/lib/libgraphferry.so and libgraphferry_cuda.so, and
# build/gpu/cuda.test (the cuda package's Go tests, go test -c -tags cuda,gftest).
# On the GPU machine: python3 with torch and pytest, nvidia-smi, and
# compute-sanitizer on PATH or in /usr/local/cuda/bin.
#
# Steps, in this order, each with a time limit, all within one budget of
# 555 s (GF_GPU_BUDGET): a step's limit is cut to what is left of it, and a
# step reached with less than 10 s left fails as not run. The most
# telling steps come first.
#   builds      the source id of this checkout (capi/source_id.sh) against the
#               "gfbuild:<id>" each carried binary holds: binaries built from
#               other sources fail the run
#   device      nvidia-smi, torch, and graphferry.cuda_check(): driver,
#               device, compute capability, PTX ISA, the library's build id
#   go          the Go device tests (build/gpu/cuda.test -test.run ^TestGPU):
#               the kernels and the mode-2 pipeline (device sampler stage,
#               tiers, gather, device and host outputs, every scheme) equal
#               to the CPU engine's, context discipline, faults, streams,
#               pinned host memory (a mapped dataset registered in place,
#               Go-heap arrays copied, never registered)
#   bench       bench/gpu_bench.py -> bench/results/gpu/results.{json,md}:
#               the device stage's sampling epoch on products-like, gather
#               bandwidth per tier beside device and pinned copies, mode 1
#               (CPU sampling, GPU training: GraphSAGE over the training-only
#               floor, the synchronous copy and the side-stream prefetch),
#               against the issue's goals
#   pytest      tests/gpu (test_handoff.py: mode 1's pinned batches, device
#               batches equal to the CPU's, the training stream ordered by an
#               event, not the host) and the GPU tests of test_backend.py
#   memcheck, racecheck, initcheck, synccheck
#               compute-sanitizer on tests/gpu/selfcheck.py (the kernels and
#               the mode-2 pipeline against the CPU engine, then the
#               deliberate faults)
#
# Strict: a test step fails when any test failed, erred or was SKIPPED, or
# when none ran (tests/gpu/outcome.py); a missing tool fails its step. The
# summary lists every step's outcome; the exit status is 1 if any failed.
# The log and results are also copied to $OUT when it is set (the device
# tool's return folder).
#
# --dry-run runs here, without a GPU, every part that can. It first builds
# what is missing or stale (step "build": a fresh clone has nothing: both
# libraries and the Go test binary with capi/build.sh and
# cuda/tools/build.sh, the fake driver of cuda/fakedriver; it needs Go and a
# PYTHON with torch's NVRTC and the CUDA headers' wheel, as make lib-cuda
# does), then the build ids; the Go device tests against the fake driver;
# the collection of the pytest GPU tests; the benchmark's CPU parts on the
# shipped Cora. The sanitizer steps are printed, not run. make test-cuda
# runs it, so this script is tested in CI.
# shellcheck disable=SC2317 # the step functions run through `timeout bash -c`
set -uo pipefail

dry=0
only=
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
libdir=$root/python/graphferry/lib
test_bin=$root/build/gpu/cuda.test
while [[ $# -gt 0 ]]; do
  case $1 in
    --dry-run) dry=1 ;;
    --only) only=${2:?--only needs a step list}; shift ;;
    --lib-dir) libdir=$(cd "${2:?--lib-dir needs a folder}" && pwd); shift ;;
    --test-bin) test_bin=$(realpath "${2:?--test-bin needs a file}"); shift ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
cd "$root" || exit 1
py=${PYTHON:-python3}
fake=$root/build/fakecuda
if [[ $dry -eq 1 ]]; then
  results=$(mktemp -d "${TMPDIR:-/tmp}/gf-gpu-dry.XXXXXX")
  [[ -x ${PYTHON:-} ]] || { [[ -x $root/.venv/bin/python ]] && py=$root/.venv/bin/python; }
else
  results=bench/results/gpu
fi
mkdir -p "$results"
log=$results/run.log
: >"$log"
work=$(mktemp -d "${TMPDIR:-/tmp}/gf-gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
unset GRAPHFERRY_LIB_PATH GRAPHFERRY_BACKEND
if [[ $libdir != "$root/python/graphferry/lib" ]]; then
  export GRAPHFERRY_LIB_PATH=$libdir/libgraphferry.so
fi

say() { echo "$*" | tee -a "$log"; }
declare -a summary=()
failed=0
budget=${GF_GPU_BUDGET:-555}
deadline=$((SECONDS + budget))
wanted() { [[ -z $only || ",$only," == *",$1,"* ]]; }
record() { # record OUTCOME NAME SECONDS
  summary+=("$1  $2  ${3}s")
  [[ $1 == FAIL* ]] && failed=1
  save
}
step() { # step NAME SECONDS COMMAND...: run, log, record the outcome
  local name=$1 limit=$2
  shift 2
  wanted "$name" || return 0
  local left=$((deadline - SECONDS))
  if ((left < 10)); then
    say ""
    say "=== $name: not run: ${left}s left of the ${budget}s budget"
    record "FAIL (not run: out of time)" "$name" 0
    return 0
  fi
  ((limit > left)) && limit=$left
  say ""
  say "=== $name (limit ${limit}s): $*"
  local t0=$SECONDS
  # A new bash: timeout runs programs, and the step may be one of the
  # functions below (exported with their variables).
  timeout --kill-after=10 "$limit" bash -c '"$@"' "$name" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]} outcome=PASS
  if [[ $rc -ne 0 ]]; then
    outcome="FAIL (exit $rc)"
    [[ $rc -eq 124 ]] && outcome="FAIL (timed out after ${limit}s)"
  fi
  record "$outcome" "$name" $((SECONDS - t0))
}
dry_only() { # dry_only NAME WHY COMMAND...: printed, not run
  wanted "$1" || return 0
  say ""
  say "=== $1: not run in a dry run ($2): ${*:3}"
  record "DRY (not run: $2)" "$1" 0
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
  say "=== summary$([[ $dry -eq 1 ]] && echo " (dry run)")"
  for s in "${summary[@]}"; do say "$s"; done
  save
  [[ $dry -eq 1 ]] && rm -rf "$results"
  exit "$failed"
}

# ---------------------------------------------------------------------------
# build (dry run only): what the dry run needs, built here when missing or
# built from other sources

build_here() {
  local want
  want=$(bash capi/source_id.sh "$root") || return 1
  current() { [[ -f $1 && $("$py" tests/gpu/outcome.py buildid "$1") == "$want" ]]; }
  if [[ $libdir != "$root/python/graphferry/lib" ]]; then
    echo "libraries of --lib-dir $libdir are taken as they are"
  elif ! current "$libdir/libgraphferry.so"; then
    echo "building libgraphferry.so"
    mkdir -p build "$libdir" && GO=${GO:-go} capi/build.sh build/libgraphferry.so &&
      cp build/libgraphferry.so "$libdir/libgraphferry.so.tmp" && mv -f "$libdir/libgraphferry.so.tmp" "$libdir/libgraphferry.so" || return 1
  fi
  if [[ $libdir == "$root/python/graphferry/lib" ]] && { ! current "$libdir/libgraphferry_cuda.so" || ! current "$test_bin"; }; then
    echo "building libgraphferry_cuda.so and $test_bin"
    PYTHON=$py GO=${GO:-go} cuda/tools/build.sh build/libgraphferry_cuda.so --test "$test_bin" &&
      cp build/libgraphferry_cuda.so "$libdir/libgraphferry_cuda.so.tmp" && mv -f "$libdir/libgraphferry_cuda.so.tmp" "$libdir/libgraphferry_cuda.so" || return 1
  fi
  if [[ ! -f $fake/libcuda.so.1 ]] || [[ -n $(find cuda/fakedriver cuda/emu cuda/kernels -newer "$fake/libcuda.so.1" -type f | head -1) ]]; then
    echo "building the fake driver $fake/libcuda.so.1"
    PYTHON=$py bash cuda/fakedriver/build.sh "$fake" || return 1
  fi
  echo "the dry run's binaries are built from this checkout"
}

# ---------------------------------------------------------------------------
# builds: the carried binaries were built from this checkout

check_builds() {
  local want id f bad=0
  want=$(bash capi/source_id.sh "$root") || return 1
  echo "this checkout's source id: $want"
  for f in "$libdir/libgraphferry.so" "$libdir/libgraphferry_cuda.so" "$test_bin"; do
    if [[ ! -f $f ]]; then
      echo "MISSING $f: build it on a CPU machine (make lib lib-cuda) and carry python/graphferry/lib and build/gpu"
      bad=1
      continue
    fi
    id=$("$py" tests/gpu/outcome.py buildid "$f")
    if [[ $id == "$want" ]]; then
      echo "ok      $f: built from this checkout ($id)"
    else
      echo "STALE   $f: built from other sources ($id, want $want): rebuild with make lib lib-cuda"
      bad=1
    fi
  done
  return "$bad"
}

# ---------------------------------------------------------------------------
# device: what this machine has, and graphferry's own check of it

describe_device() {
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv || return 1
  "$py" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name())' || return 1
  if [[ -n ${sanitizer:-} ]]; then "$sanitizer" --version | tail -1; else echo "compute-sanitizer: not found"; fi
  GRAPHFERRY_BACKEND=cuda "$py" tests/gpu/check_device.py --real
}
describe_fake_device() {
  echo "dry run: graphferry.cuda_check() against the fake driver ($fake)"
  LD_LIBRARY_PATH=$fake GF_FAKECUDA_DEVICES=2 GRAPHFERRY_BACKEND=cuda "$py" tests/gpu/check_device.py --fake
}

# ---------------------------------------------------------------------------
# go: the Go device tests, strictly

run_go() { # run_go [ENV=VALUE...]: the test binary with -test.v, then its outcome
  local out=$work/go.out
  (cd "$root/cuda" && env "$@" "$test_bin" -test.run '^TestGPU' -test.v -test.count=1 -test.timeout 170s) >"$out" 2>&1
  local rc=$?
  cat "$out"
  "$py" tests/gpu/outcome.py gotest "$out" --min 11 || return 1
  return "$rc"
}

# ---------------------------------------------------------------------------
# pytest: the GPU tests, strictly

run_pytest() {
  local xml=$work/pytest.xml
  GRAPHFERRY_BACKEND=cuda "$py" -m pytest -q -p no:cacheprovider -c tests/gpu/pytest.ini --junitxml="$xml" \
    tests/gpu tests/python/test_backend.py -m gpu
  local rc=$?
  "$py" tests/gpu/outcome.py junit "$xml" --min 10 || return 1
  return "$rc"
}
collect_pytest() {
  local out=$work/collect.out
  GRAPHFERRY_BACKEND=cpu "$py" -m pytest -q -p no:cacheprovider -c tests/gpu/pytest.ini --collect-only \
    tests/gpu tests/python/test_backend.py -m gpu >"$out" 2>&1
  local rc=$?
  cat "$out"
  [[ $rc -eq 0 ]] || return 1
  local n
  n=$(grep -Eo '^[0-9]+(/[0-9]+)? tests? (collected|selected)' "$out" | grep -Eo '^[0-9]+' | head -1)
  echo "collected ${n:-0} GPU tests"
  [[ ${n:-0} -ge 10 ]]
}

# ---------------------------------------------------------------------------

export root libdir test_bin py fake work
export -f build_here check_builds describe_device describe_fake_device run_go run_pytest collect_pytest

say "graphferry GPU check$([[ $dry -eq 1 ]] && echo " (dry run)"): $(date -u +%FT%TZ) in $root"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
export sanitizer

if [[ $dry -eq 1 ]]; then
  deadline=$((SECONDS + 900)) # the build has a budget of its own
  step build 900 build_here
  deadline=$((SECONDS + budget))
fi
step builds 30 check_builds
if [[ $dry -eq 1 ]]; then
  if [[ ! -f $fake/libcuda.so.1 ]]; then
    say "run.sh: the fake driver $fake/libcuda.so.1 is missing (bash cuda/fakedriver/build.sh build/fakecuda)"
    wanted device && record "FAIL (no fake driver)" device 0
    wanted go && record "FAIL (no fake driver)" go 0
  else
    step device 60 describe_fake_device
    # the fake's streams run late (GF_FAKECUDA_DELAY_US): a missing wait shows
    step go 170 run_go LD_LIBRARY_PATH="$fake" GF_FAKECUDA_DEVICES=2 GF_FAKECUDA_THREADS=3 GF_FAKECUDA_SEED=7 GF_FAKECUDA_DELAY_US=50
  fi
  step bench 150 env GRAPHFERRY_BACKEND=cpu "$py" bench/gpu_bench.py --device cpu --dataset examples/data/cora \
    --max-batches 3 --cpu-threads 2 --train-repeats 1 --out "$results"
  step pytest 120 collect_pytest
  for tool in memcheck racecheck initcheck synccheck; do
    dry_only "$tool" "needs a GPU" compute-sanitizer --tool "$tool" "$py" tests/gpu/selfcheck.py
  done
  finish
fi

step device 45 describe_device
step go 150 run_go GF_EXPECT_REAL_DRIVER=1
step bench 170 env GRAPHFERRY_BACKEND=cuda "$py" bench/gpu_bench.py --out "$results"
step pytest 100 run_pytest
for tool in memcheck racecheck initcheck synccheck; do
  wanted "$tool" || continue
  if [[ -z $sanitizer ]]; then
    say "run.sh: compute-sanitizer not found"
    record "FAIL (compute-sanitizer not found)" "$tool" 0
    continue
  fi
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  [[ $tool == initcheck ]] && extra=(--track-unused-memory no)
  step "$tool" 60 env GRAPHFERRY_BACKEND=cuda "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 9 \
    "$py" tests/gpu/selfcheck.py --nodes 1200 --batches 1
done
finish
