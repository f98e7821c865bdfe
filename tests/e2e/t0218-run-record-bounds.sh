#!/bin/sh
# What a worker sends is bounded before the parent allocates for it (issue 20): a record
# header claiming 3 GiB costs neuronop only the bytes that came (with 1 GiB of address space,
# neuronop reads on until the worker ends: exit 1, not an out-of-memory kill), and a shape function that keeps rewriting its phase page cannot
# postpone its deadline: the request's limit comes from --timeout alone.
. ./lib.sh
. ./hostile_parent.sh
cp -R "$NEURONOP_SRC/tests/fixtures/hostile" "$WORK/h"
"$NEURONOP" build "$WORK/h" >/dev/null 2>&1

test_expect "a record header claiming 3 GiB costs only the bytes that came" '
    # 1 GiB of address space, where allocating the claim would fail (not under
    # AddressSanitizer, whose shadow memory needs far more)
    if [ -z "${NEURONOP_SANITIZED:-}" ]; then ulimit -v 1048576; fi
    run run hp attack zeros:22
    expect_status 1
    expect_err "neuronop: attack: shape function '\''attack'\'': error: user code ended the device process (exit status 0)"'

test_expect "a forged phase page does not postpone run --timeout 1 past its limit" '
    start=$(date +%s)
    run run h shape_forges zeros:4 --timeout 1
    expect_status 1
    expect_err "neuronop: shape_forges: shape function '\''shape_forges'\'': error: "
    test $(($(date +%s) - start)) -lt 20'

test_expect "a worker cannot send the record only neuronop makes (printf text lost)" '
    run run hp attack zeros:30
    expect_status 1
    if grep -q overflowed err; then exit 1; fi'

test_done
