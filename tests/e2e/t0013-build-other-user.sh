#!/bin/sh
# A library built by one user, run and tested by another (a CI step as root, the next as a
# user of its own), and a checkout neuronop may not write: an up-to-date library needs no
# write; one that must be built again (a chmod of its library file counts) says why it
# cannot be, and --build-dir builds it elsewhere; another user's build lock is taken
# read-only.  These need root and a user to become (nobody, through runuser): elsewhere they
# are skipped, saying so.
. ./lib.sh

as_nobody() {   # as_nobody COMMAND...: runs neuronop COMMAND as nobody, as run does
    status=0
    (cd "$WORK" && runuser -u nobody -- env NEURONOP_SHARE_DIR="$NEURONOP_SHARE_DIR" \
        "$NEURONOP" "$@") >"$WORK/out" 2>"$WORK/err" || status=$?
}

if [ "$(id -u)" = 0 ] && runuser -u nobody -- true 2>/dev/null; then
    chmod 755 "$WORK"   # nobody goes in; what it may write is said below
    cd "$WORK"
    copy_example relu ro
    chmod -R a+rX ro   # nobody may read it (a chmod after the build would move its ctime)
    (cd "$WORK" && "$NEURONOP" build ro >/dev/null)
    test_expect "another user runs an up-to-date library it may not write" '
        as_nobody run ro relu_forward randn:4x4
        expect_status 0'

    test_expect "one that must be built again says why it cannot be, and what to do" '
        chmod a-w ro/build/librelu.so   # its change time moves
        as_nobody test ro
        expect_status 2
        expect_err "neuronop: error: cannot create a temporary folder in '\''ro/build'\'': Permission denied"
        expect_err "which writes its build folder; build it where you may write (neuronop build --build-dir)"'

    # its workers read the arguments'\'' files in the library folder, not beside the library
    test_expect "--build-dir builds it where this user may write, for test, run and bench" '
        mkdir -m 777 mine
        as_nobody test --build-dir mine/ro ro
        expect_status 0
        expect_out "5 passed, 0 failed"
        test -f mine/ro/librelu.so
        as_nobody run --build-dir mine/ro ro relu_forward randn:4x4
        expect_status 0
        as_nobody bench --build-dir mine/ro ro relu_forward randn:4x4 --iters 2 --warmup 0
        expect_status 0'

    test_expect "another user'\''s lock in a folder this user may write is taken read-only" '
        copy_example relu rw
        (cd "$WORK" && "$NEURONOP" build rw >/dev/null)
        chmod -R a+rwX rw
        chmod 644 rw/build/.neuronop.lock
        echo "/* changed */" >>rw/relu.c
        as_nobody build rw
        expect_status 0
        expect_out "relu: built"'

    # (a docs audit'\''s find: it said "no neuronop.yaml in '\''shut'\''")
    test_expect "a folder this user may not read is said so, not as one without a manifest" '
        copy_example relu shut
        chmod 700 shut
        as_nobody build shut
        expect_status 2
        expect_err "neuronop: error: cannot read '\''shut/neuronop.yaml'\'': Permission denied"'
else
    for what in "another user runs an up-to-date library" "a library to build again" \
        "--build-dir elsewhere" "another user's lock" "a folder it may not read"; do
        test_count=$((test_count + 1))
        echo "ok $test_count # skip $what: it takes root and runuser to become nobody"
    done
fi
test_done
