#!/bin/sh
# check_exports.sh LIB HEADER: the dynamic symbol table of LIB must define
# exactly the GF_API functions declared in HEADER: nothing internal (gfgo_*
# exports that skip the fork guard, gf__* helpers, cgo and Go runtime
# symbols), and nothing public missing.
set -eu
lib=$1
hdr=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u >"$tmp/exported"
sed -n 's/^GF_API [^(]*[ *]\(gf_[a-z0-9_]*\)(.*/\1/p' "$hdr" | sort -u >"$tmp/declared"
if [ ! -s "$tmp/declared" ]; then
  echo "check_exports: no GF_API declarations found in $hdr" >&2
  exit 1
fi
status=0
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
  echo "check_exports: $lib exports symbols that are not public gf_* functions:" >&2
  echo "$extra" | sed 's/^/  /' >&2
  status=1
fi
if [ -n "$missing" ]; then
  echo "check_exports: $lib does not export these functions of $hdr:" >&2
  echo "$missing" | sed 's/^/  /' >&2
  status=1
fi
if [ $status -eq 0 ]; then
  echo "check_exports: $lib exports exactly the $(wc -l <"$tmp/declared") gf_* functions of $hdr"
fi
exit $status
