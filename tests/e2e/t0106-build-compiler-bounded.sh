#!/bin/sh
# A compiler or linker the user names (CC, CXX: here wrapper scripts) is bounded when it ends
# as when it goes past a limit: whatever its status, what is left of its process group is
# killed and reaped, so a wrapper that starts `sleep 300 &` and then execs the real cc leaves
# nothing once the build returns (before, only a compile past its deadline had its group
# killed: t0101); and neuronop's own group, which the wrapper's is not, is left alone.  A
# process that leaves the group (setsid) is ended with the build all the same.  And what a
# tool prints costs neuronop at most the 256 KiB of it that it reads, and it says how much
# it did not read.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # every compile runs: the cache would skip the wrapper

# bg NAME REAL: $WORK/NAME starts a sleep in the background, and one more in a subshell that
# ends at once (the sleep is orphaned: adopted by neuronop, the subreaper), records both
# pids in $WORK/left, then execs REAL
bg() {
    cat >"$WORK/$1" <<SH
#!/bin/sh
sleep 300 &
echo \$! >>"$WORK/left"
(sleep 300 & echo \$! >>"$WORK/left")
exec $2 "\$@"
SH
    chmod +x "$WORK/$1"
}
bg cc-bg cc
bg cxx-bg g++

# none_left: no pid in $WORK/left is alive (there was at least one); those that are are
# named, and killed so that the next test starts clean
none_left() {
    test -s "$WORK/left"
    alive=
    for pid in $(cat "$WORK/left"); do
        if kill -0 "$pid" 2>/dev/null; then
            echo "left running: $(ps -o pid=,args= -p "$pid")"
            alive="$alive $pid"
        fi
    done
    rm -f "$WORK/left"
    [ -z "$alive" ] || kill $alive
    test -z "$alive"
}

# (Landlock off: the wrappers are in this test's folder, and write there)
test_expect "a C compile and link that succeed leave nothing of the wrapper running" '
    copy_example relu c
    NEURONOP_LANDLOCK=off CC="$WORK/cc-bg" run_alone build --compiler=cc c
    expect_status 0
    test -e c/build/librelu.so
    none_left'

test_expect "a C++ compile and link that succeed leave nothing of the wrapper running" '
    copy_example negate_cxx x
    NEURONOP_LANDLOCK=off CC="$WORK/cc-bg" CXX="$WORK/cxx-bg" run_alone build x
    expect_status 0
    none_left'

test_expect "a compile that fails leaves nothing of the wrapper running" '
    copy_example relu bad
    echo "int broken = ;" >>bad/relu.c
    NEURONOP_LANDLOCK=off CC="$WORK/cc-bg" run_alone build --compiler=cc bad
    expect_status 3
    expect_err "relu.c:"
    none_left'

# A process in neuronop's own group, started before it: the group kill is the tool's group,
# never neuronop's (were it, this shell would go too)
test_expect "what is killed is the tool's group, not neuronop's" '
    sleep 300 &
    mine=$!
    copy_example relu own
    NEURONOP_LANDLOCK=off CC="$WORK/cc-bg" run build --compiler=cc own
    expect_status 0
    kill -0 "$mine"
    kill "$mine"
    none_left'

# A process that leaves the wrapper's group (a session of its own) is beyond the group kill,
# but neuronop adopts it once the wrapper has ended (neuronop is a subreaper), and a build
# ends what it adopted; $! is the sleep itself (setsid execs it: the job leads no group)
cat >"$WORK/cc-away" <<SH
#!/bin/sh
setsid sleep 300 &
echo \$! >>"$WORK/left"
(setsid sh -c 'sleep 300 & echo \$! >>"$WORK/left"; wait' &)
sleep 0.2
exec cc "\$@"
SH
chmod +x "$WORK/cc-away"

test_expect "a process that left the wrapper's group and session is ended too" '
    copy_example relu away
    NEURONOP_LANDLOCK=off CC="$WORK/cc-away" run build --compiler=cc away
    expect_status 0
    test "$(wc -l <"$WORK/left")" -ge 4
    none_left'

test_expect "and so it is when run builds the library first" '
    copy_example relu away2
    echo "compiler: cc" >>away2/neuronop.yaml
    NEURONOP_LANDLOCK=off CC="$WORK/cc-away" run run away2 relu_forward zeros:2x8
    expect_status 0
    none_left'

# A compiler driver's own children (cc1plus, as) are not its: a red team's find was cc1
# running on to its CPU limit, reparented to init, after neuronop was killed mid-build (a
# death signal is not inherited).  The wrapper stands in for the driver: it waits on a
# child of its own.
cat >"$WORK/cc-hang" <<SH
#!/bin/sh
sleep 300 &
echo \$! >>"$WORK/left"
wait
SH
chmod +x "$WORK/cc-hang"

