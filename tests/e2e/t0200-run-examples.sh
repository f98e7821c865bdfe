#!/bin/sh
# neuronop run on every shipped example, each output checked against values computed by an
# independent implementation (npy.pl, in Perl).
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }

# values FILE: the values of a .npy file, space-separated
values() { npy read "$1" | tail -n +2 | tr '\n' ' ' | sed 's/ $//'; }
# same GOT WANT: equal and not empty (an empty string on both sides proves nothing)
same() { [ -n "$1" ] && [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }; }

test_expect "relu (standard accessor) zeroes the negatives" '
    npy write in.npy "<f4" 2x3 1.5 -2 0 -0.25 3 -7
    run run "$EXAMPLES/relu" relu_forward in.npy -o out.npy
    expect_status 0
    expect_out "relu_forward: ok on 1 core"
    expect_out "output: 2x3 float32"
    same "$(values out.npy)" "1.5 0 0 0 3 0"'

test_expect "relu_backward passes the gradient where the input was positive" '
    npy write g.npy "<f4" 2x2 10 20 30 40
    npy write x.npy "<f4" 2x2 1 -1 0 2
    run run "$EXAMPLES/relu" relu_backward g.npy x.npy -o out.npy
    expect_status 0
    same "$(values out.npy)" "10 0 0 40"'

for ex in relu_tcm relu_multicore; do
    test_expect "$ex agrees with the standard-accessor relu on 32x4096 random values" '
        run run "$EXAMPLES/relu" relu_forward randn:32x4096 --seed 7 -o ref.npy
        expect_status 0
        run run "$EXAMPLES/'"$ex"'" relu_forward randn:32x4096 --seed 7 --expect ref.npy --atol 0 --rtol 0
        expect_status 0
        expect_out "matches '\''ref.npy'\''"'
done

test_expect "relu_multicore runs on 8 cores and handles sizes not divisible by 8" '
    npy write in.npy "<f4" 10 -1 2 -3 4 -5 6 -7 8 -9 10
    run run "$EXAMPLES/relu_multicore" relu_forward in.npy -o out.npy
    expect_status 0
    expect_out "ok on 8 cores"
    same "$(values out.npy)" "0 2 0 4 0 6 0 8 0 10"'

test_expect "relu_multicore gives the same answer on 1, 3 and 8 cores, in every order" '
    run run "$EXAMPLES/relu_tcm" relu_forward randn:1023 -o ref.npy
    expect_status 0
    for cores in 1 3 8; do
        for order in parallel sequential reversed shuffle; do
            run run "$EXAMPLES/relu_multicore" relu_forward randn:1023 --cores $cores \
                --schedule $order --expect ref.npy --atol 0 --rtol 0
            expect_status 0
            expect_out "ok on $cores core"
        done
    done'

test_expect "negate (standard accessor) negates" '
    npy write in.npy "<f4" 2x2 1 -2 3.5 0
    run run "$EXAMPLES/negate" negate in.npy -o out.npy
    expect_status 0
    same "$(values out.npy)" "-1 2 -3.5 0"'

test_expect "add (streaming accessors) adds" '
    npy write a.npy "<f4" 4 1 2 3 4
    npy write b.npy "<f4" 4 10 20 30 40.5
    run run "$EXAMPLES/add" add a.npy b.npy -o out.npy
    expect_status 0
    same "$(values out.npy)" "11 22 33 44.5"'

test_expect "softclip (tensor library) computes clamp(exp(x), 0, limit) + alpha * x" '
    npy write x.npy "<f4" 4 0 1 -1 3
    run run "$EXAMPLES/softclip" softclip x.npy 10 0.5 -o out.npy
    expect_status 0
    perl -e '\''use POSIX; my @x=(0,1,-1,3); print join(" ", map { my $e=exp($_); $e=10 if $e>10; 0+sprintf("%.6g", unpack("f", pack("f", $e + 0.5*$_))) } @x), "\n"'\'' >want
    same "$(values out.npy)" "$(cat want)"'

test_expect "printf_debug shows the kernel printf output after the op" '
    npy write t.npy "<f4" 2x3 1 2 3 4 5 6
    run run "$EXAMPLES/printf_debug" row_sums t.npy -o out.npy
    expect_status 0
    expect_out "kernel printf output:"
    expect_out "row_sums: 2 x 3"
    expect_out "  row 1: sum 15.0000, running total 21.0000"
    same "$(values out.npy)" "6 15"'

test_expect "scale_bf16 scales a bfloat16 tensor and keeps bfloat16" '
    npy write x.npy "<V2" 4 1.5 -2 0.333 100
    run run "$EXAMPLES/scale_bf16" scale x.npy 2 -o out.npy
    expect_status 0
    expect_out "output: 4 bfloat16"
    npy read out.npy >got
    head -1 got | grep -q "^<V2 4$"
    same "$(values out.npy)" "3 -4 0.664062 200"'

test_expect "--json reports output, printf and per-core counters" '
    run run "$EXAMPLES/relu_tcm" relu_forward randn:4096 --json
    expect_status 0
    jq -e ".ok == true and .output.shape == [4096] and .output.dtype == \"float32\" and
           (.cores | length) == 1 and .cores[0].tcm_bytes == 32768 and
           .cores[0].tcm_transfers == 8 and .cores[0].stack_high_water > 0" "$WORK/out"'

test_expect "the standard accessor counts one access per element" '
    run run "$EXAMPLES/relu" relu_forward randn:8x8 --json
    jq -e ".cores[0].std_elems == 128" "$WORK/out"'

# a Python user's find: these read their inputs' bytes as the dtype they expect, or b only
# as far as a goes, and gave garbage with no error; their shape functions now refuse
test_expect "examples refuse inputs their kernels cannot compute, rather than give garbage" '
    for args in "relu_tcm relu_forward randn:8:bf16" "relu_multicore relu_forward randn:8:f16" \
                "scale_bf16 scale randn:8 0.5" "add add randn:7 randn:10" \
                "add_cxx add randn:3x2 randn:2x3"; do
        set -- $args
        lib=$1
        shift
        run run "$EXAMPLES/$lib" "$@"
        expect_status 1
        grep -q "shape function .*: error: assertion failed: .*\"\(.* takes a .* tensor\|a and b must have one shape: add does not broadcast\)\"" err ||
            { echo "$lib:"; cat err; exit 1; }
    done'

test_done
