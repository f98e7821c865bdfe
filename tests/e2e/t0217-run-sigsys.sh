#!/bin/sh
# A trapped system call is reported whatever user code did about SIGSYS (issue 20): a handler
# of its own cannot be installed (rt_sigaction of SIGSYS is itself trapped), and with SIGSYS
# blocked the trap kills the worker, which neuronop reports as a bad system call.  alarm(2),
# whose signal would reach whatever ran next, is trapped too.
. ./lib.sh
. ./hostile_parent.sh

test_expect "a SIGSYS handler of its own is refused by name" 'attack 18 rt_sigaction'
test_expect "with SIGSYS blocked, the trapped call still fails the run, exit 1" '
    run run hp attack zeros:19
    expect_status 1
    expect_err "neuronop: attack: shape function '\''attack'\'': error: the device process died: bad system call (signal 31)"
    expect_err "user code made a system call the device does not have while it kept SIGSYS from the report"'
test_expect "alarm is stopped" 'attack 21 alarm'

test_done
