#!/bin/sh
# No worker survives neuronop (issue 20): user code that blocks every signal and spins, under
# `run` and under `test` (a zygote and its child), dies with neuronop whether neuronop is
# stopped by SIGTERM or SIGKILL; and clearing its death signal (prctl) is trapped.  A case
# stopped at its deadline leaves not even a zombie: the zygote and its child, killed
# together, are reaped by neuronop (which adopts the child), not left to an init that may
# reap them late or never.
. ./lib.sh
. ./hostile_parent.sh
cat >>"$WORK/hp/neuronop.yaml" <<EOT
  - {name: lives_forever, op: immortal, args: [zeros:4]}
EOT

# stopped SIG N ARGS...: starts neuronop ARGS in a session of its own, sends it SIG once N
# live processes are in the session (neuronop and its workers) and the last has had 0.3 s to
# start spinning, then waits up to 3 s for every live process of the session to be gone
stopped() {
    sig=$1 want=$2
    shift 2
    rm -f sid
    in_session sid "$NEURONOP" "$@" >out 2>err &
    for i in $(seq 100); do
        [ ! -f sid ] || [ "$(session_left "$(cat sid)" | wc -l)" -lt "$want" ] || break
        sleep 0.05
    done
    pid=$(cat sid)
    [ "$(session_left "$pid" | wc -l)" -ge "$want" ] || {
        echo "never saw $want processes:"; session_left "$pid"; return 1; }
    sleep 0.3
    kill -"$sig" "$pid"
    wait || true
    for i in $(seq 30); do
        left=$(session_left "$pid")
        test -n "$left" || return 0
        sleep 0.1
    done
    echo "left behind: $left"
    return 1
}

test_expect "a worker that blocks every signal dies with neuronop stopped by SIGTERM" '
    stopped TERM 2 run hp immortal zeros:4 --timeout 100'
test_expect "a worker that blocks every signal dies with neuronop stopped by SIGKILL" '
    stopped KILL 2 run hp immortal zeros:4 --timeout 100'
test_expect "a zygote and its child die with neuronop test stopped by SIGKILL" '
    stopped KILL 3 test hp -k lives_forever --timeout 100'
test_expect "clearing the death signal is stopped" 'attack 20 prctl'
# (a copy of neuronop under a name of its own: session_left counts no zombie, which is dead,
# but a zombie's name is its program's, and no other test runs this one)
test_expect "a case stopped at its deadline leaves not even a zombie" '
    cp "$NEURONOP" nop-reap-e2e
    NEURONOP=./nop-reap-e2e run_alone test hp -k lives_forever --timeout 1
    expect_status 1
    expect_out "timeout: it did not finish within its time limit"
    zombies=$(ps -eo stat=,comm= | awk "\$1 ~ /^Z/ && \$2 == \"nop-reap-e2e\"")
    test -z "$zombies" || { echo "left: $zombies"; exit 1; }'

test_done
