#!/bin/sh
# bench/run.sh - neuronop's performance targets, each printed as a figure and a ratio against a
# baseline measured in the same run on the same machine (never a number from elsewhere).
# Usage: bench/run.sh NEURONOP
set -eu
neuronop=${1:?usage: bench/run.sh NEURONOP}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/neuronop-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export NEURONOP_SHARE_DIR="$src/share/neuronop"

# median_ms RUNS [--before SHELL] -- COMMAND...: median wall time of COMMAND in ms, timed by
# bench/timeit.pl (fork + exec, no shell in the timing).
median_ms() { perl "$src/bench/timeit.pl" "$@"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
check() { # check NAME OK-CONDITION (awk expression over $1)
    if awk -v v="$2" "BEGIN { exit !($3) }"; then echo "  [ok]   $1"; else echo "  [MISS] $1"; fi
}

echo "== neuronop build (example: relu, standard accessor; $(nproc) CPUs)"
ex="$src/share/neuronop/examples/relu"
cp -R "$ex" "$work/relu"
rm -rf "$work/relu/build"
t_cold=$(median_ms 21 --before "rm -rf '$work/relu/build'" -- "$neuronop" build "$work/relu")
t_o0=$(median_ms 11 -- gcc -O0 -shared -fPIC -I"$src/share/neuronop/include" -o "$work/o0.so" \
    "$work/relu/relu.c" "$work/relu/shape.c")
t_o2=$(median_ms 11 -- gcc -O2 -shared -fPIC -I"$src/share/neuronop/include" -o "$work/o2.so" \
    "$work/relu/relu.c" "$work/relu/shape.c")
"$neuronop" build "$work/relu" >/dev/null
t_hot=$(median_ms 51 -- "$neuronop" build "$work/relu")
t_floor=$(median_ms 51 -- "$neuronop" --version)
echo "  cold build (whole process):        $t_cold ms"
echo "  gcc -O0 -shared -fPIC, same files: $t_o0 ms   ratio gcc-O0/neuronop: $(ratio "$t_o0" "$t_cold")x"
echo "  gcc -O2 -shared -fPIC, same files: $t_o2 ms   ratio gcc-O2/neuronop: $(ratio "$t_o2" "$t_cold")x"
echo "  up-to-date check (whole process):  $t_hot ms   (of which starting neuronop: $t_floor ms)"
check "cold build at least 10x faster than gcc -O0" "$(ratio "$t_o0" "$t_cold")" 'v >= 10'
check "up-to-date check under 5 ms" "$t_hot" 'v < 5'
