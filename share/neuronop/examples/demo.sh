#!/bin/sh
# demo.sh - what `make demo` shows: build the shipped relu examples and describe them.
# Usage: demo.sh NEURONOP
set -eu
neuronop=${1:-neuronop}
here=$(cd "$(dirname "$0")" && pwd)
for ex in relu relu_tcm relu_multicore; do
    echo "== neuronop build $ex"
    "$neuronop" build "$here/$ex"
    echo
done
echo "== neuronop inspect relu_multicore (its self-description)"
"$neuronop" inspect "$here/relu_multicore"
