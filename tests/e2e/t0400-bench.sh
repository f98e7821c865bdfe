#!/bin/sh
# neuronop bench: warm-up and timed runs, the host figures, the per-core table, --json, and
# every bad argument.
. ./lib.sh
copy_example relu_tcm "$WORK/relu"
copy_example relu_multicore "$WORK/mc"
cp -R "$NEURONOP_SRC/tests/fixtures/rules_mc" "$WORK/rules_mc"

test_expect "bench prints the host figures, the grep-able line and a table per core" '
    run bench relu relu_forward randn:4096 --iters 20 --warmup 2
    expect_status 0
    expect_out "relu_forward on trn1: 1 core (parallel, 1 host thread), 2 warm-up and 20 timed runs"
    expect_out "(a timed run is one launch of the op on the virtual device"
    expect_out "host time per run:"
    expect_out "(mean ± sd), median"
    expect_out "p90"
    expect_out "p99"
    grep -Eq "^host throughput \(iter/sec\): [0-9]+\.[0-9]+$" "$WORK/out"
    expect_out "per core, fastest run:"
    grep -Eq "^ +0 +0 +0 +32768 +8 " "$WORK/out"'

test_expect "--json has every figure; --iters sets the runs" '
    run bench relu relu_forward randn:4096 --iters 7 --json
    expect_status 0
    jq -e ".runs == 7 and .warmup == 10 and .cores == 1 and .device == \"trn1\" and
           .host.min <= .host.median and .host.median <= .host.max and
           .host.p90 <= .host.p99 and .host.throughput > 0 and
           .per_core[0].tcm_bytes == 32768 and .per_core[0].tcm_transfers == 8" "$WORK/out"
    # each core'\''s counters as run --json gives them (a docs audit found two missing)
    run run relu relu_forward randn:4096 --json
    jq -S ".cores[0] | del(.seconds) | keys" out >run.keys
    run bench relu relu_forward randn:4096 --iters 2 --json
    jq -S ".per_core[0] | del(.seconds, .modeled_cycles, .compute_seconds) | keys" out |
        diff run.keys -
    jq -e ".per_core[0].tcm_peak == 4096 and .per_core[0].failed == false" out'

test_expect "--time runs for a while instead of a count" '
    run bench relu relu_forward randn:64 --time 0.2 --warmup 0 --json
    expect_status 0
    jq -e ".runs > 1 and .warmup == 0" "$WORK/out"'

test_expect "multicore: every core in the table; --cores and -j are taken" '
    run bench mc relu_forward randn:1000 --iters 5 --cores 3 -j 1 --json
    expect_status 0
    jq -e ".cores == 3 and .threads == 1 and (.per_core | length) == 3" "$WORK/out"'

test_expect "the device options of run are taken, and -v shows the build" '
    rm -rf mc/build
    run bench mc relu_forward randn:1000 --iters 2 --schedule reversed --seed 3 --timeout 5 --no-check race --check streams -v
    expect_status 0
    expect_err "neuronop: note: compile (device)"
    run bench mc relu_forward randn:1000 --schedule backwards
    expect_status 2
    expect_err "neuronop bench: error: --schedule takes parallel, sequential, reversed or shuffle, not '\''backwards'\''"
    run bench mc relu_forward randn:1000 --no-check rase
    expect_status 2'

test_expect "a kernel that breaks a rule stops the benchmark with its message" '
    run bench rules_mc sample_relu randn:10 --iters 5
    expect_status 1
    expect_err "neuronop: sample_relu: core 7: error: nt_tensor_to_tcm(offset=21, n=3)"'

for bad in "--iters 0|--iters takes a whole number from 1 to 100000000, not '0'" \
    "--iters -3|--iters takes a whole number from 1 to 100000000, not '-3'" \
    "--time -1|--time takes a number from 0.001 to 86400, not '-1'" \
    "--warmup -1|--warmup takes a whole number from 0 to 1000000, not '-1'" \
    "--iters 5 --time 1|neuronop bench: error: give --iters or --time, not both"; do
    test_expect "bad arguments: ${bad%%|*}" '
        run bench relu relu_forward randn:64 '"${bad%%|*}"'
        expect_status 2
        expect_err "'"${bad#*|}"'"'
done

test_expect "an unknown profile and a bad op argument are usage errors" '
    run bench relu relu_forward randn:64 --device trn9
    expect_status 2
    expect_err "no device profile '\''trn9'\''"
    run bench relu relu_forward bogus:64
    expect_status 2
    expect_err "cannot read .npy file '\''bogus:64'\''"'

test_done
