#!/bin/sh
# Every case of `neuronop test` runs in a fresh child of one zygote (a fork server that runs no
# user code), killed before the next case's child gets its request.  A case whose user code
# kills, ends or hangs its worker (a signal, an exit, a trapped call, a 32-bit call, a shape
# function that never returns) fails with what happened (op, core where known, signal, hint),
# exit status 1, and the next case passes.  A kernel that leaves a thread after its run is
# answered as its outputs say, and nothing of it reaches the next case: not a thread that
# reads the worker's request socket, not bytes forged on that socket claiming the worker is
# ready again, not a socket filled with them.  A 32-bit call is reported by name whether this
# machine's kernel has 32-bit calls (seccomp traps it) or not (it faults at the int 0x80).
# Nothing a kernel writes to its inherited output reaches the terminal, and no process is
# left behind.
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
# zygote, whose fresh child runs each case (a child put back between cases would be only as
# clean as its own restore, which code that ran in it can subvert), and a new zygote only
# after a case's deadline passed (its process group is killed).  (Not under the sanitizers:
# LeakSanitizer cannot run under ptrace.)
if [ -z "${NEURONOP_SANITIZED:-}" ] && strace -f -o /dev/null true 2>/dev/null; then
# forks LOG: the processes (clones that signal SIGCHLD, not threads) that neuronop itself
# started, then those its children started, from strace -ff's file per process (one log per
# process: a single -f log splits a call that others interrupt across two lines).  neuronop's
# own file is the one that shows its execve: not the lowest process id, as ids wrap around
# (at 32768 here) while the whole suite starts thousands of processes.
forks() {
    main=$(grep -lF "execve(\"$NEURONOP\"" "$1".* || true)
    test "$(echo "$main" | wc -l)" = 1 || { echo "execve of neuronop in: $main"; exit 1; }
    zygotes=$(grep -c "SIGCHLD.*= [0-9]" "$main")
    children=$(cat $(ls "$1".* | grep -vxF "$main") | grep -c "SIGCHLD.*= [0-9]")
}
test_expect "each case gets a fresh child of the zygote" '
    strace -ff -qq -e trace=clone,clone3,fork,vfork,execve -o passing "$NEURONOP" test fs -k after \
        >out 2>err
    expect_out "9 passed, 0 failed"
    forks passing
    # a child for each of the 9 cases and a spare, ready for a next one
    test "$zygotes" = 1 && test "$children" -ge 10 && test "$children" -le 11 ||
        { echo "zygotes $zygotes, children $children"; cat out err; exit 1; }
    strace -ff -qq -e trace=clone,clone3,fork,vfork,execve -o all "$NEURONOP" test fs --timeout 1 \
        >out 2>err || true
    expect_out "18 passed, 5 failed"
    forks all
    # a child for each of the 23 cases, whatever the one before did, and a new zygote after
    # the shape function that timed out (each zygote with a spare)
    test "$zygotes" = 2 && test "$children" -ge 24 && test "$children" -le 27 ||
        { echo "zygotes $zygotes, children $children"; cat out err; exit 1; }'
fi

test_done
