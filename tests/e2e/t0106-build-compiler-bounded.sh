#!/bin/sh
# A compiler or linker the user names (CC, CXX: here wrapper scripts) is bounded when it ends
# as when it goes past a limit: whatever its status, what is left of its process group is
# killed and reaped, so a wrapper that starts `sleep 300 &` and then execs the real cc leaves
# nothing once the build returns (before, only a compile past its deadline had its group
# killed: t0101); and neuronop's own group, which the wrapper's is not, is left alone.
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

# none_left: no pid in $WORK/left is alive (there was at least one)
none_left() {
    test -s "$WORK/left"
    for pid in $(cat "$WORK/left"); do
        if kill -0 "$pid" 2>/dev/null; then
            echo "left running: $(ps -o pid=,args= -p "$pid")"
            exit 1
        fi
    done
    rm -f "$WORK/left"
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

test_done
