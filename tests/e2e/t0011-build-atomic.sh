#!/bin/sh
# Builds are atomic and safe to run concurrently: two builds of one folder both succeed, a
# killed build leaves neither a stale lock nor a half-written library, and a failed build
# leaves the previous library in place.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

copy_example relu "$WORK/relu"

# A kernel big enough that compiling it takes a noticeable time.
make_big_kernel() {
    {
        echo '#include <neuronop.h>'
        i=0
        while [ $i -lt 4000 ]; do
            echo "static float f$i(float x) { return x > 0.0f ? x * 1.0f + $i.0f : x - $i.0f; }"
            i=$((i + 1))
        done
    } >relu/big.c
    sed -i "s/compute_srcs: \[relu.c\]/compute_srcs: [relu.c, big.c]/" relu/neuronop.yaml
}

test_expect "two concurrent builds of one folder both succeed" '
    make_big_kernel
    "$NEURONOP" build relu >a.out 2>a.err & pid=$!
    "$NEURONOP" build relu >b.out 2>b.err || { cat b.err; exit 1; }
    wait $pid || { cat a.err; exit 1; }
    grep -q "relu: built" a.out b.out
    "$NEURONOP" inspect relu/build/librelu.so >/dev/null'

test_expect "a killed build leaves no stale lock and no half-written library" '
    rm -rf relu/build
    echo "/* v2 */" >>relu/big.c
    "$NEURONOP" build relu >/dev/null 2>&1 & pid=$!
    sleep 0.05; kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
    if [ -f relu/build/librelu.so ]; then "$NEURONOP" inspect relu/build/librelu.so >/dev/null; fi
    timeout 20 "$NEURONOP" build relu >out 2>err || { cat err; exit 1; }
    "$NEURONOP" inspect relu/build/librelu.so >/dev/null
    test -z "$(ls -A relu/build | grep neuronop-tmp)"'

test_expect "an up-to-date build still removes what a killed build left" '
    "$NEURONOP" build relu >/dev/null
    mkdir -p relu/build/.neuronop-tmp-killed
    echo half >relu/build/.neuronop-tmp-killed/relu.o
    : >relu/build/.neuronop-tmp-stray
    run build relu
    expect_status 0
    expect_out "up to date"
    test -z "$(ls -A relu/build | grep neuronop-tmp)"'

test_expect "a build that holds the lock keeps its temporary folder" '
    mkdir -p relu/build/.neuronop-tmp-running
    flock relu/build/.neuronop.lock sh -c "\"$NEURONOP\" build relu >out 2>err"
    grep -q "up to date" out
    test -d relu/build/.neuronop-tmp-running
    "$NEURONOP" build relu >/dev/null
    test ! -e relu/build/.neuronop-tmp-running'

test_expect "a failed build keeps the previous library and writes nothing new" '
    before=$(md5sum <relu/build/librelu.so)
    cp relu/relu.c relu.c.good
    echo "this is not C" >>relu/relu.c
    run build relu; expect_status 3
    test "$(md5sum <relu/build/librelu.so)" = "$before"
    test -z "$(ls -A relu/build | grep neuronop-tmp)"
    run build relu; expect_status 3
    cp relu.c.good relu/relu.c
    run build relu
    expect_status 0
    expect_out "up to date"'

test_expect "a build directory that cannot be created is reported" '
    run build --build-dir /proc/no/such/dir relu; expect_status 2
    expect_err "cannot create build directory"'

# val: a kernel that writes VALUE everywhere, to tell which source a library was built from
make_val() {
    mkdir -p val
    printf '%s\n' "name: val" "compute_srcs: [k.c]" "shape_srcs: [s.c]" "ops:" \
        "  val: {args: [tensor], shape: val_shape, kernel: val}" >val/neuronop.yaml
    printf '%s\n' "#include <neuronop.h>" \
        "nt_tensor *val_shape(const nt_tensor *a) { return nt_empty(nt_dim(a), nt_sizes(a), NT_F32); }" \
        >val/s.c
}
set_val() {
    printf '%s\n' "#include <neuronop.h>" "nt_tensor *val(const nt_tensor *a)" "{" \
        "    nt_tensor *out = get_dst_tensor();" "    nt_accessor o = nt_accessor_of(out);" \
        "    for (int64_t i = 0; i < nt_numel(a); i++)" "        nt_set_f32(&o, $1.0f, i);" \
        "    return out;" "}" >val/k.c
}

# a red team's find: the key was computed before the lock, so sources edited while a build
# waited for another were compiled under the old key's stamp, and once put back as they
# were, the library built from other code was "up to date"
test_expect "sources edited while a build waits for another are built, and stamped, as they are" '
    make_val
    set_val 1
    "$NEURONOP" build val >/dev/null
    set_val 2
    flock val/build/.neuronop.lock sleep 1.5 &
    holder=$!
    sleep 0.3
    "$NEURONOP" build val >w.out 2>w.err &
    builder=$!
    sleep 0.6
    set_val 3
    wait $builder
    wait $holder
    grep -q "waiting for another build" w.err
    set_val 2
    run build val
    expect_status 0
    expect_out "val: built"
    run run val val zeros:4
    expect_out "values: 2 2 2 2"'

# ... and sources edited while the build compiles them: nothing is installed, the last
# library and its stamp stay (a reviewer's: the first fix rebuilt in a loop, and installed
# before it looked)
test_expect "sources edited during the build: nothing installed, the last library kept, exit 2" '
    make_val
    set_val 1
    "$NEURONOP" build val >/dev/null
    cp val/build/libval.so before.so
    cp val/build/libval.so.stamp before.stamp
    # long enough that the saver below, starved of the CPU on a busy machine, still writes
    # during it (4,000 functions, 30 ms, once let a build under make check finish unseen)
    awk "BEGIN { for (i = 0; i < 20000; i++) printf \"static float f%d(float x) { return x > 0.0f ? x * 1.0f + %d.0f : x - %d.0f; }\\n\", i, i, i }" \
        >val/big.c
    sed -i "s/compute_srcs: \[k.c\]/compute_srcs: [k.c, big.c]/" val/neuronop.yaml
    "$NEURONOP" build val >/dev/null   # the big source compiles: a build of some time
    cp val/build/libval.so before.so
    cp val/build/libval.so.stamp before.stamp
    set_val 2
    ( while :; do echo "/* $(date +%N) */" >val/saved.h; done ) &
    saver=$!
    run build val
    kill $saver
    wait $saver 2>/dev/null || :
    expect_status 2
    expect_err "neuronop: error: the sources of '\''val'\'' changed while it was being built"
    cmp before.so val/build/libval.so
    cmp before.stamp val/build/libval.so.stamp
    run build val
    expect_status 0
    expect_out "val: built"'

test_done
