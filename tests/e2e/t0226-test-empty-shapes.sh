#!/bin/sh
# An output must have the expected shape and dtype even when it has no elements: an int32
# [7, 0] against a float32 [0, 7] expect file or reference fails, as torch.testing.assert_close
# refuses it.  Before (a red team's finding), a shape difference counted as max(numel)
# mismatches, 0 when both are empty, and the case passed.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }

cp -r "$NEURONOP_SRC/tests/fixtures/emptyshape" "$WORK/es"
npy write "$WORK/es/want.npy" '<f4' 0x7

test_expect "torch refuses an int32 [7, 0] for a float32 [0, 7]" '
    torch_says "import torch
try:
    torch.testing.assert_close(torch.zeros(7, 0, dtype=torch.int32), torch.zeros(0, 7))
    print(\"close\")
except AssertionError:
    print(\"not close\")" >said
    grep -qx "not close" said'

test_expect "an empty output of another shape fails against the expect file" '
    run test es -k against_file
    expect_status 1
    expect_out "FAIL  against_file"'

test_expect "an empty output of another shape fails against the reference" '
    run test es -k against_reference
    expect_status 1
    expect_out "FAIL  against_reference"'

test_done
