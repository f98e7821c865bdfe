#!/bin/sh
# The verdict of `neuronop test` is made by neuronop, never by user code (issue 20): a shape
# function that writes the records of passing executions and "done", then ends its process
# before its wrong kernel runs, fails its case; a wrong kernel fails against its reference,
# which runs in another worker; records a case sends after a forged end of its answer never
# answer the next case (each request has a record pipe of its own); and no state a case
# leaves in the library (a global) reaches the next case, which gets fresh workers from
# zygotes that ran no user code; and a library committed beside its sources is never taken
# as built from them.
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

# A hostile pull request can commit build/ too: a library built from right sources, beside
# wrong ones, with a stamp carrying the key neuronop computes for the wrong ones (the key
# hashes inputs anyone can read).  The stamp also names the file it was made for by device,
# inode and change time, which no author sets, so the library is rebuilt from the sources.
test_expect "a library and stamp that came with wrong sources are rebuilt, not trusted" '
    copy_example relu lib
    "$NEURONOP" build lib >/dev/null
    cp lib/build/librelu.so right.so
    cp lib/build/librelu.so.stamp right.stamp
    sed "s/v > 0.0f ? v : 0.0f/v/" lib/relu.c >relu.c.wrong
    mv relu.c.wrong lib/relu.c
    "$NEURONOP" build lib >/dev/null
    key=$(sed -n "s/^key //p" lib/build/librelu.so.stamp)
    cp -p right.so lib/build/librelu.so
    sed "s/^key .*/key $key/" right.stamp >lib/build/librelu.so.stamp
    run test lib -k forward
    expect_status 1
    expect_err "built '\''relu'\''"
    expect_out "FAIL  forward_"
    run build lib
    expect_out "relu: up to date"'

# A failing kernel's assertion text carries an escape sequence (ESC[8m hides what follows on a
# terminal), a carriage return, a byte that is not UTF-8 and U+FFFE: in a worker's message
# they reached the FAIL line, made the JUnit file XML no reader parses and the JSON report
# text no UTF-8 decoder reads.  Now each such byte is a "?".
test_expect "a kernel'\''s message cannot hide lines or break the JUnit and JSON reports" '
    copy_example negate ctl
    printf "#include <neuronop.h>\n#include <assert.h>\n\nnt_tensor *negate(const nt_tensor *t_in)\n{\n    assert(nt_size(t_in, 0) < 0 && \"\033[8m\377\357\277\276\r\");\n    return get_dst_tensor();\n}\n" >ctl/negate.c
    run test ctl -k shapes --junit ctl.xml
    expect_status 1
    expect_out "0 passed, 2 failed"
    expect_out "assertion failed: nt_size(t_in, 0) < 0 && \"?[8m?????\""
    if LC_ALL=C grep -q "$(printf "[\033\r]")" out err; then exit 1; fi
    python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" ctl.xml
    run test ctl -k shapes --json
    expect_status 1
    python3 -c "import json, sys; json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\"))" out'

# The same of a kernel's printf text, which neuronop run shows after the op and puts in its
# JSON report: an escape sequence, a carriage return and a byte that is not UTF-8 are "?".
test_expect "printf text of a kernel cannot hide lines or break the JSON of neuronop run" '
    copy_example negate pf
    printf "#include <neuronop.h>\n\nnt_tensor *negate(const nt_tensor *t_in)\n{\n    printf(\"caf\\303\\251 \\033[8mhidden\\r\\377\\n\");\n    return get_dst_tensor();\n}\n" >pf/negate.c
    run run pf negate ones:2x2
    expect_out "café ?[8mhidden??"
    if LC_ALL=C grep -q "$(printf "[\033\r]")" out; then exit 1; fi
    run run pf negate ones:2x2 --json
    python3 -c "import json, sys; d = json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\")); assert \"caf\\u00e9 ?[8mhidden??\" in d[\"printf\"], d[\"printf\"]" out'

test_done
