#!/bin/sh
# neuronop new: a library that builds, runs and passes its tests untouched, on one core and
# on many, with and without memcheck; and every refusal, with nothing written.
. ./lib.sh

test_expect "a new library builds, runs and passes neuronop test as it is" '
    run new mylib
    expect_status 0
    expect_out "created '\''mylib'\''"
    expect_out "  $NEURONOP test mylib"   # not on PATH: by its path, to copy as it is
    for f in neuronop.yaml mylib.c shape.c ref.c README.md .gitignore; do test -f mylib/$f; done
    run run mylib mylib_forward randn:1025
    expect_status 0
    run test mylib
    expect_status 0
    expect_out "4 passed, 0 failed"'

# a new user in the source tree has bin/neuronop, not neuronop, to run (a new user's find)
test_expect "the next steps name neuronop as it runs here" '
    mkdir -p tree/bin
    cp "$NEURONOP" tree/bin/neuronop
    (cd tree && NEURONOP_SHARE_DIR="$NEURONOP_SHARE_DIR" bin/neuronop new lib1) >out
    grep -qx "  bin/neuronop build lib1" out
    (cd tree && PATH="$PWD/bin:$PATH" neuronop new lib2) >out
    grep -qx "  neuronop build lib2" out'

test_expect "its README names the next three commands" '
    grep -qF "neuronop build mylib" mylib/README.md
    grep -qF "neuronop run mylib mylib_forward randn:4x1024" mylib/README.md
    grep -qF "neuronop test mylib" mylib/README.md'

test_expect "a new multicore library passes on 1, 3 and 8 cores, odd sizes included" '
    run new --multicore mc
    expect_status 0
    grep -q "^multicore: true" mc/neuronop.yaml
    grep -q "cores: \[1, 3, 8\]" mc/neuronop.yaml
    grep -q "randn:1, randn:1023, randn:1025" mc/neuronop.yaml
    run test mc
    expect_status 0
    expect_out "4 passed, 0 failed"
    expect_out "(15 executions"'

test_expect "the new kernels pass under --memcheck too" '
    run test --memcheck mc
    expect_status 0
    expect_out "4 passed, 0 failed"
    run test --memcheck mylib
    expect_status 0'

# a new user's find: the kernel copies the input's bytes into floats, so a bfloat16 or int32
# input gave wrong values with "0 errors"; the shape function asserts float32
test_expect "a new C library refuses an input that is not float32, at its shape function" '
    for lib in mylib mc; do
        run run $lib ${lib}_forward full:4x4:2.5:bf16
        expect_status 1
        expect_err "${lib}_forward takes a float32 tensor"
        run run $lib ${lib}_forward arange:8:i32
        expect_status 1
    done'

test_expect "--dir puts it in another folder" '
    mkdir -p sub
    run new ops2 --dir sub/here
    expect_status 0
    test -f sub/here/neuronop.yaml
    grep -q "^name: ops2" sub/here/neuronop.yaml
    run test sub/here
    expect_status 0
    grep -qF "neuronop build sub/here " sub/here/README.md   # (a new user'\''s find: ops2)
    grep -qF "neuronop run sub/here ops2_forward randn:4x1024" sub/here/README.md
    grep -qF "neuronop test sub/here " sub/here/README.md
    run new ops5 --dir "with space/x"   # commands to paste: one shell word each
    expect_status 0
    expect_out "build '\''with space/x'\''"
    grep -qF "neuronop build '\''with space/x'\'' " "with space/x/README.md"'

test_expect "a --dir with a trailing slash names the folder itself" '
    run new ops3 --dir fresh/
    expect_status 0
    test -f fresh/neuronop.yaml
    mkdir -p outer
    run new ops4 --dir outer/inner//
    expect_status 0
    test -f outer/inner/neuronop.yaml
    test -z "$(ls -A . outer | grep neuronop-new || true)"'

test_expect "an existing folder is refused, and left as it was" '
    mkdir taken
    echo mine >taken/keep
    run new taken
    expect_status 2
    expect_err "neuronop: error: '\''taken'\'' already exists; neuronop new never overwrites: pick another name, or a folder with --dir"
    test "$(ls -A taken)" = keep'

test_expect "an existing file is refused too" '
    echo data >afile
    run new x --dir afile
    expect_status 2
    expect_err "'\''afile'\'' already exists"
    test "$(cat afile)" = data'

