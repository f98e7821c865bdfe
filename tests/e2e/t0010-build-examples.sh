#!/bin/sh
# neuronop build on the shipped examples: what it prints, incremental rebuilds, --force,
# --json, -v, and inspect.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

for ex in relu relu_tcm relu_multicore; do
    copy_example $ex "$WORK/$ex"
done

test_expect "builds the standard-accessor relu" '
    run build relu
    expect_status 0
    expect_out "relu: built relu/build/librelu.so"
    expect_out "ops: relu_forward(tensor), relu_backward(tensor, tensor)"
    expect_out "multicore: no, stack: 6144 bytes (default)"
    test -f relu/build/librelu.so
    test -f relu/build/librelu.so.stamp'

test_expect "a second build is up to date and compiles nothing" '
    run build relu
    expect_status 0
    expect_out "relu: up to date: relu/build/librelu.so"'

test_expect "the manifest path works as well as its folder" '
    run build relu/neuronop.yaml
    expect_status 0
    expect_out "up to date"'

test_expect "with no argument it builds the current folder" '
    cd relu
    run build
    expect_status 0
    expect_out "relu: up to date: build/librelu.so"'

test_expect "a library is up to date however its folder is named, headers beside it too" '
    copy_example relu spelled
    echo "#define SPELLED 1" >spelled/spelled.h
    run build spelled
    expect_out "relu: built spelled/build/librelu.so"
    ln -s spelled alias
    before=$(stat -c "%i %y" spelled/build/librelu.so spelled/build/librelu.so.stamp)
    for name in "$WORK/spelled" ./spelled/ spelled/neuronop.yaml "$WORK/./spelled/" alias; do
        run build "$name"
        expect_status 0
        expect_out "relu: up to date: "
    done
    cd spelled
    run build
    expect_out "relu: up to date: build/librelu.so"
    test "$(stat -c "%i %y" build/librelu.so build/librelu.so.stamp)" = "$before"'

test_expect "--force rebuilds" '
    run build --force relu
    expect_status 0
    expect_out "built"'

test_expect "touching without changing does not rebuild; changing a source does" '
    touch relu/relu.c
    run build relu
    expect_out "up to date"
    echo "/* changed */" >>relu/relu.c
    run build relu
    expect_out "built"'

test_expect "changing a header beside the sources rebuilds" '
    echo "#define UNUSED 1" >relu/extra.h
    run build relu
    expect_out "built"'

# the key takes a header by the file it resolves to: through a symlink, the target's content
test_expect "a header beside the sources that is a symlink counts by what it points to" '
    copy_example relu linked
    echo "#define TARGET 1" >"$WORK/target.h"
    ln -s "$WORK/target.h" linked/linked.h
    run build linked
    expect_out "relu: built linked/build/librelu.so"
    run build linked
    expect_out "relu: up to date: "
    echo "#define TARGET 2" >"$WORK/target.h"
    run build linked
    expect_out "relu: built linked/build/librelu.so"'

# a header in a subfolder and a table.inc were not in the key: a changed one left the library
# "up to date", built from the old text
test_expect "changing a file the sources include from a subfolder, of any name, rebuilds" '
    copy_example relu deep
    mkdir -p deep/detail/more
    echo "#include \"more/zero.h\"" >deep/detail/relu_helpers.h
    echo "#define RELU_ZERO 0.0f" >deep/detail/more/zero.h
    echo "static const float relu_one = 1.0f;" >deep/table.inc
    sed -i "s|^#include <neuronop.h>$|&\n#include \"detail/relu_helpers.h\"\n#include \"table.inc\"|" \
        deep/relu.c
    grep -q "^#include \"table.inc\"$" deep/relu.c
    run build deep
    expect_out "relu: built"
    run build deep
    expect_out "relu: up to date"
    echo "#define RELU_ZERO 0.0f /* changed */" >deep/detail/more/zero.h
    run build deep
    expect_out "relu: built"
    echo "static const float relu_one = 1.0f; /* changed */" >deep/table.inc
    run build deep
    expect_out "relu: built"
    echo "/* README: not included */" >deep/detail/notes.txt
    run build deep
    expect_out "relu: up to date"'

# which file a macro names only the compiler knows: then every file of the folder counts
test_expect "with an #include that names its file by a macro, any file of the folder rebuilds" '
    copy_example relu computed
    mkdir computed/sub
    echo "#define RELU_ZERO 0.0f" >computed/sub/zero.h
    sed -i "s|^#include <neuronop.h>$|&\n#define ZERO_H \"sub/zero.h\"\n#include ZERO_H|" \
        computed/relu.c
    run build computed
    expect_out "relu: built"
    run build computed
    expect_out "relu: up to date"
    echo "#define RELU_ZERO 0.0f /* changed */" >computed/sub/zero.h
    run build computed
    expect_out "relu: built"
    run build computed
    expect_out "relu: up to date"'

