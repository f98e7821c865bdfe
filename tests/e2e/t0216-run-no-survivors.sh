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
# built again now that its manifest changed: a build in the first test would run a compiler
# child in neuronop's session, which `stopped` could count as the worker it waits for (seen
# under AddressSanitizer on a busy machine: the count then fell back to one)
(cd "$WORK" && "$NEURONOP" build hp >/dev/null 2>&1)

test_expect "a worker that blocks every signal dies with neuronop stopped by SIGTERM" '
    stopped TERM 2 run hp immortal zeros:4 --timeout 100'
test_expect "a worker that blocks every signal dies with neuronop stopped by SIGKILL" '
    stopped KILL 2 run hp immortal zeros:4 --timeout 100'
test_expect "a zygote and its child die with neuronop test stopped by SIGKILL" '
    stopped KILL 3 test hp -k lives_forever --timeout 100'
test_expect "clearing the death signal is stopped" 'attack 20 prctl'
# stopped by the parent at its phase's deadline, as a kernel inside a long runtime call is
# (the detail once suggested only a loop: a Python user's find, whose kernel added 300 M
# elements with the tensor library)
test_expect "a kernel past its phase's deadline is stopped there, and the detail says why" '
    run run hp immortal zeros:4 --timeout 1
    expect_status 1
    expect_err "timeout: it did not finish within its time limit and was stopped"
    expect_err "a tensor-library op on a large tensor, is stopped only here, at its phase'\''s deadline"'
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
