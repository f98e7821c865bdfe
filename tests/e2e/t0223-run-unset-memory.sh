#!/bin/sh
# Memory the device leaves undefined (gpsimd.md, neuronop-api(3)): a TCM buffer when the
# kernel starts, and the elements of nt_empty.  Before, neuronop zeroed both, so a kernel that
# added into an accumulator it never cleared passed its tests, though on the device it adds
# to whatever was there.  Now such a read shows in the output (NaN), and the case fails.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/unset" "$WORK/u"
"$NEURONOP" build "$WORK/u" >/dev/null 2>&1

test_expect "a TCM accumulator never cleared fails its test; cleared, it passes" '
    run test u
    expect_status 1
    expect_out "FAIL  tcm_acc: the output differs from reference '\''plus_one'\''"
    expect_out "ok    tcm_acc_fixed"'

test_expect "adding into a tensor from nt_empty fails its test" '
    run test u -k empty_acc
    expect_status 1
    expect_out "FAIL  empty_acc: the output differs from reference '\''plus_one'\''"'

test_expect "a tensor from nt_empty returned unwritten is not zeros" '
    run test u -k empty_out
    expect_status 1
    expect_out "FAIL  empty_out: the output differs from reference '\''zeros_like'\''"
    run run u empty_out zeros:4
    expect_status 0
    expect_out "4 not finite"'

test_done
