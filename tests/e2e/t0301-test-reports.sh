#!/bin/sh
# neuronop test's machine-readable output and CI helpers: --shard, --json, and --junit XML
# validated against the structure of JUnit XML (junit.xsd) by xmllint.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
cp -R "$NEURONOP_SRC/tests/fixtures/checks" "$WORK/c"
npy write "$WORK/c/x.npy" "<f4" 4 -1 2 -3 4
npy write "$WORK/c/bad.npy" "<f4" 4 9 9 9 9
cat "$NEURONOP_SRC/tests/fixtures/checks/neuronop.yaml" - >"$WORK/c/neuronop.yaml" <<EOF
tests:
  - {name: a_sizes, op: race_fixed, args: [[randn:10, randn:20]], cores: [1, 8]}
  - {name: b_wrong, op: race_fixed, args: [x.npy], expect: bad.npy}
  - {name: c_racy, op: race, args: [randn:64]}
  - {name: d_fine, op: race_fixed, args: [randn:5]}
EOF

# by sub-case: a case of many sub-cases is split too (by case, the CI recipe'\''s shards of a
# new library, one case of four sub-cases, ran it all in one and nothing in three: a new
# user'\''s find), and each shard reports only its own, in --junit too
test_expect "--shard splits the sub-cases deterministically and completely" '
    : >all
    for i in 1 2 3; do
        run test c --shard $i/3 --schedules 0 --junit j$i.xml
        grep -E "^(ok|FAIL|ERROR)" "$WORK/out" | sed "s/ (.*//; s/: .*//" >>all
        if grep -q "skipped" out || grep -q "<skipped" j$i.xml; then exit 1; fi
    done
    test "$(sort all | uniq | wc -l)" = 5
    test "$(wc -l <all)" = 5
    test "$(cat j1.xml j2.xml j3.xml | grep -c "<testcase ")" = 5
    run test c --shard 2/3 --schedules 0
    expect_out "ok    a_sizes[randn:20]"
    expect_out "2 passed, 0 failed"'

test_expect "a case of many sub-cases is shared among the shards" '
    for i in 1 2; do
        run test c -k a_sizes --shard $i/2 --schedules 0
        expect_out "1 passed, 0 failed"
    done'

test_expect "--shard with a bad value is a usage error" '
    run test c --shard 4/3
    expect_status 2
    expect_err "--shard takes I/N with 1 <= I <= N <= 1000000, like 2/4, not '\''4/3'\''"'

