#!/bin/sh
# Every case of `neuronop test` runs in a child of one zygote (a fork server that runs no user
# code), put back between cases to the state it had when its library was loaded.  A case whose user code kills, ends, hangs or escapes its worker (a signal,
# an exit, a trapped call, a 32-bit call, a shape function that never returns) fails with
# what happened (op, core where known, signal, hint), exit status 1, and the next case passes.
# A kernel that leaves a thread spinning after its run is answered as its outputs say; its
# worker is killed before the next case starts, and nothing of it is left at the end.  A
# kernel that forges its worker's "ready again" on its request socket, or fills that socket,
# changes nothing for the next case.
# A 32-bit call is reported by name whether this machine's kernel has 32-bit calls (seccomp
# traps it) or not (it faults at the int 0x80).  Nothing a kernel writes to its inherited
# output reaches the terminal, and no process is left behind.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/forkserver" "$WORK/fs"
"$NEURONOP" build "$WORK/fs" >/dev/null 2>&1

test_expect "each case that kills its worker fails with what happened; the next one passes" '
    run_alone test fs --timeout 1
    expect_status 1
    expect_out "ok    first[zeros:16] (5 executions"
    expect_out "FAIL  killed_by_abort: aborts: core 0: the device process died: abort (signal 6)"
    expect_err "neuronop: aborts: core 0: error: the device process died: abort (signal 6)"
    expect_err "user code raised the signal itself, or broke the runtime so that it did"
    expect_out "ok    after_abort (5 executions"
    expect_out "FAIL  exits_with_0: exits: core 0: user code ended the device process (exit status 0) before the op finished"
    expect_out "ok    after_exit (5 executions"
    expect_out "FAIL  forks: forks: core 0: kernel made a system call the device does not have: fork"
    expect_out "ok    after_fork (5 executions"
    expect_out "FAIL  shape_spins: spins: shape function '\''spins'\'': timeout: it did not finish within its time limit and was stopped"
    expect_out "ok    after_spin (5 executions"
    expect_out "ok    says (5 executions"
    expect_out "FAIL  foreign_abi: "
    expect_out "int80: core 0: kernel made a system call the device does not have: int 0x80 (a 32-bit system call)"
    expect_out "ok    after_int80 (5 executions"
    expect_out "ok    lingers (5 executions"
    expect_out "ok    after_linger (5 executions"
    expect_out "ok    knocks[zeros:8] (5 executions"
    expect_out "ok    after_knock (5 executions"
    expect_out "ok    knock_linger (5 executions"
    expect_out "ok    after_knock_linger (5 executions"
    expect_out "ok    knock_flood (5 executions"
    expect_out "ok    after_knock_flood (5 executions"
    expect_out "18 passed, 5 failed"'

# Under AddressSanitizer the worker keeps its standard error, where the sanitizer reports.
if [ -n "${NEURONOP_SANITIZED:-}" ]; then quiet="out"; else quiet="out err"; fi
test_expect "what a kernel writes to its standard output and error goes nowhere" '
    run test fs -k says
    expect_status 0
    if grep written-by-kernel $quiet; then exit 1; fi
    run run fs says zeros:4
    expect_status 0
    expect_out "says: ok on 1 core"
    if grep written-by-kernel $quiet; then exit 1; fi
    # the kernel does write: in neuronop'\''s own process (the sandbox off), it shows
    NEURONOP_SANDBOX=off "$NEURONOP" run fs says zeros:4 >out 2>err
    grep -q written-by-kernel out'

test_expect "outputs come back from the worker bit for bit, small and large (by page reference)" '
    copy_example relu_tcm big
    "$NEURONOP" build big >/dev/null
    for shape in 7 16383 16384 32x4096 3x1000001; do
        run run big relu_forward randn:$shape --seed 3 -o worker.npy
        expect_status 0
        NEURONOP_SANDBOX=off "$NEURONOP" run big relu_forward randn:$shape --seed 3 \
            -o inproc.npy >/dev/null
        cmp worker.npy inproc.npy
    done'

# strace shows the processes neuronop starts (clones that signal SIGCHLD, not threads): one
# zygote, whose child serves case after case, put back between them to the state it had when
# its library was loaded (t0219 checks that no state crosses); a child whose case killed it,
# or that cannot be put back (a thread of its own still running), is replaced; a new zygote only after a case's deadline passed (its process group
# is killed).  (Not under the sanitizers: LeakSanitizer cannot run under ptrace; nor does
# AddressSanitizer's shadow memory let a child be put back.)
if [ -z "${NEURONOP_SANITIZED:-}" ] && strace -f -o /dev/null true 2>/dev/null; then
# forks LOG: the processes (clones that signal SIGCHLD, not threads) that neuronop itself
# started, then those its children started, from strace -ff's file per process (one log per
# process: a single -f log splits a call that others interrupt across two lines).
forks() {
    main=$(ls "$1".* | sort -t . -k 2 -n | head -n 1)
    zygotes=$(grep -c "SIGCHLD.*= [0-9]" "$main")
    children=$(cat $(ls "$1".* | grep -vxF "$main") | grep -c "SIGCHLD.*= [0-9]")
}
test_expect "one zygote's child serves case after case; it is replaced when a case kills it" '
    strace -ff -qq -e trace=clone,clone3,fork,vfork -o passing "$NEURONOP" test fs -k after \
        >out 2>err
    expect_out "9 passed, 0 failed"
    forks passing
    # one child for the 6 cases (a second or third only if a restore took over half a
    # second, as it may under strace on a busy machine)
    test "$zygotes" = 1 && test "$children" -le 3 ||
        { echo "zygotes $zygotes, children $children"; cat out err; exit 1; }
    strace -ff -qq -e trace=clone,clone3,fork,vfork -o all "$NEURONOP" test fs --timeout 1 \
        >out 2>err || true
    expect_out "18 passed, 5 failed"
    forks all
    # a new child after each case that ended its worker (abort, exit, fork, int 0x80) or
    # kept it from being put back (a lingering thread), not one for each of the 16 cases; a
    # new zygote after the shape function that timed out
    test "$zygotes" = 2 && test "$children" -ge 5 && test "$children" -lt 16 ||
        { echo "zygotes $zygotes, children $children"; cat out err; exit 1; }
    # a kernel that writes bytes claiming its worker is ready again, on the socket on which
    # neuronop sends that worker its next case: nothing is lost, and its child serves on,
    # until one (knock_linger) also keeps its worker from being put back: the next case goes
    # to a new child; one that fills the socket (knock_flood) keeps the next case from
    # nothing
    strace -ff -qq -e trace=clone,clone3,fork,vfork -o knocking "$NEURONOP" test fs -k knock \
        --timeout 1 >out 2>err
    expect_out "7 passed, 0 failed"
    forks knocking
    test "$zygotes" = 1 && test "$children" -le 4 ||
        { echo "zygotes $zygotes, children $children"; cat out err; exit 1; }'
fi

test_done
