#!/bin/sh
# The compile cache (NEURONOP_CACHE_DIR, neuronop-build(1)) on tests/fixtures/objcache: off
# unless asked for; an object taken from it makes the library g++ makes; a changed header or
# flag compiles again; warnings come back on a hit; failures and refused reads are never
# kept; the folder stays under its size; builds share it at the same time.
. ./lib.sh
unset NEURONOP_CACHE_DIR NEURONOP_CACHE_SIZE
CACHE="$WORK/cache"
entries() { find "$CACHE" -name '*.o' | wc -l; }

for d in one two three warn broken outside bomb small g1 g2 p1 p2 p3; do
    mkdir -p "$WORK/$d"
    cp -R "$NEURONOP_SRC/tests/fixtures/objcache" "$WORK/$d/lib"
done

test_expect "without NEURONOP_CACHE_DIR nothing is cached" '
    cd one
    run build lib
    expect_status 0
    expect_out "cached: built lib/build/libcached.so in "
    expect_out " ms (3 files compiled)"
    if grep -q "from the cache" "$WORK/out"; then exit 1; fi
    test ! -e "$CACHE"'

test_expect "a build fills the cache; the same C++ sources elsewhere take it all" '
    export NEURONOP_CACHE_DIR="$CACHE"
    cd one
    run build --force lib
    expect_status 0
    expect_out " ms (3 files compiled)"
    test "$(entries)" = 2
    test "$(find "$CACHE" -name "*.log" | wc -l)" = 2
    cd ../two
    run build lib
    expect_status 0
    expect_out " ms (1 file compiled, 2 from the cache)"
    run build --json --force lib
    jq -e ".compiled == 1 and .cached == 2" "$WORK/out"
    run run lib fill arange:3
    expect_status 0
    expect_out "values: 2.5 2.5 2.5"'

test_expect "a library from cached objects is byte-identical to one g++ compiled" '
    export NEURONOP_CACHE_DIR="$CACHE"
    cd two
    run build --force lib
    expect_out "(1 file compiled, 2 from the cache)"
    cp lib/build/libcached.so cached.so
    env -u NEURONOP_CACHE_DIR "$NEURONOP" build --force lib >out
    grep -q "(3 files compiled)" out
    cmp cached.so lib/build/libcached.so'

test_expect "a changed header or flag compiles again what it applies to" '
    export NEURONOP_CACHE_DIR="$CACHE"
    cd three
    echo "static inline float fill_value(void) { return -1.0f; }" >lib/fill_value.h
    run build lib
    expect_out "(2 files compiled, 1 from the cache)"
    run run lib fill arange:2
    expect_out "values: -1 -1"
    cp "$NEURONOP_SRC/tests/fixtures/objcache/fill_value.h" lib/
    run build lib
    expect_out "(1 file compiled, 2 from the cache)"
    run run lib fill arange:2
    expect_out "values: 2.5 2.5"
    printf "extra_cflags: [-DFILL_FLAG=1]\n" >>lib/neuronop.yaml
    run build lib
    expect_out "(3 files compiled)"'

test_expect "g++'\''s warnings are shown again when the object comes from the cache" '
    export NEURONOP_CACHE_DIR="$CACHE"
    cd warn
    sed -i "s/{ return 1; }/{ int unused_here = 1; return 1; }/" lib/helper.cpp
    sed -i "1i #pragma GCC diagnostic warning \"-Wunused-variable\"" lib/helper.cpp
    run build lib
    expect_out "(2 files compiled, 1 from the cache)"
    expect_err "lib/helper.cpp:3:30: warning: unused variable '\''unused_here'\''"
    run build --force lib
    expect_out "(1 file compiled, 2 from the cache)"
    expect_err "lib/helper.cpp:3:30: warning: unused variable '\''unused_here'\''"'

test_expect "a failed compile is not kept, the error comes from g++ each time; the others are" '
    export NEURONOP_CACHE_DIR="$CACHE"
    cd broken
    before=$(entries)
    sed -i "s/out\[i\] = fill_value() \* (float)helper_count();/out[i] = fill_value()/" \
        lib/kernel.cpp
    sed -i "s/{ return 1; }/{ return 3; }/" lib/helper.cpp
    for attempt in 1 2; do
        run build lib
        expect_status 3
        expect_err "lib/kernel.cpp:13:"
        expect_err "error: expected '\'';'\''"
        test "$(entries)" = "$((before + 1))"
    done
    cp "$NEURONOP_SRC/tests/fixtures/objcache/kernel.cpp" lib/
    run build lib
    expect_status 0
    expect_out "(1 file compiled, 2 from the cache)"
    run run lib fill arange:2
    expect_out "values: 7.5 7.5"'