test_expect "--json has every case with its status and message" '
    run test c --json --schedules 0
    expect_status 1
    jq -e ".library == \"checks\" and .passed == 3 and .failed == 2 and .errors == 0 and
           (.cases | length) == 5 and
           (.cases[] | select(.name == \"b_wrong\") | .status == \"failed\" and
               (.message | test(\"differs from\"))) and
           (.cases[] | select(.name == \"c_racy\") | .message | test(\"racecheck\"))" "$WORK/out"'

test_expect "--junit writes JUnit XML that validates against its structure" '
    run test c --junit report.xml --schedules 0
    expect_status 1
    expect_out "3 passed, 2 failed"
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" report.xml
    test "$(xmllint --xpath "string(/testsuites/testsuite/@tests)" report.xml)" = 5
    test "$(xmllint --xpath "string(/testsuites/testsuite/@failures)" report.xml)" = 2
    test "$(xmllint --xpath "count(//testcase[failure])" report.xml)" = 2
    xmllint --xpath "string(//testcase[@name=\"c_racy\"]/failure/@message)" report.xml |
        grep -q "a device rule was broken under sequential: race: output element .* (racecheck)"
    test "$(xmllint --xpath "string(//testcase[@name=\"d_fine\"]/@classname)" report.xml)" = checks.race_fixed'

# (a red team's find: the message attribute was cut at 511 bytes, inside a character, and
# the whole report was no XML a dashboard could read)
test_expect "--junit cuts a long non-ASCII message where a character begins" '
    mkdir -p u
    e=$(printf "%0400d" 0 | sed "s/0/é/g")
    cat >u/k.c <<EOF
#include <neuronop.h>
#include <assert.h>
nt_tensor *odd(const nt_tensor *t) { assert(!"a$e"); return 0; }
nt_tensor *even(const nt_tensor *t) { assert(!"aa$e"); return 0; }
EOF
    printf "#include <neuronop.h>\nnt_tensor *same(const nt_tensor *t) { return nt_empty(nt_dim(t), nt_sizes(t), NT_F32); }\n" >u/s.c
    cat >u/neuronop.yaml <<EOF
name: u
compute_srcs: [k.c]
shape_srcs: [s.c]
ops:
  odd: {args: [tensor], shape: same, kernel: odd}
  even: {args: [tensor], shape: same, kernel: even}
tests:
  - {name: odd, op: odd, args: [randn:4]}
  - {name: even, op: even, args: [randn:4]}
EOF
    run test u --junit u.xml --schedules 0
    expect_status 1
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" u.xml
    xmllint --xpath "string(//testcase[@name=\"odd\"]/*/@message)" u.xml | grep -q "aéé"'

# a CI engineer'\''s find: the report a failed compile left was the last green run'\''s
test_expect "a run that stops before any case writes a report that says so" '
    run test c --junit stale.xml -k d_fine
    expect_status 0
    cp -R c broken
    echo "int oops(" >>broken/k.c
    run test broken --junit stale.xml
    expect_status 3
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" stale.xml
    test "$(xmllint --xpath "string(/testsuites/testsuite/@errors)" stale.xml)" = 1
    xmllint --xpath "string(//testcase/error/@message)" stale.xml |
        grep -q "no case ran: neuronop test stopped with exit status 3"
    # and why, as stderr said it first (a new user'\''s dashboard showed no reason)
    first=$(grep -m1 ": error: " err)
    test -n "$first"
    xmllint --xpath "string(//testcase/error/@message)" stale.xml | grep -qF ": $first"
    xmllint --xpath "string(//testcase/error)" stale.xml | grep -qxF "$first"
    cp -R c ce   # a case that cannot run is an error, which failed counts and errors says
    printf "  - {name: e_missing, op: race_fixed, args: [missing.npy]}\n" >>ce/neuronop.yaml
    run test ce --json --schedules 0 -k e_missing
    expect_status 1
    jq -e ".failed == 1 and .errors == 1 and .cases[5].status == \"error\"" "$WORK/out"
    run test c --junit stale.xml -k no_such_case
    expect_status 2
    xmllint --xpath "string(//testcase/error/@message)" stale.xml | grep -q "exit status 2"
    xmllint --xpath "string(//testcase/error/@message)" stale.xml |
        grep -q "neuronop test: error: -k .no_such_case. matches no test case"
    # an option'\''s error after --junit, too (an auditor'\''s find: the old file stayed)
    run test --junit stale.xml --schedules 99 c
    expect_status 2
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" stale.xml
    xmllint --xpath "string(//testcase/error/@message)" stale.xml |
        grep -q "exit status 2 before the first one: neuronop test: error: --schedules takes"'

# a red team's find: a run that CI stopped (its time limit) left the last green run's report
test_expect "a run stopped from outside leaves a report saying it did not finish" '
    run test c --junit stale.xml -k d_fine
    expect_status 0
    copy_example relu spin
    sed -i "6i for (volatile int spinning = 1; spinning;) {}" spin/relu.c
    "$NEURONOP" test spin --junit stale.xml --timeout 60 >/dev/null 2>&1 & pid=$!
    i=0
    until grep -q "did not finish" stale.xml; do
        i=$((i + 1)); test $i -lt 400; sleep 0.05
    done
    kill -9 $pid
    wait $pid || true
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" stale.xml
    test "$(xmllint --xpath "string(/testsuites/testsuite/@errors)" stale.xml)" = 1
    xmllint --xpath "string(//testcase/error/@message)" stale.xml |
        grep -q "the run did not finish: neuronop test was stopped before it wrote its report"
    run test c --junit stale.xml -k d_fine
    expect_status 0
    test "$(xmllint --xpath "string(/testsuites/testsuite/@errors)" stale.xml)" = 0'

# a red team'\''s find: a failing sub-case and a passing one, both named fwd[x.npy]
test_expect "sub-cases whose values share a base name are named by their paths, twins by number" '
    cp -R c same
    mkdir same/a same/b
    npy write same/a/x.npy "<f4" 4 -1 2 -3 4
    npy write same/b/x.npy "<f4" 4 9 9 9 9
    npy write same/want.npy "<f4" 4 0 2 0 4
    printf "  - {name: fwd, op: race_fixed, args: [[a/x.npy, b/x.npy]], expect: want.npy}\n" \
        >>same/neuronop.yaml
    printf "  - {name: twice, op: race_fixed, args: [[x.npy, x.npy]]}\n" >>same/neuronop.yaml
    run test same -k fwd --junit j.xml --schedules 0
    expect_status 1
    grep -q "^ok    fwd\[a/x.npy\]" out
    grep -q "^FAIL  fwd\[b/x.npy\]: " out
    test "$(xmllint --xpath "string(//testcase[failure]/@name)" j.xml)" = "fwd[b/x.npy]"
    run test same -k "fwd[b/x.npy]" --schedules 0
    expect_status 1
    grep -q "^FAIL  fwd\[b/x.npy\]: " out
    grep -q "^0 passed, 1 failed, " out
    run test same -k twice --json --schedules 0
    expect_status 0
    test "$(jq -r ".cases[].name" out | grep "^twice" | tr "\n" " ")" = \
        "twice[x.npy ... sub-case 1] twice[x.npy ... sub-case 2] "'

# a CI engineer'\''s find: labels cut at 511 bytes made two sub-cases one name in the reports
test_expect "sub-cases keep names of their own, however long their values; a name is short" '
    cp -R "$NEURONOP_SRC/tests/fixtures/tlib" long
    a=$(printf "%0240d" 0) b=$(printf "%0239d1" 0) f=$(printf "%0240d" 2)
    for n in "$a" "$b" "$f"; do npy write "long/$n.npy" "<f4" 2 1 2; done
    sed -i "/^tests:/,\$d" long/neuronop.yaml
    printf "tests:\n  - {name: %s, op: arith, args: [[%s.npy], [%s.npy, %s.npy]]}\n" \
        a_name_of_thirty_characters_ "$f" "$a" "$b" >>long/neuronop.yaml
    run test long --json --schedules 0
    expect_status 0
    test "$(jq -r ".cases[].name" "$WORK/out" | sort -u | wc -l)" = 2
    jq -r ".cases[1].name" "$WORK/out" | grep -q " \.\.\. sub-case 2]\$"
    cp -R c named
    printf "  - {name: %0201d, op: race_fixed, args: [randn:4]}\n" 0 >>named/neuronop.yaml
    run test named
    expect_status 2
    expect_err "test name of 201 bytes; a name has at most 200"'

test_expect "--junit marks cases left out by -k as skipped" '
    run test c --junit report.xml -k d_fine
    expect_status 0
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" report.xml
    test "$(xmllint --xpath "count(//testcase[skipped])" report.xml)" = 4'

test_expect "--junit into a FIFO writes through it and leaves it a FIFO" '
    mkfifo fifo.xml
    timeout 10 cat fifo.xml >got.xml &
    run test c --junit fifo.xml -k d_fine
    expect_status 0
    wait
    test -p fifo.xml
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" got.xml'

# A library folder may come from an untrusted pull request: a report.xml it holds, linked to
# another file, must not put the report (whose test names the manifest chose) there.
test_expect "--junit onto a planted link replaces the link and leaves its target alone" '
    echo "keep" >victim.txt
    ln -s "$WORK/victim.txt" c/report.xml
    run test c --junit c/report.xml -k d_fine
    expect_status 0
    test "$(cat victim.txt)" = keep
    test ! -L c/report.xml
    xmllint --noout --schema "$NEURONOP_SRC/tests/e2e/junit.xsd" c/report.xml'

# Before, these were found only after the whole suite had run, the folder with a raw
# "Is a directory"; they are refused as run -o is, before any case runs.
test_expect "--junit into a folder that does not exist or takes no file, or naming a folder, is refused before any case runs" '
    run test c --junit no/such/report.xml -k d_fine
    expect_status 2
    expect_err "neuronop: error: cannot write '\''no/such/report.xml'\'': No such file or directory"
    test ! -s out
    mkdir adir
    run test c --junit adir -k d_fine
    expect_status 2
    expect_err "neuronop: error: cannot write '\''adir'\'': it is a folder; name a .xml file"
    test ! -s out
    run test c --junit new/ -k d_fine
    expect_status 2
    expect_err "neuronop: error: cannot write '\''new/'\'': a file name cannot end in '\''/'\''; name a .xml file"
    test ! -s out
    # a folder that takes no new file (the suite ran, then failed to write, before)
    run test c --junit /proc/report.xml -k d_fine
    expect_status 2
    expect_err "neuronop: error: cannot write '\''/proc/report.xml'\'': no file can be made in '\''/proc'\'' ("
    expect_err "); name a file in a folder you can write"
    test ! -s out'

test_done
