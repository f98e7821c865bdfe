#!/bin/sh
# A reference runs none of the op's code, even through the C++ runtime (issue 20): op code
# that defines a member of std::string which libstdc++ calls through its own PLT is not
# exported from the library, so the reference's std::string use runs libstdc++'s own member
# and the case passes (exported, it trapped inside the reference); a C++ library exports
# nothing but its self-description and argument names.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/interpose" "$WORK/ip"
cp "$NEURONOP_SRC/share/neuronop/examples/negate_cxx/negate.cpp" "$WORK/ip/"

test_expect "op code defining a libstdc++ member does not run inside the reference" '
    run test ip
    if [ -n "${NEURONOP_SANITIZED:-}" ] && [ "$status" = 3 ]; then
        # a sanitized neuronop has the C++ runtime loaded itself, so the build already
        # refuses the name as the toolchain'\''s (check.c): it never runs either
        expect_err "shape function code defines '\''_ZNSt7__cxx1112basic_string"
    else
        expect_status 0
        expect_out "1 passed, 0 failed"
    fi'

test_expect "a C++ library exports only its self-description and argument names" '
    # in a folder whose name has a comma, which the linker'\''s -Wl, would split
    mkdir "a,b"
    cp -R "$NEURONOP_SRC/share/neuronop/examples/negate_cxx" "a,b/neg"
    rm -rf "a,b/neg/build"
    run build "a,b/neg"
    expect_status 0
    nm -D --defined-only "a,b/neg/build/libnegate_cxx.so" | awk "{ print \$3 }" | sort >exports
    printf "neuronop_argnames\nneuronop_library\n" >want
    diff -u want exports'

test_done
