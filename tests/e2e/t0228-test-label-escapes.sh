#!/bin/sh
# A sub-case's label is one line of plain text (red team; neuronop-test(1) and
# neuronop.yaml(5) hold a test's name to "one non-empty line of printable characters", and
# TRUST in neuronop-run(1) keeps escape sequences out of what reaches the terminal): the
# label is built from the base names of its argument files, and a file name of the
# library's (a pull request's) reached the terminal raw (ESC [8m hid all that followed); its
# control characters now show as ? in the text, JSON and JUnit reports.  And a CI runner's
# commands (GitHub Actions' "##[add-mask]FAIL" anywhere, "::group::" first on a line) in a
# label or a kernel's printf, which masked every later FAIL of a CI log or folded it away
# (a red team's find), show their second character as ?.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }

copy_example relu "$WORK/esc"
esc=$(printf '\033')
npy write "$WORK/esc/tests/${esc}[8mx.npy" '<f4' 1x2 1 -1
cat >>"$WORK/esc/neuronop.yaml" <<EOT
  - name: escaped
    op: relu_forward
    args: [[tests/x.npy, "tests/\\e[8mx.npy"]]
EOT

test_expect "no escape character of a file name reaches the output" '
    run test esc -k escaped
    expect_status 0
    expect_out "ok    escaped[?[8mx.npy] ("
    expect_out "2 passed, 0 failed"
    if grep -q "$esc" out err; then exit 1; fi'

test_expect "the label shows the escape character as ? in text, --json and --junit" '
    run test esc -k escaped --json --junit report.xml
    expect_status 0
    grep -F "\"name\": \"escaped[?[8mx.npy]\"" out
    if grep -q "$esc" out err report.xml; then exit 1; fi
    grep -F "name=\"escaped[?[8mx.npy]\"" report.xml'

copy_example relu "$WORK/gh"
npy write "$WORK/gh/tests/##[add-mask]FAIL.npy" '<f4' 1x2 1 -1
cat >>"$WORK/gh/neuronop.yaml" <<EOT
  - name: masked
    op: relu_forward
    args: [[tests/x.npy, "tests/##[add-mask]FAIL.npy"]]
EOT
test_expect "a CI runner's command in a file name shows as text in the label" '
    run test gh -k masked --junit report.xml
    expect_status 0
    expect_out "ok    masked[#?[add-mask]FAIL.npy] ("
    if grep -F "##[" out err report.xml; then exit 1; fi
    grep -F "name=\"masked[#?[add-mask]FAIL.npy]\"" report.xml'

cp -R "$WORK/gh" "$WORK/ghp"
cat >>"$WORK/ghp/relu.c" <<'EOT'

nt_tensor *relu_noisy(const nt_tensor *t)
{
    printf("::add-mask::FAIL\n  ::group::x\nnote ##[error]y torch::add\n");
    return relu_forward(t);
}
EOT
sed -i "s/^ops:/ops:\n  relu_noisy: {args: [tensor], shape: relu_fwd_shape, kernel: relu_noisy}/" \
    "$WORK/ghp/neuronop.yaml"
test_expect "a CI runner's command in a kernel's printf shows as text" '
    run run ghp relu_noisy zeros:2x2
    expect_status 0
    expect_out ":?add-mask::FAIL"
    expect_out "  :?group::x"
    expect_out "note #?[error]y torch::add"
    if grep -F -e "##[" -e "::add-mask" -e " ::group" out err; then exit 1; fi'

# A label filling the 512 bytes was cut inside a two-byte character, which --json then
# carried as a byte no UTF-8 reader takes (a review); a name is now at most 200 bytes, and a
# sub-case's values fill the label: files named in two-byte characters, and the number that
# ends a cut label, after a character maybe cut too.
copy_example relu "$WORK/long"
e=$(printf "%125s" "" | sed "s/ /é/g")
for n in a b c; do npy write "$WORK/long/tests/$n$e.npy" '<f4' 1x2 1 -1; done
cat >>"$WORK/long/neuronop.yaml" <<EOT
  - name: $(printf "%200s" "" | tr " " a)
    op: relu_backward
    args: [[tests/a$e.npy, tests/b$e.npy], [tests/c$e.npy]]
EOT
test_expect "a label cut at its end is still UTF-8 in --json" '
    run test long --json -k aaaa
    expect_status 0
    /usr/bin/python3 -c "import json, sys; d = json.loads(open(sys.argv[1], \"rb\").read().decode()); assert len({c[\"name\"] for c in d[\"cases\"] if c[\"status\"] != \"skipped\"}) == 2" out'

# Two file names that differ only in a control character are one label once it shows as ?
# (a reviewer'\''s find): they are told apart by their sub-case numbers
copy_example relu "$WORK/twins"
one=$(printf '\001') two=$(printf '\002')
npy write "$WORK/twins/tests/x${one}.npy" '<f4' 1x2 1 -1
npy write "$WORK/twins/tests/x${two}.npy" '<f4' 1x2 1 -1
cat >>"$WORK/twins/neuronop.yaml" <<EOT
  - name: twins
    op: relu_forward
    args: [["tests/x\\x01.npy", "tests/x\\x02.npy"]]
EOT

test_expect "values shown alike are told apart by their sub-case numbers" '
    run test twins -k twins --json --schedules 0
    expect_status 0
    test "$(jq -r ".cases[].name" out | grep "^twins" | sort -u | wc -l)" = 2
    jq -r ".cases[].name" out | grep -qF "twins[x?.npy ... sub-case 2]"'

test_done
