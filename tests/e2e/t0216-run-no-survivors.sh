#!/bin/sh
# No worker survives neuronop (issue 20): user code that blocks every signal and spins, under
# `run` and under `test` (a zygote and its child), dies with neuronop whether neuronop is
# stopped by SIGTERM or SIGKILL; and clearing its death signal (prctl) is trapped.
. ./lib.sh
. ./hostile_parent.sh
cat >>"$WORK/hp/neuronop.yaml" <<EOT
  - {name: lives_forever, op: immortal, args: [zeros:4]}
EOT

# stopped SIG ARGS...: starts neuronop ARGS with a mark, sends it SIG once its worker spins,
# then waits up to 3 s for every process carrying the mark to be gone
stopped() {
    sig=$1
    shift
    mark="NEURONOP_E2E_MARK=$$.$test_count.$sig"
    env "$mark" "$NEURONOP" "$@" >out 2>err &
    pid=$!
    sleep 0.5
    kill -"$sig" "$pid"
    wait "$pid" || true
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
        left=
        for e in /proc/[0-9]*/environ; do
            if { tr "\0" "\n" <"$e"; } 2>/dev/null | grep -qx "$mark"; then left=$e; fi
        done
        test -n "$left" || return 0
        sleep 0.2
    done
    echo "left behind: $left"
    return 1
}

test_expect "a worker that blocks every signal dies with neuronop stopped by SIGTERM" '
    stopped TERM run hp immortal zeros:4 --timeout 100'
test_expect "a worker that blocks every signal dies with neuronop stopped by SIGKILL" '
    stopped KILL run hp immortal zeros:4 --timeout 100'
test_expect "a zygote and its child die with neuronop test stopped by SIGKILL" '
    stopped KILL test hp -k lives_forever --timeout 100'
test_expect "clearing the death signal is stopped" 'attack 20 prctl'

test_done
