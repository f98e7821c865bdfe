#!/bin/sh
# The Python package end to end: tests/python/test_bridge.py runs, in one Python process
# under `neuronop python`, every promise of neuronop-python(1) (building, loading, calls,
# autograd against torch.relu, each failure's exception class, a replaced supervisor, name
# clashes, warnings, printf, stats, no state crossing calls) and prints its own TAP.  This script builds the C
# libraries it loads (libtcc: milliseconds) and keeps the C++ example's build in out/,
# keyed by its sources, so the g++ compile happens once per change, not per run.
. ./lib.sh

libs=$WORK/libs
mkdir -p "$libs"
built() {   # built NAME DIR-OR-MANIFEST SO: builds it and puts SO in $libs/NAME/
    "$NEURONOP" build "$2" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
    mkdir -p "$libs/$1"
    cp "$3" "$libs/$1/"
}
cp -R "$NEURONOP_SRC/tests/fixtures/rules" "$WORK/rules"
built crash "$WORK/rules/crash.yaml" "$WORK/rules/build/librules_crash.so"
built access "$WORK/rules/access.yaml" "$WORK/rules/build/librules_access.so"
cp -R "$NEURONOP_SRC/tests/fixtures/hostile" "$WORK/hostile"
built hostile "$WORK/hostile" "$WORK/hostile/build/libhostile.so"
cp -R "$NEURONOP_SRC/tests/fixtures/forgedout" "$WORK/forgedout"
built forgedout "$WORK/forgedout" "$WORK/forgedout/build/libforgedout.so"
cp -R "$NEURONOP_SRC/tests/fixtures/tlib" "$WORK/tlib"
built tlib "$WORK/tlib" "$WORK/tlib/build/libtlib.so"
cp -R "$NEURONOP_SRC/tests/fixtures/keptstate" "$WORK/keptstate"
built keptstate "$WORK/keptstate" "$WORK/keptstate/build/libkeptstate.so"
for ex in relu_multicore printf_debug softclip; do
    copy_example "$ex" "$WORK/$ex"
    built "$ex" "$WORK/$ex" "$WORK/$ex/build/lib$ex.so"
done
# two libraries named twin, each with an op negate; one named aten with an op relu; one
# named prim, a namespace torch reserves; two named as what torch.ops has of its own (its
# load_library method, its namespace of Python ops); and one whose op's name is longer than
# the stats table's first column; and one to be loaded from a folder whose name is not UTF-8
for t in twin_a twin_b aten prim load_library pyops long latin; do
    copy_example negate "$WORK/$t"
    name=twin op=negate
    [ "$t" = aten ] && name=aten op=relu
    [ "$t" = prim ] && name=prim
    [ "$t" = load_library ] && name=load_library
    [ "$t" = pyops ] && name=pyops
    [ "$t" = latin ] && name=latin
    [ "$t" = long ] && name=a_library_with_a_long_name
    sed -e "s/^name: negate/name: $name/" -e "s/^  negate:/  $op:/" -e '/^tests:/,$d' \
        "$WORK/$t/neuronop.yaml" >"$WORK/$t/m.yaml"
    built "$t" "$WORK/$t/m.yaml" "$WORK/$t/build/lib$name.so"
done

# an op named with a word of TorchScript's, which torch cannot take as an op name
cp -R "$NEURONOP_SRC/tests/fixtures/memcheck" "$WORK/kw"
printf '%s\n' 'name: kw' 'compute_srcs: [k.c]' 'shape_srcs: [s.c]' 'ops:' \
    '  global: {args: [tensor, int64], shape: same_i, kernel: global}' >"$WORK/kw/m.yaml"
built kw "$WORK/kw/m.yaml" "$WORK/kw/build/libkw.so"

# an op whose output is larger than the room Python guessed for it (its inputs' size)
mkdir -p "$WORK/grow"
cat >"$WORK/grow/k.c" <<'K'
#include <neuronop.h>
nt_tensor *grow(int64_t n, double v)
{
    int64_t sizes[1] = { n };
    return nt_full(1, sizes, nt_scalar_f(v), NT_F32);
}
K
cat >"$WORK/grow/s.c" <<'S'
#include <neuronop.h>
nt_tensor *grow_shape(int64_t n, double v)
{
    int64_t sizes[1] = { n };
    return nt_empty(1, sizes, NT_F32);
}
S
printf 'name: grow\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\nops:\n  grow: {args: [int64, double], shape: grow_shape, kernel: grow}\n' \
    >"$WORK/grow/neuronop.yaml"
built grow "$WORK/grow" "$WORK/grow/build/libgrow.so"

