#!/bin/sh
# A reference runs none of the op's code, even through the C++ runtime (issue 20): op code
# that defines a member of std::string which libstdc++ calls through its own PLT is not
# exported from the library, so the reference's std::string use runs libstdc++'s own member
# and the case passes (exported, it trapped inside the reference); a C++ library exports
# nothing but its self-description and argument names.
. ./lib.sh

# lto_source DIR: DIR/lto.c, an asm that holds nothing but the sections of GCC's LTO bytecode
# for an expf returning 0 (from DIR/blobs, each by .incbin): a linker with the LTO plugin
# compiles them into the library, and no reading of the object shows the definition
lto_source() {
    printf "float expf(float x)\n{\n    (void)x;\n    return 0.0f;\n}\n" >"$1/fake.c"
    cc -O2 -fPIC -flto -fno-builtin -c "$1/fake.c" -o "$1/fake.o"
    rm "$1/fake.c"
    mkdir "$1/blobs"
    printf "__asm__(\"" >"$1/lto.c"
    for s in $(readelf -SW "$1/fake.o" | sed -n "s/.*\] \(\.gnu\.lto_[^ ]*\) .*/\1/p"); do
        objcopy --dump-section "$s=$1/blobs/${s#.}.bin" "$1/fake.o"
        printf '.section %s,\\"e\\",@progbits\\n.incbin \\"%s\\"\\n' "$s" \
            "$(cd "$1" && pwd)/blobs/${s#.}.bin" >>"$1/lto.c"
    done
    printf ".text\\\\n\");\n" >>"$1/lto.c"
    rm "$1/fake.o"
}
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

# LTO bytecode in a shape source (GCC's .gnu.lto_ sections, here put together by .incbin):
# the linker's plugin compiled it into the library, an expf that the reference then called,
# invisible to every check of the objects, and a wrong kernel passed (an adversarial review).
test_expect "LTO bytecode in op code is refused, so a reference calls no expf of its" '
    mkdir forge
    printf "name: negate\ncompiler: cc\ncompute_srcs: [negate.c]\nshape_srcs: [shape.c, lto.c]\nreference_srcs: [ref.c]\nops:\n  negate:\n    args: [tensor]\n    shape: negate_shape\n    kernel: negate\ntests:\n  - {name: withref, op: negate, args: [randn:4x4], reference: negate_ref}\n" >forge/neuronop.yaml
    cp "$NEURONOP_SRC/share/neuronop/examples/negate/shape.c" forge/
    printf "#include <neuronop.h>\nnt_tensor *negate(const nt_tensor *t)\n{\n    return nt_zeros(nt_dim(t), nt_sizes(t), NT_F32);\n}\n" >forge/negate.c
    printf "#include <math.h>\n#include <neuronop.h>\nnt_tensor *negate_ref(const nt_tensor *t)\n{\n    nt_tensor *o = nt_empty(nt_dim(t), nt_sizes(t), NT_F32);\n    nt_accessor in = nt_accessor_of(t), out = nt_accessor_of(o);\n    for (int64_t i = 0; i < nt_size(t, 0); i++)\n        for (int64_t j = 0; j < nt_size(t, 1); j++)\n            nt_set_f32(&out, -nt_get_f32(&in, i, j) * expf((float)i * 0.0f), i, j);\n    return o;\n}\n" >forge/ref.c
    lto_source forge
    run test forge
    expect_status 3
    expect_err "forge/lto.c: error: shape function code has LTO bytecode"
    if grep -q passed out; then cat out; exit 1; fi'

test_done