test_expect "a name that is not a C identifier is refused with a corrected one" '
    run new 3-d-ops
    expect_status 2
    expect_err "neuronop new: error: '\''3-d-ops'\'' cannot name a library: use at most 64 letters, digits and single underscores, starting with a letter and not with '\''nt_'\'', ending in a letter or digit"
    expect_err "for example: neuronop new my_3_d_ops"
    test ! -e 3-d-ops'

# a path is no name: its folder is --dir's (a new user's try suggested tmp_nu_x_deep_ops)
test_expect "a path given as the name suggests --dir with the folder's last part" '
    run new "$PWD/deep/ops"
    expect_status 2
    expect_err "to make the library in that folder: neuronop new --dir $PWD/deep/ops ops"
    test ! -e deep'

# Before, new accepted _Foo, _ and nt__x, whose libraries the build then refused (reserved
# names), and suggested _3_d_ops: each refused name's suggestion must build and pass.
test_expect "names whose functions would be reserved are refused; each suggestion builds" '
    for bad in _Foo _ __x nt_ nt__x -Abc a--b 3d nt-x builtin- a_ a__b; do
        run new -- "$bad"
        expect_status 2
        test ! -e "./$bad"
        good=$(sed -n "s/.*for example: neuronop new \([^ ]*\).*/\1/p" err)
        if [ -d "$good" ]; then   # two bad names may have the same suggestion: said so
            expect_err "for example: neuronop new $good ('\''$good'\'' is here already: add --dir FOLDER)"
            continue
        fi
        run new "$good"
        expect_status 0
        run test "$good"
        expect_status 0
    done'

test_expect "the reserved name builtin is refused" '
    run new builtin
    expect_status 2
    expect_err "neuronop new: error: '\''builtin'\'' is reserved for the device'\''s own ops; pick another name"'

test_expect "--cxx writes torch-style C++ whose manifest is custom_op.load'\''s arguments" '
    run new --cxx cx
    expect_status 0
    expect_out "created '\''cx'\'': op library '\''cx'\'' with op '\''cx_forward'\'' (C++, one core)"
    test "$(ls -A cx | sort | tr "\n" " ")" = ".gitignore README.md cx.cpp neuronop.yaml ref.cpp shape.cpp "
    grep -q "^#include <torch/torch.h>" cx/cx.cpp
    grep -q "NEURON_LIBRARY(cx, m)" cx/shape.cpp
    ! grep -q "^ops:" cx/neuronop.yaml'

test_expect "the C++ library builds with its ops from the registration, and passes its tests" '
    run build cx
    expect_status 0
    expect_out "namespace: cx"
    expect_out "ops: cx_forward(tensor)"
    run test cx
    expect_status 0
    expect_out "4 passed, 0 failed"
    run test --memcheck cx
    expect_status 0
    expect_out "4 passed, 0 failed"'

test_expect "--cxx --multicore passes on 1, 3 and 8 cores, sizes that do not divide included" '
    run new --cxx --multicore cm
    expect_status 0
    expect_out "(C++, multicore)"
    grep -q "^multicore: true" cm/neuronop.yaml
    run test cm
    expect_status 0
    expect_out "4 passed, 0 failed"
    run run cm cm::cm_forward full:10:-2
    expect_status 0
    expect_out "values: 0 0 0 0 0 0 0 0 0 0"'

test_expect "the folders above --dir that are missing are made, as in the man page" '
    run new --multicore my_mc_ops --dir ops/mc
    expect_status 0
    test -f ops/mc/neuronop.yaml
    run test ops/mc
    expect_status 0'

test_expect "a folder that cannot be made is an error, and nothing made stays" '
    : >plainfile
    run new y --dir plainfile/sub/y
    expect_status 2
    expect_err "neuronop: error: cannot create a folder in '\''plainfile/sub'\'': Not a directory"
    test -z "$(ls -A . | grep neuronop-new || true)"
    # the parents fit in PATH_MAX, the temporary folder beside the target does not: the
    # 1359 folders made for it are removed again
    deep=$(printf "dd/%.0s" $(seq 1359))
    run new y --dir "${deep}y"
    expect_status 2
    expect_err "neuronop: error: cannot create a folder in '\''dd/dd/dd/"
    test ! -e dd'

test_done
