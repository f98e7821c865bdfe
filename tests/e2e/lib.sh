# lib.sh - helpers for neuronop's end-to-end tests; each tNNNN-*.sh sources it and prints TAP.
#
# Environment (set by the Makefile): NEURONOP (the binary under test), NEURONOP_SHARE_DIR,
# NEURONOP_SRC (the source tree), NEURONOP_CACHE_DIR (the compile cache all scripts share;
# a script that tests the build itself unsets it and compiles cold), NEURONOP_FAILURES (a
# folder where each failed test's output is kept, a file per script).  Each test script gets a
# private scratch folder, $WORK.
#
#   test_expect "description" 'shell commands'   one TAP test: ok when the commands succeed
#   run ARGS...            runs $NEURONOP ARGS; sets $status, $WORK/out, $WORK/err
#   expect_status N        the last run exited N
#   expect_err TEXT        stderr of the last run contains TEXT (a fixed string)
#   expect_out TEXT        stdout of the last run contains TEXT
#   run_alone ARGS...      like run, then fails if any process it started is still there
#   in_session FILE CMD..., session_left SID   a command in a session of its own, and what of
#                          the session is left
#   stopped SIG N ARGS...  neuronop ARGS in a session of its own, sent SIG once N processes of
#                          it live; fails if any is left 3 s later
#   all_gone SID           fails if any process of session SID is left 3 s later
#   copy_example NAME DIR  copies share/neuronop/examples/NAME (without its build/) to DIR
#   torch_says 'CODE'      what Python CODE writes to stdout under real PyTorch, computed once
#   in_lanes FUNCTION      calls FUNCTION LINE for each line of stdin, $LANES lines at once
#   test_landlock "description" 'commands'   a test_expect where the kernel has Landlock,
#                          else a skipped one; $landlock_abi is the kernel's ABI version (0: none)
#   test_done              prints the plan; exits non-zero if any test failed
set -u

: "${NEURONOP:?set NEURONOP to the neuronop binary}"
: "${NEURONOP_SRC:?set NEURONOP_SRC to the source tree}"
EXAMPLES="$NEURONOP_SRC/share/neuronop/examples"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/neuronop-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# dash runs no EXIT trap when a signal ends it: these make the signal an exit, so a script
# that is killed (a harness's timeout, ^C) removes its folder too
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
test_count=0
test_failed=0

# The body runs with `set -e` in a subshell that is deliberately not an `if` condition (where
# -e would be ignored); write its checks one per line, not joined by && (where -e ignores
# every failure but the last), and a check that something is absent as `if grep ...; then
# exit 1; fi`, not `! grep ...`, which -e ignores but on the body's last line.
test_expect() {
    test_count=$((test_count + 1))
    [ -z "${NEURONOP_TEST_TIMES:-}" ] || te_start=$(date +%s%N)
    (set -e; cd "$WORK"; eval "$2") >"$WORK/.log" 2>&1
    if [ $? -eq 0 ]; then
        echo "ok $test_count - $1"
    else
        test_failed=$((test_failed + 1))
        echo "not ok $test_count - $1"
        sed 's/^/# /' "$WORK/.log"
        # and on stderr, which prove shows without -v: a failure in CI says why; and kept
        # for `make check` to print again after prove's summary (mk/failures.sh)
        sed "s/^/# $test_count: /" "$WORK/.log" >&2
        if [ -n "${NEURONOP_FAILURES:-}" ] && mkdir -p "$NEURONOP_FAILURES"; then
            { echo "not ok $test_count - $1"; sed 's/^/# /' "$WORK/.log"; } \
                >>"$NEURONOP_FAILURES/${0##*/}"
        fi
    fi
    # NEURONOP_TEST_TIMES=1: each test's wall time, to find what makes a script slow
    [ -z "${NEURONOP_TEST_TIMES:-}" ] || echo "# $(( ($(date +%s%N) - te_start) / 1000000 )) ms"
}

run() {
    status=0
    "$NEURONOP" "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
    return 0
}

# Every process neuronop starts stays in the session neuronop is started in (neuronop and its
# compilers never call setsid, and a worker's system-call filter does not let it), so the
# session's live members after neuronop has exited were left behind.  (Not an environment
# mark: a worker empties its environment, so a mark would find neuronop alone.)
#   in_session FILE CMD ARGS...   runs CMD in a new session; its id goes to FILE at once
#   session_left SID              the session's processes but zombies (which are dead), a line
#                                 "PID STAT ARGS" each
in_session() {
    setsid -w sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$@"
}
session_left() {
    ps -eo sid=,pid=,stat=,args= | awk -v s="$1" '$1 == s && $3 !~ /^Z/ { $1 = ""; print }'
}

# stopped SIG N ARGS...: starts $NEURONOP ARGS in a session of its own, sends SIG to its first
# process once N live processes are in the session (neuronop and its workers; within 60 s by
# the clock: a Python that imports torch, or a sanitized neuronop building the library first,
# takes seconds, and more on a busy machine) and the last has had 0.3 s to start spinning, then
# waits up to 3 s for every live process of the session to be gone.  Works in the current
# folder (files sid, out, err).
stopped() {
    st_sig=$1 st_want=$2
    shift 2
    rm -f sid
    in_session sid "$NEURONOP" "$@" >out 2>err &
    st_end=$(($(date +%s) + 60))
    while [ "$(date +%s)" -lt "$st_end" ]; do
        [ ! -f sid ] || [ "$(session_left "$(cat sid)" | wc -l)" -lt "$st_want" ] || break
        sleep 0.05
    done
    st_sid=$(cat sid)
    [ "$(session_left "$st_sid" | wc -l)" -ge "$st_want" ] || {
        echo "never saw $st_want processes:"; session_left "$st_sid"; cat err; return 1; }
    sleep 0.3
    kill -"$st_sig" "$st_sid"
    wait || true
    all_gone "$st_sid"
}

