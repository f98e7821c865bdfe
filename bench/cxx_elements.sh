#!/bin/sh
# bench/cxx_elements.sh - what C++ accessor elements as references (issue 17) cost, for
# bench/run.sh: the standard-accessor relu_cxx built with today's torch/torch.h against the
# same kernel built with the header from before the change (elements were proxies: one runtime
# call per read and one per write), measured interleaved in this run; and each C++ relu's
# modeled device time against its C twin's (the cost model must see every access), and the
# same for out[i] += x and out[i] = std::max(out[i], c) (tests/fixtures/cxx/refs/twins.cpp
# against its C twin, tests/fixtures/cxx/refs_c: a read and a write each).
# Usage: bench/cxx_elements.sh NEURONOP SRC WORK
set -eu
neuronop=$1 src=$2 work=$3
base=eb9f3aa   # the last commit with the proxy elements

lib() { echo "$1"/build/lib*.so; }   # a built library: benched as it is, never rebuilt
tp() { # best host throughput of library LIB's relu_forward (1000 / its fastest run in ms):
       # the fastest of 20 runs is the least disturbed by the machine's other work
    "$neuronop" bench "$1" relu_forward randn:32x4096 --threads 1 --warmup 2 --iters 20 \
        2>/dev/null | awk '/^  min / { printf "%.2f", 1000 / $2 }'
}
modeled() { # "TOTAL ACCESS": modeled device time per run (us), and its cycles without the
            # kernel's compute (launch, accessors, copies, library: counted, not timed), of
            # LIB's OP (relu_forward) on INPUT (randn:32x4096)
    "$neuronop" bench "$1" "${2:-relu_forward}" "${3:-randn:32x4096}" --warmup 1 --iters 3 \
        2>/dev/null | awk '
        /^modeled device time per run:/ { total = $6 }
        /^  category/ { on = 1; next }
        /^per core/ { on = 0 }
        on && $0 !~ /kernel compute/ { access += $NF }
        END { print total, access }'
}
ratio2() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
check() {
    if awk -v v="$2" "BEGIN { exit !($3) }"; then echo "  [ok]   $1"; else echo "  [MISS] $1"; fi
}

echo "== C++ accessor elements are references (relu_cxx, standard accessor, 32x4096, 1 core)"
cp -R "$src/share/neuronop/examples/relu_cxx" "$work/el-new"
rm -rf "$work/el-new/build"
"$neuronop" build "$work/el-new" >/dev/null
if git -C "$src" cat-file -e "$base" 2>/dev/null; then
    cp -R "$src/share/neuronop" "$work/el-share"
    rm -rf "$work/el-share/include/torch"
    mkdir -p "$work/el-tree"
    git -C "$src" archive "$base" share/neuronop/include/torch | tar -x -C "$work/el-tree"
    cp -R "$work/el-tree/share/neuronop/include/torch" "$work/el-share/include/torch"
    # the build gives every torch source today's standard headers first (-include std.h),
    # which the old tree did not have: only the element classes are to differ
    mkdir -p "$work/el-share/include/torch/detail"
    cp "$src/share/neuronop/include/torch/detail/std.h" "$work/el-share/include/torch/detail/"
    cp -R "$src/share/neuronop/examples/relu_cxx" "$work/el-old"
    rm -rf "$work/el-old/build"
    NEURONOP_SHARE_DIR="$work/el-share" "$neuronop" build "$work/el-old" >/dev/null
    new=0 old=0
    for _ in 1 2 3; do
        new=$(awk -v a="$new" -v b="$(tp "$(lib "$work/el-new")")" \
            'BEGIN { print (b > a) ? b : a }')
        old=$(awk -v a="$old" -v b="$(tp "$(lib "$work/el-old")")" \
            'BEGIN { print (b > a) ? b : a }')
    done
    echo "  host throughput (fastest run of 3x20): references $new iter/s, proxies ($base)" \
        "$old iter/s;" \
        "ratio $(ratio2 "$new" "$old")x"
    echo "  the mechanism: one checked, counted runtime call per element reference (a[i][j]);" \
        "v = in[i][j]; out[i][j] = f(v) makes 2, as the proxies' get and set did"
    check "C++ standard-accessor relu at least the proxies' host throughput (5% noise allowed)" \
        "$(ratio2 "$new" "$old")" 'v >= 0.95'
else
    echo "  (no git history at $src: the proxy header's build is not measured)"
fi
for pair in relu:relu_cxx relu_tcm:relu_tcm_cxx relu_multicore:relu_multicore_cxx; do
    c=${pair%%:*} x=${pair#*:}
    for d in "$c" "$x"; do
        [ -d "$work/el-$d" ] || { cp -R "$src/share/neuronop/examples/$d" "$work/el-$d"
            rm -rf "$work/el-$d/build"; "$neuronop" build "$work/el-$d" >/dev/null; }
    done
    set -- $(modeled "$(lib "$work/el-$c")") $(modeled "$(lib "$work/el-$x")")
    echo "  modeled: $x $3 us per run, its C twin $c $1 us (ratio $(ratio2 "$3" "$1")x; the"
    echo "    kernel's compute is timed on this busy host); without compute $4 and $2 cycles"
    check "$x's modeled accesses, copies and launch within 2% of $c's" "$(ratio2 "$4" "$2")" \
        'v >= 0.98 && v <= 1.02'
done
cp -R "$src/tests/fixtures/cxx/refs_c" "$work/el-acc-c"
cp -R "$src/tests/fixtures/cxx/refs" "$work/el-acc-cxx"
rm -rf "$work/el-acc-c/build" "$work/el-acc-cxx/build"
"$neuronop" build "$work/el-acc-c" >/dev/null
"$neuronop" build "$work/el-acc-cxx/twins.yaml" >/dev/null
for op in accumulate accumulate_zeros; do
    set -- $(modeled "$(lib "$work/el-acc-c")" $op randn:65536) \
        $(modeled "$work/el-acc-cxx/build/libcxx_refs_twins.so" $op randn:65536)
    echo "  modeled: C++ $op (out[i] += x, std::max) $3 us per run, its C twin $1 us (ratio" \
        "$(ratio2 "$3" "$1")x); without compute $4 and $2 cycles"
    check "C++ $op's modeled accesses within 2% of its C twin's" "$(ratio2 "$4" "$2")" \
        'v >= 0.98 && v <= 1.02'
done