# (and so when neuronop was started with SIGHUP blocked, the guardian's death signal: a
# review's find)
test_expect "a compiler'\''s own children end when neuronop is killed mid-build" '
    copy_example relu hang
    NEURONOP_LANDLOCK=off CC="$WORK/cc-hang" perl -e '"'"'$SIG{HUP} = "IGNORE"; use POSIX;
        sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGHUP)); exec @ARGV'"'"' \
        "$NEURONOP" build --compiler=cc hang >/dev/null 2>&1 &
    np=$!
    i=0
    while [ ! -s "$WORK/left" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    test -s "$WORK/left"
    kill -KILL $np
    wait $np 2>/dev/null || true
    # the compile'\''s group is killed as neuronop goes, not at once; what is left is a
    # zombie at most (its parent went with it, and init may be slow to reap it)
    running() {
        for pid in $(cat "$WORK/left"); do
            st=$(ps -o stat= -p "$pid" 2>/dev/null) || continue
            case $st in Z*) ;; *) echo "left running: $(ps -o pid=,args= -p "$pid")";; esac
        done
    }
    i=0
    while [ -n "$(running)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    left=$(running)
    [ -z "$left" ] || { echo "$left"; kill $(cat "$WORK/left"); exit 1; }
    rm -f "$WORK/left"'

# loud NAME BYTES THEN: $WORK/NAME prints BYTES bytes of 39-byte lines on stderr, then does
# THEN
loud() {
    cat >"$WORK/$1" <<SH
#!/bin/sh
yes "noise from a wrapper, not a diagnostic" | head -c $2 >&2
$3
SH
    chmod +x "$WORK/$1"
}
loud cc-loud 67108864 "exit 1"
loud cxx-loud 16777216 'exec g++ "$@"'

# What a tool prints is a file it writes itself (bounded by the compile's own limit on what
# it writes), of which neuronop reads the first 256 KiB: 64 MiB of it cost neuronop 68 MB
# before (its peak, compilers included), and a build of the example about 3 MB
if [ -n "${NEURONOP_SANITIZED:-}" ] || [ ! -x /usr/bin/time ]; then
    echo "ok $((test_count + 1)) # skip no /usr/bin/time, or AddressSanitizer's quarantine"
    test_count=$((test_count + 1))
else
test_expect "a compiler that prints 64 MiB and fails costs neuronop little, and it says what it left" '
    copy_example relu noisy
    NEURONOP_LANDLOCK=off CC="$WORK/cc-loud" /usr/bin/time -f "maxrss %M" -o rss \
        "$NEURONOP" build --compiler=cc noisy >out 2>err || status=$?
    cat err
    expect_status 3
    expect_err "neuronop: error: compiling failed ('"'"'$WORK/cc-loud'"'"' exited with 1)"
    expect_err "noise from a wrapper, not a diagnostic"
    expect_err "($((67108864 - 262144 / 39 * 39)) more bytes of what it printed were not read)"
    test "$(wc -c <err)" -lt 2048
    rss=$(sed -n "s/^maxrss //p" rss)
    echo "neuronop held at most $rss KiB"
    [ "$rss" -lt 32768 ]'
fi

# A compile that succeeds: its warnings past the start are not read, and it says so; the
# compile cache keeps of its messages only what was read (16 MiB each before)
test_expect "a compiler that prints 16 MiB and succeeds: a warning, and a small cache entry" '
    copy_example negate_cxx chatty
    NEURONOP_LANDLOCK=off NEURONOP_CACHE_DIR=$WORK/cache CXX="$WORK/cxx-loud" \
        run build chatty
    expect_status 0
    expect_err "neuronop: warning: $((16777216 - 262144 / 39 * 39)) more bytes of what '"'"'$WORK/cxx-loud'"'"' printed compiling '"'"'negate.cpp'"'"' were not read"
    ls "$WORK"/cache/*.log
    for log in "$WORK"/cache/*.log; do
        test "$(wc -c <"$log")" -le 262144
    done'

# A build started with SIGCHLD ignored (by a Python script that ignores it, say) could not
# reap its compilers: the kernel reaps them first, and neuronop waited for ever (a Python
# user's find, who saw "'g++' exited with 127"); it now gives SIGCHLD its default action.
copy_example relu_cxx "$WORK/ign"
test_expect "a build started with SIGCHLD ignored compiles, and says so in its exit status" '
    status=0
    timeout 60 perl -e "\$SIG{CHLD} = q(IGNORE); exec @ARGV" "$NEURONOP" build ign >out 2>err ||
        status=$?
    test "$status" -eq 0 || { cat err; exit 1; }
    grep -q "built ign/build/librelu_cxx.so" out
    echo "this is not C++" >>ign/relu.cpp
    status=0
    timeout 60 perl -e "\$SIG{CHLD} = q(IGNORE); exec @ARGV" "$NEURONOP" build ign >out 2>err ||
        status=$?
    test "$status" -eq 3'

test_done