# all_gone SID: waits up to 3 s for every live process of session SID to be gone (a death
# signal takes a moment); says which are left and fails when some are
all_gone() {
    for i in $(seq 30); do
        ag_left=$(session_left "$1")
        test -n "$ag_left" || return 0
        sleep 0.1
    done
    echo "left behind: $ag_left"
    return 1
}

run_alone() {
    status=0
    rm -f "$WORK/.sid"
    in_session "$WORK/.sid" "$NEURONOP" "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
    left=$(session_left "$(cat "$WORK/.sid")")
    rm -f "$WORK/.sid"
    [ -z "$left" ] || echo "left behind:$left"
    [ -z "$left" ]
}

expect_status() {
    if [ "$status" != "$1" ]; then
        echo "expected exit status $1, got $status"
        echo "--- stdout"; cat "$WORK/out"; echo "--- stderr"; cat "$WORK/err"
        return 1
    fi
}

expect_err() {
    grep -qF -- "$1" "$WORK/err" || {
        echo "stderr lacks: $1"; echo "--- stderr"; cat "$WORK/err"; return 1; }
}

expect_out() {
    grep -qF -- "$1" "$WORK/out" || {
        echo "stdout lacks: $1"; echo "--- stdout"; cat "$WORK/out"; return 1; }
}

copy_example() {
    case $2 in
    /*) dest=$2 ;;
    *) dest=$PWD/$2 ;;   # the copy below runs in the example's folder
    esac
    mkdir -p "$dest"
    # three processes, not three a file
    (cd "$EXAMPLES/$1" && find . -path ./build -prune -o -type f -print0 |
        xargs -0r cp --parents -t "$dest")
}

# torch_says 'CODE': the standard output of CODE run by Debian's python3 with torch 1.13, the
# real thing, kept under out/e2e-cache by a hash of the code and of torch's version file:
# importing torch costs a second of CPU, so an expectation is computed once, not every run,
# and the run's snippets share one import (torch_oracle.py: a server that forks a fresh child
# for each, and leaves a minute after the last).
torch_says() {
    ts_key=$( (printf '%s' "$1"; cat /usr/lib/python3/dist-packages/torch/version.py) |
        cksum | cut -d' ' -f1) || return 1
    ts_file="$NEURONOP_SRC/out/e2e-cache/torch-$ts_key"
    if [ ! -f "$ts_file" ]; then
        mkdir -p "$NEURONOP_SRC/out/e2e-cache"
        printf '%s' "$1" | /usr/bin/python3 -S "$NEURONOP_SRC/tests/e2e/torch_oracle.py" ask \
            "$NEURONOP_SRC/out/e2e-cache/torch-oracle.sock" >"$ts_file.tmp.$$" ||
            { rm -f "$ts_file.tmp.$$"; return 1; }
        mv "$ts_file.tmp.$$" "$ts_file"   # whole or not at all, for scripts running at once
    fi
    cat "$ts_file"
}

# in_lanes FUNCTION: calls FUNCTION with each line of standard input as its one argument, in
# $LANES subshells at once (line k in lane k mod $LANES, each lane in the lines' order), and
# returns when all have ended.  A script whose cases are independent runs them this way so
# that `prove -j` is not left waiting for one long script: FUNCTION writes its results to
# files of its own and the script reports them afterwards, in order (not through run and
# expect_*, whose $WORK/out and $WORK/err the lanes would share).
LANES=${NEURONOP_TEST_LANES:-4}
in_lanes() {
    cat >"$WORK/.lanes"
    il_lane=0
    while [ "$il_lane" -lt "$LANES" ]; do
        awk -v n="$LANES" -v k="$il_lane" 'NR % n == k' "$WORK/.lanes" |
            while IFS= read -r il_line; do "$1" "$il_line"; done &
        il_lane=$((il_lane + 1))
    done
    wait
}

# The kernel's Landlock ABI version, 0 without Landlock (before 5.13, or not enabled), from
# a probe compiled at first use: what confinement a worker gets depends on it.
landlock_abi=
landlock_probe() {
    [ -z "$landlock_abi" ] || return 0
    printf '%s\n' '#include <linux/landlock.h>' '#include <stdio.h>' '#include <sys/syscall.h>' \
        '#include <unistd.h>' 'int main(void) { long v = syscall(SYS_landlock_create_ruleset,' \
        '    0, 0, LANDLOCK_CREATE_RULESET_VERSION); printf("%ld\n", v > 0 ? v : 0); }' \
        >"$WORK/.landlock.c"
    landlock_abi=0
    ${CC:-cc} -o "$WORK/.landlock" "$WORK/.landlock.c" 2>/dev/null &&
        landlock_abi=$("$WORK/.landlock") || landlock_abi=0
}

# test_landlock NAME BODY: a test of what Landlock confines, skipped on a kernel without it
test_landlock() {
    landlock_probe
    if [ "$landlock_abi" -gt 0 ]; then
        test_expect "$@"
    else
        test_count=$((test_count + 1))
        echo "ok $test_count # skip $1: this kernel has no Landlock"
    fi
}

test_done() {
    echo "1..$test_count"
    [ "$test_failed" -eq 0 ]
}
