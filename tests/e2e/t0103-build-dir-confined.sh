#!/bin/sh
# Builds stay in their folder: a manifest's build_directory that resolves outside the library
# folder (../.., an absolute path, a `build` symlink pointing elsewhere) is exit 2 at the key,
# and nothing is written outside; `neuronop build --build-dir DIR` is the user's way to build
# elsewhere on purpose.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

mkdir -p "$WORK/elsewhere"
# nothing_elsewhere: the folder outside the library is still empty
nothing_elsewhere() {
    test -z "$(ls -A "$WORK/elsewhere")" || { echo "written outside:"; ls -A "$WORK/elsewhere"; exit 1; }
}

test_expect "build_directory '../elsewhere' is refused at the key (exit 2)" '
    copy_example negate up
    echo "build_directory: ../elsewhere" >>up/neuronop.yaml
    run build up
    expect_status 2
    expect_err "up/neuronop.yaml:14:18: error: build_directory '"'"'../elsewhere'"'"' is outside the library folder (it resolves to '"'"'$WORK/elsewhere'"'"')"
    expect_err "or choose one on the command line with '"'"'neuronop build --build-dir DIR'"'"'"
    nothing_elsewhere'

test_expect "build_directory with ../.. through a folder that does not exist is refused" '
    copy_example negate upup
    echo "build_directory: new/../../elsewhere" >>upup/neuronop.yaml
    run build upup
    expect_status 2
    expect_err "error: build_directory '"'"'new/../../elsewhere'"'"' is outside the library folder"
    nothing_elsewhere
    test ! -e upup/new'

test_expect "an absolute build_directory outside is refused" '
    copy_example negate abs
    echo "build_directory: $WORK/elsewhere" >>abs/neuronop.yaml
    run build abs
    expect_status 2
    expect_err "abs/neuronop.yaml:14:18: error: build_directory '"'"'$WORK/elsewhere'"'"' is outside the library folder"
    nothing_elsewhere'

test_expect "a build symlink pointing elsewhere is refused, by build and by run" '
    copy_example negate link
    ln -s ../elsewhere link/build
    run build link
    expect_status 2
    expect_err "link/neuronop.yaml:1:1: error: the build folder '"'"'build'"'"' is outside the library folder (it resolves to '"'"'$WORK/elsewhere'"'"')"
    run run link negate randn:4
    expect_status 2
    expect_err "the build folder '"'"'build'"'"' is outside the library folder"
    nothing_elsewhere'

test_expect "a build_directory inside the folder, even one not there yet, builds" '
    copy_example negate deep
    echo "build_directory: out/lib/../so" >>deep/neuronop.yaml
    run build deep
    expect_status 0
    test -f deep/out/so/libnegate.so'

test_expect "--build-dir builds where the user says, the manifest unchanged" '
    copy_example negate cli
    ln -s ../elsewhere cli/build
    run build --build-dir "$WORK/cli-out" cli
    expect_status 0
    expect_out "built $WORK/cli-out/libnegate.so"
    test -f "$WORK/cli-out/libnegate.so.stamp"
    nothing_elsewhere
    run build --build-dir "$WORK/cli-out" cli
    expect_status 0
    expect_out "up to date"'
# A build folder that came with the sources may hold anything, a symbolic link where the
# lock goes too: the lock is never opened through one, which would create a file wherever
# it points.
test_expect "a lock that is a symbolic link is refused; nothing is made where it points" '
    copy_example negate lk
    mkdir lk/build
    ln -s ../../lock-target lk/build/.neuronop.lock
    run build lk
    expect_status 2
    expect_err "is a symbolic link, not a build'"'"'s lock"
    test ! -e "$WORK/lock-target"
    test ! -e lk/build/libnegate.so'
# ... and a stamp or a library there may be a link to a FIFO (whose open waits for a writer
# that never comes) or to /dev/zero (which never ends): neither is read, the build makes its
# own over them.  (timeout: without that, the build would wait for ever.)
test_expect "a stamp or library that is a FIFO or /dev/zero is built over, never read" '
    copy_example negate ff
    mkdir ff/build
    mkfifo fifo
    ln -s ../../fifo ff/build/libnegate.so.stamp
    ln -s /dev/zero ff/build/libnegate.so
    status=0
    timeout 20 "$NEURONOP" build ff >out 2>err || status=$?
    expect_status 0
    test -f ff/build/libnegate.so.stamp
    test ! -L ff/build/libnegate.so
    ln -sf ../../fifo ff/build/libnegate.so
    timeout 20 "$NEURONOP" test ff >out 2>err || status=$?
    expect_status 0
    expect_out "2 passed, 0 failed"'
test_expect "a manifest that is a FIFO is refused at once, named or in its folder" '
    mkdir mf
    mkfifo mf/neuronop.yaml
    status=0
    timeout 10 "$NEURONOP" build mf/neuronop.yaml >out 2>err || status=$?
    expect_status 2
    expect_err "YAML file '"'"'mf/neuronop.yaml'"'"' is not a regular file"
    timeout 10 "$NEURONOP" build mf >out 2>err || status=$?
    expect_status 2
    expect_err "is not a regular file"'
test_done
