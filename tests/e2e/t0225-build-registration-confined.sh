#!/bin/sh
# The build's NEURON_LIBRARY registration child is confined by an allow-list, as a worker is,
# and dies with neuronop (an adversarial review): under the deny-list it had, registration
# code created a file outside its library with openat2 (and, as root without Landlock, opened
# neuronop's /proc/PID/mem read-write), killed neuronop with tgkill and spun on with no limit
# after it, and set neuronop's own limits with prlimit64.  Each is now the build's error
# (exit 3), with nothing written and no process left; and it inherits no descriptor of
# neuronop's but its pipe (it wrote into the build's lock before).  Without Landlock (off here), so that
# the filter alone is what stops them.
. ./lib.sh
unset NEURONOP_CACHE_DIR

attack() {
    rm -rf lib
    cp -R "$NEURONOP_SRC/tests/fixtures/hostile_registration" lib
    cp "lib/$1.cpp" lib/shape.cpp
    NEURONOP_LANDLOCK=off run_alone build lib
    expect_status 3
    expect_err "the NEURON_LIBRARY registration made a system call a build does not allow"
}

test_expect "a registration cannot create a file with openat2" '
    attack openat2
    if [ -e escaped.txt ]; then cat escaped.txt; exit 1; fi'
test_expect "a registration cannot kill neuronop, nor outlive it" 'attack kill'
test_expect "a registration cannot set neuronop's limits" 'attack prlimit'

test_expect "a registration holds no descriptor of neuronop but its pipe (the lock stays empty)" '
    rm -rf lib
    cp -R "$NEURONOP_SRC/tests/fixtures/hostile_registration" lib
    cp lib/fds.cpp lib/shape.cpp
    NEURONOP_LANDLOCK=off run_alone build lib
    expect_status 0
    test ! -s lib/build/.neuronop.lock'

test_done
