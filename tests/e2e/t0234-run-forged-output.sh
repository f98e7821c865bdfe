#!/bin/sh
# An output's description without its data (red team: TRUST in neuronop-run(1), "the worker
# sends data only ... checked before anything is allocated").  Fixture forgedout's shape
# functions write records of their own: a description of 1 GiB and a DONE saying the run went
# well (run), or three executions' ends (test), and never the data.  neuronop took the
# missing bytes for zeros: run said "ok on 0 cores", exit 0, and test compared 1 GiB of zeros
# per forged execution, past --timeout.  And a DONE alone, with no output at all, crashed run
# (and the Python supervisor) or printed "ok": true.  Now the report is malformed, at once.
. ./lib.sh
cp -r "$NEURONOP_SRC/tests/fixtures/forgedout" "$WORK/fo"
"$NEURONOP" build "$WORK/fo" >/dev/null 2>&1

test_expect "run: a forged output and DONE, without the data, is a malformed report" '
    run run --timeout 1 fo fwd zeros:4
    expect_status 1
    expect_err "neuronop: fwd: shape function '"'"'same'"'"': error: the device process sent a malformed report"
    if grep -q "ok on" out; then exit 1; fi'

for how in "" --json "-o out.npy"; do
    test_expect "run${how:+ $how}: a forged DONE alone, with no output at all, is a malformed report" '
        run run --timeout 1 fo fwd_done zeros:4 '"$how"'
        expect_status 1
        expect_err "neuronop: fwd_done: error: the device process sent a malformed report"
        if grep -q "\"ok\": true" out; then exit 1; fi
        test ! -e out.npy'
done

# (a new user's find: run --json said "ok": false, and why only on standard error)
test_expect "run --json of a failed run says why, as standard error does" '
    run run --timeout 1 --json fo fwd_done zeros:4
    expect_status 1
    jq -e ".ok == false and .error.where == \"fwd_done\" and (.error.message |
           startswith(\"the device process sent a malformed report\")) and
           (.error.detail | startswith(\"run with --memcheck\"))" out >/dev/null'

# (a reviewer's finds: an output that could not be saved gave no error object, and kernel
# printf text that is not UTF-8 came through raw in the sandbox-off mode, which no JSON
# reader takes)
mkdir -p "$WORK/bytes"
printf '#include <neuronop.h>\nnt_tensor *bytes(const nt_tensor *t) { printf("a\\xff b\\xc3( c\\xe2\\x82"); return nt_zeros(nt_dim(t), nt_sizes(t), NT_F32); }\n' \
    >"$WORK/bytes/k.c"
printf '#include <neuronop.h>\nnt_tensor *same(const nt_tensor *t) { return nt_empty(nt_dim(t), nt_sizes(t), NT_F32); }\n' \
    >"$WORK/bytes/s.c"
printf 'name: bytes\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\nops:\n  bytes: {args: [tensor], shape: same, kernel: bytes}\n' \
    >"$WORK/bytes/neuronop.yaml"
test_expect "run --json: an unsaved output says why, and printf bytes are JSON in every mode" '
    ln -s /dev/full full.npy
    run run --json -o full.npy bytes bytes zeros:2
    expect_status 2
    jq -e ".ok == false and (.error.message | startswith(\"cannot write\"))" out >/dev/null
    for sandbox in on off; do
        NEURONOP_SANDBOX=$sandbox "$NEURONOP" run --json bytes bytes zeros:2 >out 2>err
        /usr/bin/python3 -c "
import json, sys
got = json.loads(open(\"out\", \"rb\").read().decode(\"utf-8\"))
sys.exit(0 if got[\"printf\"].startswith(\"a\") and got[\"ok\"] else 1)"
    done'

test_expect "test: forged executions' ends, without their outputs' data, fail as malformed" '
    run test --timeout 1 fo
    expect_status 1
    expect_out "FAIL  done: fwd: shape function '"'"'same'"'"': the device process sent a malformed report"
    expect_out "FAIL  ends: fwd_many: shape function '"'"'same_many'"'"': the device process sent a malformed report"
    expect_out "FAIL  alone: fwd_done: "
    expect_out "0 passed, 3 failed"'

test_done
