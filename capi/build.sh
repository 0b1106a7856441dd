#!/usr/bin/env bash
# Builds the C shared library OUT from ./capi with the checkout's source id
# (capi/source_id.sh) compiled in, so that gf_build_id() and the string
# "gfbuild:<id>" in the binary say which sources it was built from. Every
# build of a graphferry library goes through here: make lib, the cgocheck2
# build, pip install ./python (python/setup.py) and the CUDA library
# (cuda/tools/build.sh, which passes -tags cuda).
#
#   capi/build.sh OUT [go build flags...]      (GO names the go binary)
set -euo pipefail
out=${1:?usage: capi/build.sh OUT [go build flags...]}
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
id=$(capi/source_id.sh "$root")
CGO_ENABLED=1 CGO_CFLAGS="${CGO_CFLAGS:--g -O2} -DGF_BUILD_ID=$id" \
  "${GO:-go}" build -buildmode=c-shared "$@" -o "$out" ./capi
rm -f "${out%.so}.h"
