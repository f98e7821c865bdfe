#!/bin/sh
# Every shipped example passes its own test cases (`neuronop test`, every core order and
# count), built in place as a user would build it: one TAP test per example, with the
# command's report shown under it when it fails.
. ./lib.sh

for m in "$EXAMPLES"/*/neuronop.yaml; do
    ex=$(dirname "$m")
    test_expect "neuronop test ${ex#"$NEURONOP_SRC"/}" '
        run test "'"$ex"'"
        expect_status 0
        expect_out ", 0 failed"'
done

test_done