# x / s for a Scalar s, whose sign and NaN a call must get as given; and an op that prints,
# then fails as its second argument says (1: abort, a rule; 2: a crash; 3: a bad index; 4:
# it ends the worker process, exit_group(3); 5: it kills it, tgkill(getpid(), gettid(), 9);
# 6: 2000 lines, 56 000 bytes, more than the device's 32 KB printf buffer, then as 4; 7: it
# leaves a TCM block allocated, a device warning, and returns; 8: it calls getppid, which
# the device does not have; 9: it takes 10 ms or more)
mkdir -p "$WORK/edge"
cat >"$WORK/edge/k.c" <<'K'
#include <neuronop.h>
#include <stdlib.h>
nt_tensor *divs(const nt_tensor *x, nt_scalar s)
{
    return nt_div_s_out(get_dst_tensor(), x, s);
}
/* x + in * lambda: two parameters named with Python keywords */
nt_tensor *addk(const nt_tensor *x, double in, double lambda)
{
    return nt_add_s_out(get_dst_tensor(), x, nt_scalar_f(in), nt_scalar_f(lambda));
}
/* as addk, with parameters named self (torch.ops' own), in_, and in (whose in_ is taken) */
nt_tensor *addk2(const nt_tensor *self, double in_, double in)
{
    return nt_add_s_out(get_dst_tensor(), self, nt_scalar_f(in_), nt_scalar_f(in));
}
nt_tensor *says(const nt_tensor *x, int64_t how)
{
    printf("says: before failing %d\n", (int)how);
    if (how == 1)
        abort();
    if (how == 2)
        *(volatile int *)16 = 1;
    if (how == 3) {
        nt_accessor a = nt_accessor_of(x);
        nt_get_f32(&a, nt_numel(x));
    }
    if (how == 7)
        tcm_malloc(64);
    for (volatile long i = 0; how == 9 && i < 20000000; i++)
        ;
    if (how == 8)
        __asm__ volatile("mov $110, %%eax\n\tsyscall" ::: "rax", "rcx", "r11", "memory");
    for (int i = 0; how == 6 && i < 2000; i++)
        printf("line %04d of a long story\n", i);
    if (how == 4 || how == 6)
        __asm__ volatile("mov $231, %%eax\n\tmov $3, %%edi\n\tsyscall" ::: "rax", "rdi", "rcx",
                         "r11", "memory");
    if (how == 5)
        __asm__ volatile("mov $39, %%eax\n\tsyscall\n\tmov %%eax, %%edi\n\t"
                         "mov $186, %%eax\n\tsyscall\n\tmov %%eax, %%esi\n\t"
                         "mov $9, %%edx\n\tmov $234, %%eax\n\tsyscall"
                         ::: "rax", "rdi", "rsi", "rdx", "rcx", "r11", "memory");
    return nt_zeros(nt_dim(x), nt_sizes(x), NT_F32);
}
K
cat >"$WORK/edge/s.c" <<'S'
#include <neuronop.h>
nt_tensor *divs_shape(const nt_tensor *x, nt_scalar s)
{
    return nt_empty(nt_dim(x), nt_sizes(x), NT_F32);
}
nt_tensor *addk_shape(const nt_tensor *x, double in, double lambda)
{
    return nt_empty(nt_dim(x), nt_sizes(x), NT_F32);
}
nt_tensor *addk2_shape(const nt_tensor *self, double in_, double in)
{
    return nt_empty(nt_dim(self), nt_sizes(self), NT_F32);
}
nt_tensor *says_shape(const nt_tensor *x, int64_t how)
{
    return nt_empty(nt_dim(x), nt_sizes(x), NT_F32);
}
S
printf '%s\n' 'name: edge' 'compute_srcs: [k.c]' 'shape_srcs: [s.c]' 'ops:' \
    '  divs: {args: [tensor, scalar], shape: divs_shape, kernel: divs}' \
    '  addk: {args: [tensor, double, double], shape: addk_shape, kernel: addk}' \
    '  addk2: {args: [tensor, double, double], shape: addk2_shape, kernel: addk2}' \
    '  says: {args: [tensor, int64], shape: says_shape, kernel: says}' >"$WORK/edge/neuronop.yaml"
built edge "$WORK/edge" "$WORK/edge/build/libedge.so"

# what the command line says about each failure Python must raise with the same words
cli=$WORK/cli
mkdir -p "$cli"
clirun() {   # clirun LIB OP INPUT: neuronop run's standard error, into $cli/OP
    "$NEURONOP" run "$libs/$1" "$2" "$3" >/dev/null 2>"$cli/$2"
    rc=$?
    [ "$rc" = "${4:-1}" ] || { cat "$cli/$2"; echo "not ok - neuronop run $2 exited $rc"; exit 1; }
}
clirun access/librules_access.so tcm_past_end ones:16
for op in aborts segv wide_frame; do clirun crash/librules_crash.so $op ones:4; done
for op in forks creates exits shape_forges; do
    clirun hostile/libhostile.so $op ones:4
done
echo 'not a library' >"$cli/bogus.so"
(cd "$cli" && "$NEURONOP" run bogus.so op ones:4 >/dev/null 2>bogus)

src=$EXAMPLES/mlp_python
key=$(cat "$src/relu.cpp" "$src/shape.cpp" "$src/my_ops.py" "$src/model.py" | cksum | tr ' ' -)
mlp=$NEURONOP_SRC/out/python-tests/mlp-$key
mkdir -p "$mlp"
for f in relu.cpp shape.cpp my_ops.py model.py; do
    cmp -s "$src/$f" "$mlp/$f" || cp "$src/$f" "$mlp/$f"
done

NEURONOP_TEST_LIBS=$libs NEURONOP_TEST_MLP=$mlp NEURONOP_TEST_CLI=$cli \
    run_alone python --timeout 1 "$NEURONOP_SRC/tests/python/test_bridge.py"
cat "$WORK/out"
if [ "$status" != 0 ]; then
    sed 's/^/# /' "$WORK/err"
    echo "not ok - test_bridge.py exited $status (or left a process behind)"
    exit 1
fi
