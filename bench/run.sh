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

echo "== the device in a worker process (issue: no kernel can crash or fool neuronop)"
cp -R "$src/share/neuronop/examples/relu_tcm" "$work/rt"
rm -rf "$work/rt/build"
"$neuronop" build "$work/rt" >/dev/null
t_iso=$(median_ms 31 -- "$neuronop" run "$work/rt" relu_forward randn:32x4096)
t_in=$(NEURONOP_SANDBOX=off perl "$src/bench/timeit.pl" 31 -- "$neuronop" run "$work/rt" \
    relu_forward randn:32x4096)
echo "  neuronop run, TCM relu 32x4096: in a worker $t_iso ms, in-process $t_in ms"
check "the worker adds at most 1 ms to a whole neuronop run" \
    "$(awk -v a="$t_iso" -v b="$t_in" 'BEGIN { print a - b }')" 'v <= 1'
for d in "$src"/share/neuronop/examples/*/neuronop.yaml; do
    n=$(basename "$(dirname "$d")")
    cp -R "$(dirname "$d")" "$work/ex-$n"
    rm -rf "$work/ex-$n/build"
    "$neuronop" build "$work/ex-$n" >/dev/null
done
all_tests="for d in $work/ex-*; do $neuronop test \$d || exit 1; done"
t_tiso=$(median_ms 3 -- sh -c "$all_tests")
t_tin=$(NEURONOP_SANDBOX=off perl "$src/bench/timeit.pl" 3 -- sh -c "$all_tests")
echo "  neuronop test on every example: in workers $t_tiso ms, in-process $t_tin ms;" \
    "ratio $(awk -v a="$t_tiso" -v b="$t_tin" 'BEGIN { printf "%.2f", a / b }')x"
check "neuronop test on every example at most 1.2x in workers" \
    "$(awk -v a="$t_tiso" -v b="$t_tin" 'BEGIN { print a / b }')" 'v <= 1.2'
host_tp() { # host throughput of the TCM relu from neuronop bench, interleaved runs
    "$@" bench "$work/rt" relu_forward randn:32x4096 --warmup 5 --iters 200 2>/dev/null |
        sed -n 's/^host throughput (iter\/sec): //p'
}
b_iso=0 b_in=0
for _ in 1 2 3; do
    b_iso=$(awk -v a="$b_iso" -v b="$(host_tp "$neuronop")" 'BEGIN { print (b > a) ? b : a }')
    b_in=$(awk -v a="$b_in" -v b="$(host_tp env NEURONOP_SANDBOX=off "$neuronop")" \
        'BEGIN { print (b > a) ? b : a }')
done
echo "  bench host throughput, TCM relu (best of 3): in a worker $b_iso, in-process $b_in;" \
    "ratio $(awk -v a="$b_iso" -v b="$b_in" 'BEGIN { printf "%.2f", a / b }')"
check "bench host figures within 10% in a worker" \
    "$(awk -v a="$b_iso" -v b="$b_in" 'BEGIN { print a / b }')" 'v >= 0.9 && v <= 1.1'

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

echo "== neuronop build of a C++ library (bench/kernels_cxx: TCM relu + NEURON_LIBRARY)"
cp -R "$src/bench/kernels_cxx" "$work/cxx"
rm -rf "$work/cxx/build"
t_cxx=$(median_ms 11 --before "rm -rf '$work/cxx/build'" -- "$neuronop" build "$work/cxx")
t_gxx=$(median_ms 11 -- g++ -O2 -shared -fPIC -std=c++14 -I"$src/share/neuronop/include" \
    -o "$work/cxx.so" "$work/cxx/relu.cpp" "$work/cxx/shape.cpp")
"$neuronop" build "$work/cxx" >/dev/null
t_cxx_hot=$(median_ms 51 -- "$neuronop" build "$work/cxx")
echo "  cold build (whole process):          $t_cxx ms"
echo "  g++ -O2 -shared -fPIC, same files:   $t_gxx ms   ratio neuronop/g++: $(ratio "$t_cxx" "$t_gxx")x"
echo "  up-to-date check (whole process):    $t_cxx_hot ms"
check "cold C++ build at most 1.2x bare g++ -O2 -shared" "$(awk -v a="$t_cxx" -v b="$t_gxx" 'BEGIN { print a / b }')" 'v <= 1.2'
check "C++ up-to-date check under 5 ms" "$t_cxx_hot" 'v < 5'
sh "$src/bench/cxx_elements.sh" "$neuronop" "$src" "$work"

echo "== Python: torch ops on the virtual device (neuronop python; see neuronop-python(1))"
cp -R "$src/share/neuronop/examples/mlp_python" "$work/mlp"
(cd "$work/mlp" && "$neuronop" python build.py)
"$neuronop" python "$src/bench/python_bridge.py" "$work/mlp"
echo "  (each call runs in the library's confined child, put back after it to the state it had"
echo "   when the library was loaded: the hops between Python, the supervisor and the child,"
echo "   and putting it back, are the cost; see neuronop-python(1))"
