#!/bin/sh
# User code cannot reach neuronop's own process (issue 20): signals of every kind to it (the
# kernel's own to a descriptor's owner too: fcntl F_SETOWN, F_SETSIG, O_ASYNC), ptrace, its
# /proc/PID/mem opened for writing (openat and openat2) and a limit set on it are each
# trapped and reported by name, neuronop survives to print its summary line, exits 1, and
# leaves no process behind.  Its memory cannot even be read (it is not dumpable, and workers
# have no capabilities); with the sandbox off, the same code reads what it may.
. ./lib.sh
. ./hostile_parent.sh

test_expect "rt_sigqueueinfo(SIGKILL) to neuronop is stopped" 'attack 1 rt_sigqueueinfo'
test_expect "rt_tgsigqueueinfo(SIGKILL) to neuronop is stopped" 'attack 2 rt_tgsigqueueinfo'
test_expect "pidfd_send_signal(SIGKILL) to neuronop is stopped" 'attack 3 pidfd_send_signal'
# the kernel's own signal to a descriptor's owner (F_SETOWN, F_SETSIG, O_ASYNC), each step
test_expect "making neuronop its record pipe's owner (fcntl F_SETOWN) is stopped" 'attack 24 fcntl'
test_expect "choosing the signal of its record pipe (fcntl F_SETSIG) is stopped" 'attack 25 fcntl'
test_expect "making its record pipe signal its owner (O_ASYNC) is stopped" 'attack 26 fcntl'
test_expect "kill(SIGKILL) to neuronop is stopped, and nothing is left running" '
    attack 4 kill
    run_alone run hp attack zeros:4
    expect_status 1'
test_expect "prlimit64 on neuronop (RLIMIT_FSIZE 0) is stopped" '
    attack 5 prlimit64
    run run hp fine zeros:4 -o out.npy
    expect_status 0
    test -s out.npy'
test_expect "neuronop's memory opened for writing with openat is stopped" 'attack 6 openat'
test_expect "neuronop's memory opened for writing with openat2 is stopped" 'attack 7 openat2'
test_expect "ptrace(PTRACE_ATTACH) of neuronop is stopped" 'attack 8 ptrace'
test_expect "neuronop's memory cannot be read through /proc, even by root's workers" '
    run run hp attack zeros:23
    expect_status 1
    expect_err "the shape function returned NULL"
    NEURONOP_SANDBOX=off "$NEURONOP" run hp attack zeros:23 >out 2>err'

test_expect "the same attacks under neuronop test fail their case; the summary is neuronop'\''s" '
    cat >>hp/neuronop.yaml <<EOT
  - {name: signals_parent, op: attack, args: [zeros:1]}
  - {name: limits_parent, op: attack, args: [zeros:5]}
  - {name: writes_parent, op: attack, args: [zeros:7]}
EOT
    run_alone test hp -k _parent
    expect_status 1
    expect_out "FAIL  signals_parent: attack: shape function '\''attack'\'': shape function made a system call the device does not have: rt_sigqueueinfo"
    expect_out "FAIL  limits_parent: attack: shape function '\''attack'\'': shape function made a system call the device does not have: prlimit64"
    expect_out "FAIL  writes_parent: attack: shape function '\''attack'\'': shape function made a system call the device does not have: openat2"
    expect_out "0 passed, 3 failed"'

test_done
