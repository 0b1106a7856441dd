#!/bin/sh
# check_exports.sh LIB HEADER: the dynamic symbol table of LIB must define
# exactly the GF_API functions declared in HEADER: nothing internal (gfgo_*
# exports that skip the fork guard, gf__* helpers, cgo and Go runtime
# symbols), and nothing public missing.
#
# And LIB must contain none of capi's test helpers: the Go files of capi
# built only with the tag gftest (testhelp.go, abihelp.go) must have left no
# Go symbol (main.NAME for each name they declare) and no cgo call wrapper
# (_Cfunc_NAME for each C name that only they use) in LIB's symbol table.
set -eu
lib=$1
hdr=$2
capi=$(cd "$(dirname "$0")/../../capi" && pwd)
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

# The test helpers.
helpers=$(grep -l '^//go:build gftest$' "$capi"/*.go | grep -v '_test\.go$' || true)
if [ -z "$helpers" ]; then
  echo "check_exports: no file of $capi has the build tag gftest" >&2
  exit 1
fi
others=$(grep -L '^//go:build gftest$' "$capi"/*.go | grep -v '_test\.go$')
# A pattern of Go symbols per top-level name: funcs, methods, types, vars
# and consts (also in parenthesized blocks), closures and instances included.
awk 'function sym(name) { print "^main\\.(\\(\\*)?" name "([.)[].*)?$" }
     /^func \(/ {
       sub(/^func \(/, ""); split($0, part, ")")
       recv = part[1]; sub(/^.* /, "", recv); sub(/^\*/, "", recv)
       name = part[2]; sub(/^ /, "", name); sub(/[([].*/, "", name)
       print "^main\\.(\\(\\*)?" recv "\\)?\\." name "([.[].*)?$"; next }
     /^func / { sub(/^func /, ""); sub(/[([].*/, ""); sym($0); next }
     /^(type|var|const) \(/ { block = 1; next }
     block && /^\)/ { block = 0; next }
     block && /^\t[A-Za-z_]/ { sub(/^\t/, ""); sub(/[ ,=].*/, ""); sym($0); next }
     /^(type|var|const) [A-Za-z_]/ { sub(/^(type|var|const) /, ""); sub(/[ ,=].*/, ""); sym($0) }' \
  $helpers | sort -u >"$tmp/go_patterns"
grep -ohE '\bC\.[A-Za-z_][A-Za-z0-9_]*' $helpers | sed 's/^C\.//' | sort -u >"$tmp/c_helpers"
grep -ohE '\bC\.[A-Za-z_][A-Za-z0-9_]*' $others | sed 's/^C\.//' | sort -u >"$tmp/c_others"
comm -23 "$tmp/c_helpers" "$tmp/c_others" >"$tmp/c_names"
nm "$lib" | awk '{print $NF}' | sort -u >"$tmp/symbols"
# The symbol table must be there for the check to mean anything.
for sym in main.call gf__set_error; do
  if ! grep -qx "$sym" "$tmp/symbols"; then
    echo "check_exports: $lib has no symbol $sym: no symbol table to look for test helpers in (stripped?)" >&2
    exit 1
  fi
done
found=$({
  grep -E -f "$tmp/go_patterns" "$tmp/symbols" || true
  while read -r name; do
    grep -E "_Cfunc_$name(\.abi0)?$" "$tmp/symbols" || true
  done <"$tmp/c_names"
} | sort -u)
if [ -n "$found" ]; then
  echo "check_exports: $lib contains test helpers of $(echo $helpers | xargs -n1 basename | tr '\n' ' ')(build them with -tags gftest only):" >&2
  echo "$found" | sed 's/^/  /' >&2
  status=1
else
  echo "check_exports: $lib contains none of the $(wc -l <"$tmp/go_patterns") Go and $(wc -l <"$tmp/c_names") C test helpers of capi"
fi
exit $status
