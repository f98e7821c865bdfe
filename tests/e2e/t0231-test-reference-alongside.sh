#!/bin/sh
# A case's reference runs in its own worker while the case's executions run in theirs, and is
# heard after them (neuronop-test(1)): when the executions break a device rule, a reference
# that never returns holds up neither the verdict (FAIL, the rule's message) nor the next
# case, and its worker is gone when neuronop is, and as soon as it is given up (not left to
# compute beside later cases that have no reference); a reference heard in its turn is still
# held to its own time limit.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/refalong" "$WORK/ra"
(cd "$WORK" && "$NEURONOP" build ra >/dev/null 2>&1)

# --timeout 600 would give the spinning reference ten minutes: waited for, it is killed at 60 s
test_expect "a rule broken by the executions is the verdict at once; the next case runs clean" '
    status=0
    in_session "$WORK/.sid" timeout 60 "$NEURONOP" test ra -k quick --timeout 600 \
        >"$WORK/out" 2>"$WORK/err" || status=$?
    left=$(session_left "$(cat "$WORK/.sid")")
    [ -z "$left" ] || echo "left behind:$left"
    [ -z "$left" ]
    expect_status 1
    expect_out "FAIL  quick_broken_kernel: a device rule was broken under sequential"
    expect_out "out_of_range: core 0: nt_get_f32: index 4 of dimension 1 is out of range"
    expect_out "ok    quick_honest_next (5 executions"
    expect_out "1 passed, 1 failed, 3 skipped"
    if grep -q "spinning_ref" "$WORK/out" "$WORK/err"; then exit 1; fi'

test_expect "a reference that never returns is stopped at its own time limit" '
    run_alone test ra -k alone --timeout 1
    expect_status 1
    expect_out "ERROR spinning_ref_alone: its reference function '\''spinning_ref'\'' failed: timeout: the reference function ran for more than 1 s and was stopped"
    expect_out "0 passed, 1 failed, 4 skipped"'

# the given-up reference spins: were it left running, it would have used a second of CPU, as
# the next case's busy kernel has, while that case runs (one process so busy, not two)
test_expect "a reference given up is killed then, not left beside the next case" '
    rm -f "$WORK/.sid"
    in_session "$WORK/.sid" "$NEURONOP" test ra -k gone_ --timeout 600 --schedules 0 \
        >"$WORK/out" 2>"$WORK/err" &
    while [ ! -f "$WORK/.sid" ]; do sleep 0.05; done
    sid=$(cat "$WORK/.sid")
    most=0
    while [ -n "$(session_left "$sid")" ]; do
        busy=$(ps -eo sid=,times=,stat= | awk -v s="$sid" "\$1 == s && \$2 >= 1 && \$3 !~ /^Z/" |
               wc -l)
        [ "$busy" -le "$most" ] || most=$busy
        sleep 0.1
    done
    wait || true
    [ "$most" -le 1 ] || { echo "$most processes busy at once"; exit 1; }
    expect_out "FAIL  gone_broken_kernel: a device rule was broken under sequential"
    expect_out "ok    gone_busy_next (3 executions"
    expect_out "1 passed, 1 failed, 3 skipped"'

test_done
