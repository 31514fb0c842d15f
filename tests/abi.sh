#!/bin/sh
# The shared library's ABI: it exports exactly the functions the public headers
# declare WKV_API, no helper besides (the core is built with hidden visibility, so a
# helper leaks only through a WKV_API or a visibility attribute it should not have),
# and every public prototype carries WKV_API (else it would silently not be exported).
#
# usage: abi.sh NM LIBRARY HEADER...
# Names with a leading underscore are left out: C reserves them for the toolchain
# (_init, _edata, __bss_start, sanitizer instrumentation), and no wkv_ name has one.
set -u

NM=${1:?usage: abi.sh NM LIBRARY HEADER...}
LIB=${2:?missing LIBRARY}
shift 2
[ $# -gt 0 ] || { echo "abi.sh: no headers given" >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
status=0

# A declaration starts its line with WKV_API and names the function before the first
# "(": one line per declaration is the headers' style, so a WKV_API line without a
# name there is a parse failure, not something to skip.
for h in "$@"; do
    grep -n '^WKV_API' "$h" | while IFS= read -r line; do
        name=$(printf '%s\n' "$line" |
            sed -n 's/^[0-9]*:WKV_API[^(]*[^A-Za-z0-9_]\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*(.*/\1/p')
        if [ -z "$name" ]; then
            echo "FAIL: $h:${line%%:*}: cannot find the function name in: ${line#*:}" >&2
            echo parse-error
        else
            echo "$name"
        fi
    done
done > "$tmp/declared.all"
if grep -q '^parse-error$' "$tmp/declared.all"; then
    status=1
fi
grep -v '^parse-error$' "$tmp/declared.all" | sort -u > "$tmp/declared"

# A prototype of a wkv_ function at the start of a line without WKV_API.
for h in "$@"; do
    grep -nE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]wkv_[A-Za-z0-9_]*[[:space:]]*\(' "$h" |
        grep -vE '^[0-9]+:(WKV_API|typedef|#)' |
        while IFS= read -r line; do
            echo "FAIL: $h:${line%%:*}: a public function without WKV_API: ${line#*:}"
        done
done > "$tmp/unmarked"
if [ -s "$tmp/unmarked" ]; then
    cat "$tmp/unmarked"
    status=1
fi

if ! "$NM" -D --defined-only "$LIB" > "$tmp/nm.out"; then
    echo "FAIL: $NM -D --defined-only $LIB failed"
    exit 1
fi
awk 'NF >= 2 { print $NF }' "$tmp/nm.out" | sed 's/@.*//' | grep -v '^_' | sort -u > "$tmp/exported"

comm -13 "$tmp/declared" "$tmp/exported" > "$tmp/extra"
comm -23 "$tmp/declared" "$tmp/exported" > "$tmp/missing"
while IFS= read -r s; do
    echo "FAIL: $LIB exports '$s', which no public header declares WKV_API"
    status=1
done < "$tmp/extra"
while IFS= read -r s; do
    echo "FAIL: '$s' is declared WKV_API but $LIB does not export it"
    status=1
done < "$tmp/missing"

n_decl=$(wc -l < "$tmp/declared")
n_exp=$(wc -l < "$tmp/exported")
if [ "$n_decl" -eq 0 ]; then
    echo "FAIL: no WKV_API declarations found in: $*"
    status=1
fi
echo "$n_exp symbols exported, $n_decl functions declared WKV_API"
[ $status -eq 0 ] && echo "PASS: the exports are exactly the public API"
exit $status
