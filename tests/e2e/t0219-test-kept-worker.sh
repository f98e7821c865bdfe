#!/bin/sh
# `neuronop test` runs each case, its kernels and its reference, in a fresh worker: no case
# finds a global, heap block, signal handler, descriptor, mapping or heap end that an earlier
# case left (the keptstate fixture's shape functions, which also run with the references,
# leave each and look for the others'), nor the mark one reference leaves in its worker that
# a worker put back between cases would keep (a default signal's flags: ref_marks and
# ref_finds).  In neuronop's own process (the sandbox off), where nothing is put back, the
# same cases find what the earlier ones left: each check can fail.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/keptstate" "$WORK/ks"
"$NEURONOP" build "$WORK/ks" >/dev/null 2>&1

test_expect "no state an earlier case left reaches a later one, reference or kernel; no process is left" '
    run_alone test ks
    expect_status 0
    for t in globals handler fds maps heap_end; do
        for n in 1 2 3; do
            expect_out "ok    $t[zeros:$n] (5 executions"
        done
    done
    expect_out "ok    ref_marks (5 executions"
    expect_out "ok    ref_finds (5 executions"
    expect_out "20 passed, 0 failed"'

test_expect "each execution of a case starts with its cores' TCM as a new device has it" '
    run_alone test ks -k tcm
    expect_status 0
    for n in 1 2 3; do
        expect_out "ok    tcm[zeros:$n] (5 executions"
    done
    NEURONOP_SANDBOX=off "$NEURONOP" test ks -k tcm >out 2>err
    grep -q "^3 passed, 0 failed" out'

test_expect "in neuronop itself the same cases find what the earlier ones left" '
    NEURONOP_SANDBOX=off "$NEURONOP" test ks >out 2>err || true
    grep -q "^ok    globals\[zeros:1\]" out
    for t in globals handler fds maps heap_end; do
        grep -q "^FAIL  $t\[zeros:2\]: a device rule was broken" out
    done
    grep -q "^FAIL  ref_finds: the output differs from reference '\''plus_one_unless_marked'\''" out'

test_done
