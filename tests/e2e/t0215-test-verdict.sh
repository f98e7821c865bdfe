#!/bin/sh
# The verdict of `neuronop test` is made by neuronop, never by user code (issue 20): a shape
# function that writes the records of passing executions and "done", then ends its process
# before its wrong kernel runs, fails its case; a wrong kernel fails against its reference,
# which runs in another worker; records a case sends after a forged end of its answer never
# answer the next case (each request has a record pipe of its own); and no state a case
# leaves in the library (a global) reaches the next case, whose worker was put back to the
# library's loaded state.
. ./lib.sh
. ./hostile_parent.sh

test_expect "forged records of passing executions fail the case; the summary is neuronop's" '
    run test hp -k forged
    expect_status 1
    expect_out "FAIL  forged: forges_pass: the device process sent no output for sequential"
    expect_out "0 passed, 1 failed, 6 skipped"'

test_expect "a wrong kernel fails against its reference; a right one passes" '
    run test hp -k _answer
    expect_status 1
    expect_out "FAIL  wrong_answer: the output differs from reference '\''zeros_ref'\''"
    expect_out "ok    right_answer (5 executions"
    expect_out "1 passed, 1 failed, 5 skipped"'

test_expect "records a case sends after a forged end never answer the next case" '
    run test hp -k shifted_ --schedules 0
    expect_status 1
    expect_out "FAIL  shifted_first: "
    expect_out "FAIL  shifted_second: the output differs from reference '\''zeros_ref'\''"
    expect_out "0 passed, 2 failed"'

test_expect "a library global one case sets does not reach the next case" '
    run test hp -k state_ --schedules 0
    expect_status 0
    expect_out "ok    state_poisoner (3 executions"
    expect_out "ok    state_innocent (3 executions"
    expect_out "2 passed, 0 failed"'

test_expect "in neuronop itself a case'\''s global reaches the next (what the worker prevents)" '
    NEURONOP_SANDBOX=off "$NEURONOP" test hp -k state_ --schedules 0 >out 2>err || true
    grep -q "ok    state_poisoner" out
    grep -q "FAIL  state_innocent" out'

test_done
