#!/bin/sh
# A case's reference runs alongside its executions only when neuronop may keep two CPUs busy
# (neuronop-test(1)): its CPU affinity must allow two, and so must its cgroups' CPU quota,
# which a container limited to one CPU (docker --cpus=1) has while its affinity shows every
# CPU of the host.  `neuronop test -v` says which it does, and why.  The quota cases need a
# cgroup this test may make (root, a writable cgroup file system with the cpu controller):
# elsewhere they are skipped, saying so.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/refalong" "$WORK/ra"
(cd "$WORK" && "$NEURONOP" build ra >/dev/null 2>&1)

after1="neuronop: note: a case's reference runs after its executions: 1 CPU to spare by the"
after1="$after1 CPU affinity and the cgroups' CPU quota, fewer than 2"

# the first CPU this test may use: CPU 0 need not be one (a container given CPUs 2-3)
first_cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')

test_expect "with one CPU in its affinity, a reference runs after the executions" '
    status=0
    taskset -c "$first_cpu" "$NEURONOP" test -v ra -k quick_honest \
        >"$WORK/out" 2>"$WORK/err" || status=$?
    expect_status 0
    expect_err "$after1"
    expect_out "1 passed, 0 failed, 4 skipped"'

# cg_dir QUOTA: the cgroup quota_cgroup QUOTA makes (in v2's hierarchy, or v1's cpu one)
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
    v2=yes cg_root=/sys/fs/cgroup
else
    v2= cg_root=/sys/fs/cgroup/cpu
fi
cg_dir() {
    echo "$cg_root/neuronop-t0232-$$-$1"
}
# quota_cgroup QUOTA PERIOD: makes a cgroup whose CPU limit is QUOTA/PERIOD (cgroup v2's
# cpu.max, or v1's cfs files) and prints the file a process joins it by; fails when it cannot
quota_cgroup() {
    d=$(cg_dir "$1")
    mkdir "$d" 2>/dev/null || return 1
    if [ -n "$v2" ]; then
        echo "$1 $2" >"$d/cpu.max" 2>/dev/null && echo "$d/cgroup.procs"
    else
        echo "$2" >"$d/cpu.cfs_period_us" 2>/dev/null &&
            echo "$1" >"$d/cpu.cfs_quota_us" 2>/dev/null && echo "$d/tasks"
    fi
}
# in_cgroup PROCS ARGS...: runs neuronop ARGS in the cgroup that PROCS joins, as run does
in_cgroup() {
    procs=$1
    shift
    status=0
    sh -c 'echo $$ >"$0" && exec "$@"' "$procs" "$NEURONOP" "$@" \
        >"$WORK/out" 2>"$WORK/err" || status=$?
}

# the cgroups go with the test however it ends (a failed expectation, set -u, a signal from
# a harness's timeout): left behind, each run would add two to the machine's hierarchy.  A
# process still in one (a worker being reaped) is ended first, else rmdir cannot remove it.
remove_cgroups() {
    for q in 100000 150000; do
        d=$(cg_dir $q)
        [ -d "$d" ] || continue
        procs="$d/tasks"
        [ -n "$v2" ] && procs="$d/cgroup.procs"
        tries=0
        until rmdir "$d" 2>/dev/null || [ $tries -ge 50 ]; do
            xargs -r kill -KILL <"$procs" 2>/dev/null
            sleep 0.1
            tries=$((tries + 1))
        done
        [ ! -d "$d" ] || echo "# t0232: could not remove $d" >&2
    done
}
trap 'remove_cgroups; rm -rf "$WORK"' EXIT   # (lib.sh makes a signal an exit)

one=$(quota_cgroup 100000 100000 || true)
half=$(quota_cgroup 150000 100000 || true)
if [ -n "$one" ] && [ -n "$half" ] && [ "$(nproc)" -ge 2 ]; then
    test_expect "a cgroup quota of one CPU keeps the reference after the executions" '
        in_cgroup "$one" test -v ra -k quick_honest
        expect_status 0
        expect_err "$after1"
        expect_out "1 passed, 0 failed, 4 skipped"'
    test_expect "a quota of one and a half CPUs is not two" '
        in_cgroup "$half" test -v ra -k quick_honest
        expect_status 0
        expect_err "runs after its executions: 1.5 CPUs to spare by the CPU affinity"'
else
    for what in "a cgroup quota of one CPU" "a quota of one and a half CPUs"; do
        test_count=$((test_count + 1))
        echo "ok $test_count # skip $what: no cgroup with a CPU quota can be made here" \
            "(it takes root and a writable cgroup file system), or one CPU only"
    done
fi
test_done