# a reviewer's finds in the scan: beside a symlink (as the compilers look), the whole folder
# under --library-dir (as custom_op.load builds) and its outputs left out when the build
# folder is the library's own (a byte order mark, which libtcc does not skip: test_build)
test_expect "the scan follows includes as the compilers do, in every layout of a build" '
    copy_example relu odd
    mkdir -p odd/common odd/sub
    echo "#include \"x.h\"" >odd/common/real.h
    echo "#define RELU_X 1" >odd/sub/x.h
    ln -s ../common/real.h odd/sub/link.h
    sed -i "s|^#include <neuronop.h>$|&\n#include \"sub/link.h\"|" odd/relu.c
    run build odd
    expect_out "relu: built"
    echo "#define RELU_X 2" >odd/sub/x.h
    run build odd
    expect_out "relu: built"
    mkdir -p lay/meta lay/src/sub
    cp relu/shape.c lay/src/
    sed "s|^#include <neuronop.h>$|&\n#define ZERO_H \"sub/zero.h\"\n#include ZERO_H|" \
        relu/relu.c >lay/src/relu.c
    echo "#define RELU_ZERO 0.0f" >lay/src/sub/zero.h
    printf "%s\n" "name: relu" "compute_srcs: [../src/relu.c]" "shape_srcs: [../src/shape.c]" \
        "ops:" "  relu_forward:" "    args: [tensor]" \
        "    shape: relu_fwd_shape" "    kernel: relu_forward" "  relu_backward:" \
        "    args: [tensor, tensor]" "    shape: relu_bwd_shape" "    kernel: relu_backward" \
        >lay/meta/relu.yaml
    "$NEURONOP" build --build-dir lay --library-dir lay lay/meta/relu.yaml >out 2>err
    grep -q "relu: built" out
    "$NEURONOP" build --build-dir lay --library-dir lay lay/meta/relu.yaml >out 2>err
    grep -q "relu: up to date" out
    echo "#define RELU_ZERO 0.0f /* changed */" >lay/src/sub/zero.h
    "$NEURONOP" build --build-dir lay --library-dir lay lay/meta/relu.yaml >out 2>err
    grep -q "relu: built" out
    echo "#pragma comment(option, \"-w\")" >>lay/src/sub/zero.h
    "$NEURONOP" build --build-dir lay --library-dir lay lay/meta/relu.yaml >out 2>err &&
        exit 1
    grep -q "^lay/src/sub/zero.h:2:1: error: #pragma comment sets libtcc" err'

# read a few KB at a time, in time linear in its size: an option pragma deep in a header, on
# a line far longer than that, is found (a reviewer'\''s find: past 16 MB it was not)
test_expect "an option pragma anywhere in a large header of the library is refused" '
    copy_example relu deep_pragma
    sed -i "s|^#include <neuronop.h>$|&\n#include \"big.h\"|" deep_pragma/relu.c
    awk "BEGIN { for (i = 0; i < 40000; i++) print \"// filler\";
                 s = \"\"; for (i = 0; i < 9000; i++) s = s \"y\";
                 print \"/* \" s \" */ _Pragma(\\\"comment(option, \\\\\\\"-w\\\\\\\")\\\")\" }" \
        >deep_pragma/big.h
    grep -q "_Pragma(\"comment(option" deep_pragma/big.h
    run build deep_pragma
    expect_status 3
    expect_err "deep_pragma/big.h:40001:1: error: #pragma comment sets libtcc"'

test_expect "changing the manifest rebuilds" '
    echo "# comment" >>relu/neuronop.yaml
    run build relu
    expect_out "built"'

test_expect "a library replaced behind our back is rebuilt" '
    cp relu_tcm/neuronop.yaml /dev/null
    run build relu_tcm
    expect_out "built"
    printf garbage >relu_tcm/build/librelu_tcm.so
    run build relu_tcm
    expect_status 0
    expect_out "built"'

test_expect "multicore is recorded" '
    run build relu_multicore
    expect_out "multicore: yes"'

test_expect "-v shows each compile step and its flags" '
    run build -v --force relu
    expect_status 0
    expect_err "neuronop: note: compile (device) relu/relu.c: libtcc -I"
    expect_err "neuronop: note: compile (host) relu/shape.c"
    expect_err "neuronop: note: link relu/build/librelu.so"'

