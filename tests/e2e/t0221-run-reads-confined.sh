#!/bin/sh
# User code reads nothing outside its library folder (issue 20): with Landlock, a worker may
# read its library, the library folder and the system's library folders, and no other file a
# user can read (one beside the library folder, /etc/passwd, /proc of another process), under
# `run` and under `test`; its own sources stay readable; a library lying in the user's home
# gets no folder at all; the worker's environment is empty; and the build's registration
# child is held the same way.  Without Landlock (NEURONOP_LANDLOCK=off,
# as on an older kernel) the same reads get through, as neuronop-run(1) TRUST says.
. ./lib.sh
# a kernel without Landlock (before 5.13, or disabled) confines no reads: those tests skip
# (test_landlock, lib.sh)
landlock_probe
. ./hostile_parent.sh
echo "token=do-not-print" >"$WORK/secret.txt"

test_landlock "a shape function reads no file outside its library folder" '
    run run hp attack zeros:27
    expect_status 1
    expect_err "the shape function returned NULL"'

test_expect "without Landlock the same reads get through (what TRUST says remains)" '
    NEURONOP_LANDLOCK=off "$NEURONOP" run hp attack zeros:27 >out 2>err'

test_landlock "a relative LD_LIBRARY_PATH folder is not read (it would be this one)" '
    LD_LIBRARY_PATH=. "$NEURONOP" run hp attack zeros:27 >out 2>err && exit 1
    grep -q "the shape function returned NULL" err'

test_landlock "its own library folder stays readable" '
    run run hp attack zeros:28
    expect_status 0'

test_landlock "a library beside the user's files in their home reads only itself" '
    cp hp/build/libhostile_parent.so lonely.so
    HOME=$WORK "$NEURONOP" run lonely.so attack zeros:27 >out 2>err && exit 1
    grep -q "the shape function returned NULL" err'

copy_example relu_tcm "$WORK/relu"
test_landlock "-v says reads are confined, with the Landlock ABI the kernel reports" '
    run run -v relu relu_forward zeros:4
    expect_status 0
    expect_err "neuronop: note: user code runs in workers under a seccomp allow-list, reading only its library folder and the system'"'"'s libraries (Landlock ABI $landlock_abi)"'

test_expect "-v says when reads are not confined, and when there is no worker" '
    NEURONOP_LANDLOCK=off "$NEURONOP" test -v relu >out 2>err
    grep -q "^neuronop: note: user code runs in workers under a seccomp allow-list, but may read every file the user can: NEURONOP_LANDLOCK=off$" err
    NEURONOP_SANDBOX=off "$NEURONOP" bench -v relu relu_forward zeros:4 --iters 2 >out 2>err
    grep -q "^neuronop: note: user code runs in neuronop'"'"'s own process (NEURONOP_SANDBOX=off)$" err'

test_expect "the worker's environment is empty: no CI secret to print" '
    NEURONOP_E2E_SECRET=token run run hp attack zeros:29
    expect_status 1
    expect_err "the shape function returned NULL"'

test_landlock "a C++ registration reads no file nor the environment (they would name its ops)" '
    cp -R "$NEURONOP_SRC/tests/fixtures/regreads" regreads
    run build regreads
    expect_status 0
    NEURONOP_LANDLOCK=off "$NEURONOP" build --force regreads >out 2>err && exit 1
    grep -q "is not registered by NEURON_LIBRARY" err'

test_landlock "under neuronop test, the case that reads outside fails and the other passes" '
    cat >>hp/neuronop.yaml <<EOT
  - {name: reads_outside, op: attack, args: [zeros:27]}
  - {name: reads_own, op: attack, args: [zeros:28]}
EOT
    run test hp -k reads_
    expect_status 1
    expect_out "FAIL  reads_outside"
    expect_out "1 passed, 1 failed"'

test_done
