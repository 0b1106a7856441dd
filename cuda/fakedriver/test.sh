#!/usr/bin/env bash
# Tests the fake CUDA driver built by cuda/fakedriver/build.sh OUTDIR:
# builds tests/c/test_fakecuda.c against cuda.h, fakecuda.h and
# OUTDIR/libcuda.so, and runs it in each configuration it checks (the fake
# reads its configuration at cuInit, so one process per configuration).
#
#   bash cuda/fakedriver/test.sh OUTDIR
#
# Environment: CC; PYTHON (with NVRTC, for cuda/tools/ptx.py; default: the
# repository's .venv/bin/python when there is one, else python3); CUDA_INCLUDE
# (default: "$PYTHON" cuda/tools/cuda_include.py build/cuda); GF_CUDA_LIB
# (default python/graphferry/lib/libgraphferry_cuda.so: when it exists,
# every cu* symbol it needs must be exported by the fake).
set -euo pipefail
export LC_ALL=C
out=${1:?usage: cuda/fakedriver/test.sh OUTDIR}
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cc=${CC:-cc}
py=${PYTHON:-}
if [[ -z "$py" ]]; then
  py=python3
  [[ -x .venv/bin/python ]] && py=.venv/bin/python
fi
inc=${CUDA_INCLUDE:-$("$py" cuda/tools/cuda_include.py build/cuda)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The caller's configuration of the fake must not leak into the tests.
while read -r var; do unset "$var"; done < <(compgen -e | grep '^GF_FAKECUDA_' || true)

# PTX: NVRTC's for compute_80 and compute_70, and edited copies: a newer
# ISA (.version 8.5 needs driver 12050, newer than the default 12040) and a
# newer target (sm_90, on the default 8.0 device).
"$py" cuda/tools/ptx.py "$tmp/k80.ptx" --arch compute_80
"$py" cuda/tools/ptx.py "$tmp/k70.ptx" --arch compute_70
grep -q '^\.version 8\.1$' "$tmp/k80.ptx" || { echo "test.sh: expected .version 8.1 in NVRTC's PTX" >&2; exit 1; }
grep -q '^\.target sm_80$' "$tmp/k80.ptx" || { echo "test.sh: expected .target sm_80 in NVRTC's PTX" >&2; exit 1; }
sed 's/^\.version .*/.version 8.5/' "$tmp/k80.ptx" >"$tmp/knew.ptx"
sed 's/^\.target sm_80/.target sm_90/' "$tmp/k80.ptx" >"$tmp/k90.ptx"
# Every .entry of cuda/kernels.ptx (make lib-cuda's, embedded by gpu.go)
# must be found; without one, of the PTX just generated from the same source.
kernels=cuda/kernels.ptx
[[ -f "$kernels" ]] || kernels=$tmp/k80.ptx

"$cc" -std=c99 -O1 -g -Wall -Wextra -Werror -I"$inc" -Icuda/fakedriver -o "$tmp/test_fakecuda" \
  tests/c/test_fakecuda.c -L"$out" -Wl,--disable-new-dtags,-rpath,"$out" -lcuda -pthread

failed=()
run() { # run NAME [VAR=VALUE...] MODE [PTX...]
  local name=$1
  shift
  if ! env "$@"; then failed+=("$name"); fi
}
t=$tmp/test_fakecuda
run basic "$t" basic "$tmp/k80.ptx" "$tmp/k70.ptx" "$tmp/knew.ptx" "$tmp/k90.ptx" "$kernels"
run initerror GF_FAKECUDA_INIT_ERROR=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH "$t" initerror
run nodevice GF_FAKECUDA_DEVICES=0 "$t" nodevice
run olddriver GF_FAKECUDA_DRIVER=12000 "$t" olddriver "$tmp/k80.ptx" "$tmp/k70.ptx"
run multi GF_FAKECUDA_DEVICES=2 GF_FAKECUDA_CC=7.0,9.0 "$t" multi "$tmp/k80.ptx" "$tmp/k70.ptx"
run oom GF_FAKECUDA_MEM=1M "$t" oom
for seed in 1 2 3; do
  run "concurrent seed $seed" GF_FAKECUDA_THREADS=8 GF_FAKECUDA_SEED=$seed "$t" concurrent "$tmp/k80.ptx"
done

# The CUDA library's driver symbols are all exported by the fake.
lib=${GF_CUDA_LIB:-python/graphferry/lib/libgraphferry_cuda.so}
if [[ -f "$lib" ]]; then
  need=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | grep -E '^cu[A-Z]' | sort -u)
  have=$(nm -D --defined-only "$out/libcuda.so.1" | awk '{print $NF}' | sort -u)
  missing=$(comm -23 <(echo "$need") <(echo "$have") | tr '\n' ' ')
  if [[ -n "$missing" ]]; then
    echo "test.sh: $lib needs driver symbols the fake lacks: $missing(add them to cuda/fakedriver/symbols.txt)" >&2
    failed+=(symbols)
  else
    echo "test.sh: the fake exports all $(echo "$need" | wc -l) driver symbols $lib needs"
  fi
fi

if ((${#failed[@]})); then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all fake driver tests passed"