test_expect "an #include outside the library folder is refused with the cache as without it" '
    export NEURONOP_CACHE_DIR="$CACHE"
    cd outside
    before=$(entries)
    sed -i "1i #include \"/etc/passwd\"" lib/helper.cpp
    for attempt in 1 2; do
        run build lib
        expect_status 3
        expect_err "'\''/etc/passwd'\'' is outside the library folder"
        if grep -q "root:" "$WORK/err"; then exit 1; fi
    done
    test "$(entries)" = "$before"
    ! grep -l "root:" "$CACHE"/*'

test_expect "a macro bomb goes past the limit while preprocessed, and is not compiled too" '
    export NEURONOP_CACHE_DIR="$CACHE"
    cd bomb
    echo "#define A0 x" >>lib/helper.cpp
    i=1
    while [ $i -le 40 ]; do
        echo "#define A$i A$((i - 1)) A$((i - 1))" >>lib/helper.cpp
        i=$((i + 1))
    done
    echo "int bomb = A40;" >>lib/helper.cpp
    run build -v --compile-memory 150 lib
    expect_status 3
    expect_err "neuronop: error: compiling '\''helper.cpp'\'' went past 150 MB"
    expect_err " -E lib/helper.cpp "
    ! grep " -c -o .* lib/helper.cpp" "$WORK/err"'

test_expect "memcheck'\''s objects are shared between folders; with -g, which DWARF names, not" '
    export NEURONOP_CACHE_DIR="$CACHE"
    (cd g1 && "$NEURONOP" build --memcheck lib >out)
    grep -q "(3 files compiled)" g1/out
    (cd g2 && "$NEURONOP" build --memcheck lib >out)
    grep -q "(1 file compiled, 2 from the cache)" g2/out
    for g in g1 g2; do
        printf "extra_cflags: [-g]\n" >>$g/lib/neuronop.yaml
        (cd $g && "$NEURONOP" build lib >out)
        grep -q "(3 files compiled)" $g/out
        strings $g/lib/build/libcached.so | grep -qx "$WORK/$g"
    done'

test_expect "the least recently used entries go when the cache is over NEURONOP_CACHE_SIZE" '
    cd small
    mkdir cache
    cp "$CACHE"/* cache/
    sed -i "s/{ return 1; }/{ return 4; }/" lib/helper.cpp
    for old in 1 2; do
        head -c 600000 /dev/zero >cache/0000000000000000000000000000000$old.o
        echo >cache/0000000000000000000000000000000$old.log
    done
    touch -d "2 days ago" cache/00000000000000000000000000000001.o
    touch -d "1 day ago" cache/00000000000000000000000000000002.o
    NEURONOP_CACHE_DIR=$PWD/cache NEURONOP_CACHE_SIZE=1 "$NEURONOP" build lib >out
    grep -q "(2 files compiled, 1 from the cache)" out
    test ! -e cache/00000000000000000000000000000001.o
    test ! -e cache/00000000000000000000000000000001.log
    test -e cache/00000000000000000000000000000002.o
    test -e "cache/$(ls -t cache | grep "\.o$" | head -1)"
    test "$(du -cb cache/* | tail -1 | cut -f1)" -le 1048576'

test_expect "a wrong NEURONOP_CACHE_SIZE or a cache folder that cannot be made is exit 2" '
    cd one
    status=0
    NEURONOP_CACHE_DIR="$CACHE" NEURONOP_CACHE_SIZE=lots "$NEURONOP" build --force lib \
        >out 2>err || status=$?
    test $status = 2
    grep -qx "neuronop: error: NEURONOP_CACHE_SIZE is '\''lots'\'', not a size in megabytes" err
    echo >not_a_folder
    status=0
    NEURONOP_CACHE_DIR=$PWD/not_a_folder "$NEURONOP" build --force lib >out 2>err || status=$?
    test $status = 2
    grep -q "neuronop: error: cannot use the compile cache '\''$PWD/not_a_folder'\''" err'

test_expect "C libraries are not cached" '
    copy_example relu relu
    NEURONOP_CACHE_DIR=$PWD/ccache "$NEURONOP" build relu >out
    grep -q "(2 files compiled)" out
    test -z "$(ls ccache)"'

test_expect "three builds add the same new entry to one cache at the same time" '
    mkdir shared
    cp "$CACHE"/* shared/
    before=$(ls shared/*.o | wc -l)
    for i in 1 2 3; do
        sed -i "s/{ return 1; }/{ return 5; }/" p$i/lib/helper.cpp
    done
    for i in 1 2 3; do
        (cd p$i && NEURONOP_CACHE_DIR=$WORK/shared "$NEURONOP" build lib >out 2>err;
         echo $? >rc) &
    done
    wait
    for i in 1 2 3; do
        test "$(cat p$i/rc)" = 0
        (cd p$i && "$NEURONOP" run lib fill arange:2 >out)
        grep -q "values: 12.5 12.5" p$i/out
    done
    test "$(ls shared/*.o | wc -l)" = "$((before + 1))"
    test -z "$(ls shared | grep -v "\.o$" | grep -v "\.log$")"'

test_done
