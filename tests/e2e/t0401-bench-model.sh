#!/bin/sh
# The cost model: its arithmetic from the profile's costs, and the default trn1 profile
# reproducing the seed tutorial's relu figures on the shipped examples (about 610 ns per
# element with the standard accessor, 4.8 ns through TCM on one core, close to 1/8 of that
# on 8 cores): per-element costs within 1.5x and the ratio within 2x.  Ten timed runs each
# (forty on 8 cores): the modeled compute term is scaled from the fastest, which a loaded
# machine disturbs.
. ./lib.sh
for ex in relu relu_tcm relu_multicore; do copy_example $ex "$WORK/$ex"; done

# per_element EX: modeled ns per element of relu_forward over 32x4096 on example EX.  The
# multicore example gets more timed runs: its 8 cores share the host's 2 CPUs with whatever
# else runs, so a burst of load reaches more of its runs (it is also the quickest to run).
# Under the sanitizers, the best of three processes: now and then a sanitized neuronop runs
# its cores two to four times slower for its whole life (1 process in 12 here; the plain
# build, never in 15), which no number of timed runs within it evens out.
per_element() {
    iters=10
    [ "$1" = relu_multicore ] && iters=40
    best=
    for _ in $([ -n "${NEURONOP_SANITIZED:-}" ] && echo 1 2 3 || echo 1); do
        "$NEURONOP" bench "$1" relu_forward randn:32x4096 --iters $iters --warmup 2 --json \
            >"$1.try.json"
        ns=$(jq ".modeled.seconds * 1e9 / 131072" "$1.try.json")
        if [ -z "$best" ] || awk -v a="$ns" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$ns
            mv "$1.try.json" "$1.json"
        fi
    done
    echo "$best"
}
within() {   # within VALUE TARGET FACTOR
    awk -v v="$1" -v t="$2" -v f="$3" 'BEGIN { exit !(v >= t / f && v <= t * f) }' ||
        { echo "$1 is not within ${3}x of $2"; return 1; }
}

test_expect "the model adds up: counted actions times the profile's costs" '
    per_element relu_tcm >/dev/null
    jq -e "(.per_core[0].tcm_transfers * 700 + .per_core[0].tcm_bytes / 1.75) as \$tcm |
           (.modeled.categories.tcm - \$tcm | fabs) < 1 and
           .modeled.categories.launch == 14000 and
           (.modeled.cycles - (14000 + .per_core[0].modeled_cycles) | fabs) < 1 and
           (.modeled.seconds * 1.4e9 / .modeled.cycles - 1 | fabs) < 1e-6" relu_tcm.json
    per_element relu >/dev/null
    jq -e ".modeled.categories.standard_accessor == .per_core[0].std_elems * 427" relu.json'

test_expect "standard accessor relu: about 610 ns per element (within 1.5x)" '
    std=$(per_element relu)
    within "$std" 610 1.5'

test_expect "TCM relu: about 4.8 ns per element (within 1.5x); the ratio near 127 (within 2x)" '
    std=$(per_element relu)
    tcm=$(per_element relu_tcm)
    within "$tcm" 4.8 1.5
    within "$(awk -v a="$std" -v b="$tcm" "BEGIN { print a / b }")" 127 2'

test_expect "8 cores: close to 1/8 of the TCM figure (within 1.5x)" '
    mc=$(per_element relu_multicore)
    within "$mc" 0.6 1.5'

test_expect "modeled order: standard < TCM < multicore in throughput" '
    per_element relu >/dev/null
    per_element relu_tcm >/dev/null
    per_element relu_multicore >/dev/null
    a=$(jq .modeled.throughput relu.json)
    b=$(jq .modeled.throughput relu_tcm.json)
    c=$(jq .modeled.throughput relu_multicore.json)
    awk -v a="$a" -v b="$b" -v c="$c" "BEGIN { exit !(a < b && b < c) }"'

test_expect "the human output has the modeled line, the category table and the stability note" '
    run bench relu_tcm relu_forward randn:4096 --iters 3
    expect_status 0
    grep -Eq "^modeled throughput \(iter/sec\): [0-9]+\.[0-9]+$" "$WORK/out"
    expect_out "modeled device time per run:"
    expect_out "(the modeled figures count every access and copy exactly; kernel compute,"
    expect_out "profile by category, all cores, fastest run:"
    expect_out "  TCM copies                      8"
    expect_out "  launch                          1"'

# nt_zeros and nt_eye write every element as nt_full does, and were counted as no call at all
# (device-rules tester): bench showed the relu example making no tensor-library call.
mkdir -p "$WORK/fac"
cat >"$WORK/fac/k.c" <<'K'
#include <neuronop.h>
nt_tensor *zeros_k(const nt_tensor *t) { (void)t; return nt_zeros(NT_SHAPE(30, 40), NT_F32); }
nt_tensor *full_k(const nt_tensor *t) { (void)t; return nt_full(NT_SHAPE(30, 40), nt_scalar_i(0), NT_F32); }
nt_tensor *eye_k(const nt_tensor *t) { (void)t; return nt_eye(30, 40, NT_F32); }
K
printf '#include <neuronop.h>\nnt_tensor *shape(const nt_tensor *t) { (void)t; return nt_empty(NT_SHAPE(30, 40), NT_F32); }\n' \
    >"$WORK/fac/s.c"
printf 'name: fac\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\nops:\n  zeros: {args: [tensor], shape: shape, kernel: zeros_k}\n  full: {args: [tensor], shape: shape, kernel: full_k}\n  eye: {args: [tensor], shape: shape, kernel: eye_k}\n' \
    >"$WORK/fac/neuronop.yaml"
for op in zeros full eye; do
    test_expect "nt_$op counts one tensor-library call writing all 1200 elements" '
        run run fac '"$op"' zeros:1 --json
        expect_status 0
        jq -e ".cores[0].tensorlib_calls == 1 and .cores[0].tensorlib_elems == 1200" out >/dev/null'
done

test_done
