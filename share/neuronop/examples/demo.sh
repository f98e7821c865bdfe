#!/bin/sh
# demo.sh - what `make demo` shows: build the three relu variants of the seed tutorial, run
# them on the same input, run the multicore one on a size the cores cannot split evenly (the
# size on which the public sample's version reads past the end), and bench all three, beside
# their C++ twins (relu_cxx, relu_tcm_cxx, relu_multicore_cxx: the tutorial's torch-style
# C++, built by g++).
# Usage: demo.sh NEURONOP
set -eu
neuronop=${1:-neuronop}
here=$(cd "$(dirname "$0")" && pwd)
for ex in relu relu_tcm relu_multicore relu_cxx relu_tcm_cxx relu_multicore_cxx; do
    echo "== neuronop build $ex"
    "$neuronop" build "$here/$ex"
    echo
done
for ex in relu relu_tcm relu_multicore; do
    echo "== neuronop run $ex relu_forward randn:32x4096"
    "$neuronop" run "$here/$ex" relu_forward randn:32x4096
    echo
done
echo "== relu_multicore on 10 elements: 8 cores cannot split them evenly (this kernel gives"
echo "   core 7 its remainder; the public sample, as written, copies past the end there)"
"$neuronop" run "$here/relu_multicore" relu_forward randn:10
echo
echo "== the seed tutorial's three relu variants in C and in C++, benched side by side (randn:32x4096)"
printf "%-20s %28s %32s\n" variant "host throughput (iter/sec)" "modeled throughput (iter/sec)"
for ex in relu relu_tcm relu_multicore relu_cxx relu_tcm_cxx relu_multicore_cxx; do
    out=$("$neuronop" bench "$here/$ex" relu_forward randn:32x4096 --iters 20 2>/dev/null)
    host=$(printf "%s\n" "$out" | sed -n "s/^host throughput (iter\/sec): //p")
    model=$(printf "%s\n" "$out" | sed -n "s/^modeled throughput (iter\/sec): //p")
    printf "%-20s %28s %32s\n" "$ex" "$host" "$model"
done
