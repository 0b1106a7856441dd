#!/usr/bin/env bash
# Prints the source id of a checkout: 16 hex digits of a SHA-256 over the
# files that go into graphferry's libraries and Go test binaries (engine/,
# capi/, cuda/, include/, go.mod, go.sum), by path and content. The build
# (capi/build.sh) embeds it as "gfbuild:<id>" in libgraphferry.so,
# libgraphferry_cuda.so and the carried Go test binary; tests/gpu/run.sh
# recomputes it in the checkout it runs in and refuses binaries built from
# other sources. It needs no git: the GPU machine gets a copy of the working
# tree without one.
#
#   capi/source_id.sh [ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
dirs=()
for d in engine capi cuda include; do
  if [[ -d $d ]]; then dirs+=("$d"); fi
done
{
  find "${dirs[@]}" -type f \( -name '*.go' -o -name '*.c' -o -name '*.h' -o -name '*.cpp' \
    -o -name '*.cu' -o -name '*.cuh' -o -name '*.sh' -o -name '*.py' -o -name '*.map.o' -o -name '*.supp' \) \
    -not -path '*/__pycache__/*' -not -path '*/testdata/*'
  for f in go.mod go.sum; do
    if [[ -f $f ]]; then echo "$f"; fi
  done
} | LC_ALL=C sort | while IFS= read -r f; do
  printf '%s %s\n' "$(sha256sum <"$f" | cut -c1-64)" "$f"
done | sha256sum | cut -c1-16