test_expect "--json is valid JSON with the metadata" '
    run build --json relu
    expect_status 0
    jq -e ".status == \"up to date\" and .library.library == \"relu\" and
           (.library.ops | length) == 2 and .library.ops[1].args == [\"tensor\", \"tensor\"] and
           .library.stack_size == 6144 and .library.multicore == false and
           (.library.sources[0].xxh3_128 | length) == 32" "$WORK/out"'

test_expect "STACK_SIZE from extra_cflags is recorded with its origin" '
    sed -i "s/^compute_srcs/extra_cflags: [-DSTACK_SIZE=20000]\ncompute_srcs/" relu/neuronop.yaml
    run build relu
    expect_out "stack: 20000 bytes (from extra_cflags)"
    run inspect relu/build/librelu.so
    expect_status 0
    jq -e ".stack_size == 20000 and .stack_size_from == \"extra_cflags\" and
           .extra_cflags == [\"-DSTACK_SIZE=20000\"]" "$WORK/out"'

test_expect "inspect takes a folder and builds it first" '
    run inspect relu_tcm
    expect_status 0
    jq -e ".library == \"relu_tcm\"" "$WORK/out"'

test_expect "inspect refuses a file that is not an op library" '
    printf "not elf" >fake.so
    run inspect fake.so
    expect_status 2
    expect_err "neuronop: error: '\''fake.so'\'' is not a neuronop op library"'

test_expect "inspect of a missing library says so" '
    run inspect nothing.so; expect_status 2; expect_err "cannot read library '\''nothing.so'\''"'

test_expect "a missing tcc runtime is explained" '
    export NEURONOP_TCC_DIR=/nonexistent
    run build --force relu
    expect_status 2
    expect_err "NEURONOP_TCC_DIR is '\''/nonexistent'\'', which has no libtcc1.a"'

test_expect "a missing share folder is explained" '
    export NEURONOP_SHARE_DIR=/nonexistent
    run build --force relu
    expect_status 2
    expect_err "cannot find neuronop.h in '\''/nonexistent/include'\''"'

test_expect "a library built by another neuronop is rebuilt (the key covers neuronop itself)" '
    run build relu_tcm
    expect_out "up to date"
    cp "$NEURONOP" np2
    id=$(readelf -n np2 | sed -n "s/.*Build ID: //p")
    if [ -n "$id" ]; then   # the same program under another identity: rotate each ID byte
        ID=$id perl -0777 -pi -e '\''my $o = pack("H*", $ENV{ID}); (my $n = $o) =~ tr/\0-\377/\1-\377\0/; s/\Q$o\E/$n/'\'' np2
        test "$(readelf -n np2 | sed -n "s/.*Build ID: //p")" != "$id"
    else
        printf x >>np2
    fi
    ./np2 build relu_tcm >out 2>err
    grep -q "relu_tcm: built" out'

test_expect "every kind of accepted flag builds and runs (none may crash libtcc)" '
    copy_example relu_tcm "$WORK/flags"
    mkdir -p flags/inc
    echo "#define FROM_INC 1" >flags/inc/x.h
    sed -i "s|^compute_srcs|extra_cflags: [-g, -O2, -w, -Wall, -Werror, -std=c11, -funsigned-char, \"-DMSG=a b\", -DX=1, -UX, -Iinc]\ncompute_srcs|" flags/neuronop.yaml
    run build flags
    expect_status 0
    expect_out "relu_tcm: built"
    run run flags relu_forward randn:16
    expect_status 0'

test_expect "build_directory is honoured" '
    sed -i "1a build_directory: out/lib" relu_tcm/neuronop.yaml
    run build relu_tcm
    expect_status 0
    test -f relu_tcm/out/lib/librelu_tcm.so'

# Under libtcc a glibc header defined __attribute__ away for the rest of the source (glibc's
# sys/cdefs.h, for a compiler it does not take for GNU C): a packed struct after <string.h>
# was 8 bytes, not 5, silently.  The system compiler, as the device's, is the expectation.
mkdir -p "$WORK/attr"
cat >"$WORK/attr/probe.h" <<'H'
#include <string.h>
#include <math.h>
#include <assert.h>
struct packed_probe { char c; int x; } __attribute__((packed));
struct aligned_probe { char c; } __attribute__((aligned(64)));
H
printf '#include <stdio.h>\n#include "probe.h"\nint main(void) { printf("%%d %%d\\n", (int)sizeof(struct packed_probe), (int)_Alignof(struct aligned_probe)); return 0; }\n' \
    >"$WORK/attr/probe.c"
cat >"$WORK/attr/k.c" <<'K'
#include <neuronop.h>
#include "probe.h"
nt_tensor *sizes(const nt_tensor *t)
{
    nt_tensor *out = get_dst_tensor();
    nt_accessor a = nt_accessor_of(out);
    nt_set_f32(&a, (float)sizeof(struct packed_probe), 0);
    nt_set_f32(&a, (float)_Alignof(struct aligned_probe), 1);
    return out;
}
K
printf '#include <neuronop.h>\nnt_tensor *sizes_shape(const nt_tensor *t) { return nt_empty(NT_SHAPE(2), NT_F32); }\n' \
    >"$WORK/attr/s.c"
printf 'name: attr\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\nops:\n  sizes: {args: [tensor], shape: sizes_shape, kernel: sizes}\n' \
    >"$WORK/attr/neuronop.yaml"
test_expect "attributes after a glibc header keep their meaning under libtcc, as under cc" '
    cc -o attr/probe attr/probe.c
    want=$(attr/probe)
    [ "$want" = "5 64" ]
    run run attr sizes zeros:1
    expect_status 0
    expect_out "values: 5 64"'

# math.h is the device's (neuronop-api(3)), all of it: under libtcc glibc's classification
# macros are calls of __isnanf, __finite, __signbit and __fpclassify, which were refused as
# functions the device does not have, as were the long double functions, nan, remquo,
# scalbln and nexttoward.  The system compiler is the expectation.
mkdir -p "$WORK/mathh"
cat >"$WORK/mathh/probe.h" <<'H'
#include <math.h>
static void math_probe(float *v)
{
    volatile float vf = 1.5f, vnan = NAN, vinf = -INFINITY, vsub = 1e-40f;
    volatile double vd = 7.0;
    volatile long double vl = 2.0L;
    int q = 0;
    v[0] = (float)(isnan(vnan) != 0) + 2 * (isnan(vf) != 0) + 4 * (isinf(vinf) != 0) +
           8 * (isfinite(vd) != 0) + 16 * (signbit(vinf) != 0) + 32 * (isnormal(vsub) != 0);
    v[1] = (float)(fpclassify(vsub) == FP_SUBNORMAL) + 2 * (fpclassify(vl) == FP_NORMAL) +
           4 * (isnan(vl) != 0) + 8 * (isinf(vl) != 0) + 16 * (signbit(-vl) != 0);
    v[2] = (float)sqrtl(vl);
    v[3] = (float)remquo(vd, 2.0, &q);
    v[4] = (float)q;
    v[5] = (float)(isnan(nanf("")) != 0) + 2 * (isnan(nan("")) != 0) + 4 * (isnan(nanl("")) != 0);
    v[6] = (float)(nexttoward(1.0, vl) - 1.0) * 1e16f;
    v[7] = (float)scalbln(vd, 3) + (float)scalblnf(vf, 2);
    v[8] = (float)(expl(vl) + fabsl(-vl) + powl(vl, 3.0L));
}
H
printf '#include <stdio.h>\n#include "probe.h"\nint main(void) { float v[9]; math_probe(v); for (int i = 0; i < 9; i++) printf("%%s%%g", i ? " " : "", v[i]); printf("\\n"); return 0; }\n' \
    >"$WORK/mathh/probe.c"
cat >"$WORK/mathh/k.c" <<'K'
#include <neuronop.h>
#include "probe.h"
nt_tensor *probe(const nt_tensor *t)
{
    float v[9];
    nt_tensor *out = get_dst_tensor();
    nt_accessor a = nt_accessor_of(out);
    math_probe(v);
    for (int i = 0; i < 9; i++)
        nt_set_f32(&a, v[i], i);
    return out;
}
K
printf '#include <neuronop.h>\nnt_tensor *probe_shape(const nt_tensor *t) { return nt_empty(NT_SHAPE(9), NT_F32); }\n' \
    >"$WORK/mathh/s.c"
printf 'name: mathh\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\nops:\n  probe: {args: [tensor], shape: probe_shape, kernel: probe}\n' \
    >"$WORK/mathh/neuronop.yaml"
test_expect "all of math.h builds under libtcc, macros and long double too, and computes as under cc" '
    cc -o mathh/probe mathh/probe.c -lm
    want=$(mathh/probe)
    test -n "$want"
    run run mathh probe zeros:1
    expect_status 0
    expect_out "values: $want"'

test_done
