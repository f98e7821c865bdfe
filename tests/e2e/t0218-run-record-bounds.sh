#!/bin/sh
# What a worker sends is bounded before the parent allocates for it (issue 20): a record
# header claiming 3 GiB costs neuronop only the bytes that came (with 1 GiB of address space,
# neuronop reads on until the worker ends: exit 1, not an out-of-memory kill), and a shape
# function that keeps rewriting its phase page cannot postpone its deadline: the request's
# limit comes from --timeout and the op's cores alone.
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

# The limit of a request is its runs' phases, each core's time in turn: a single-core op's
# had the device's eight (a red team's find: 18 s, and a test case 49 s, where TRUST says
# 11 and 28).  The shape function blocks every signal and sleeps: no CPU spent waiting.
test_expect "a single-core run that says it is past its cores ends within the bound TRUST gives" '
    start=$(date +%s)
    run run h shape_stalls zeros:4 --timeout 1
    expect_status 1
    expect_err "neuronop: shape_stalls: shape function '\''shape_stalls'\'': error: timeout"
    test $(($(date +%s) - start)) -lt 15'

test_expect "so does a test case of it, for each of its executions" '
    printf "  - {name: stalls, op: shape_stalls, args: [zeros:4]}\n" >>h/neuronop.yaml
    start=$(date +%s)
    run test h -k stalls --schedules 0 --timeout 1
    expect_status 1
    expect_out "FAIL  stalls"
    test $(($(date +%s) - start)) -lt 33'

test_expect "a worker cannot send the record only neuronop makes (printf text lost)" '
    run run hp attack zeros:30
    expect_status 1
    if grep -q overflowed err; then exit 1; fi'

test_done
