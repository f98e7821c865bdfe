#!/bin/sh
# The standard headers each C++ source is given before its first line (torch/detail/std.h,
# -include), precompiled once per compiler and flags in the user's cache folder
# (neuronop-build(1), PRECOMPILED HEADER): made when missing or stale, used by g++ itself (its
# own -H says so), the same objects as without it, never for clang++, and at most four
# entries kept.  And what giving the headers first must not change: a source that defines
# NDEBUG before <torch/torch.h> has no assertions, as the C standard's <assert.h> says.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold
export XDG_CACHE_HOME="$WORK/xdg"
pch="$XDG_CACHE_HOME/neuronop/pch"
copy_example relu_cxx "$WORK/rc"

# entry: the one folder of the cache (fails unless there is exactly one)
entry() {
    set -- "$pch"/*/
    test $# = 1 && test -d "$1" && echo "${1%/}"
}

test_expect "a first C++ build precompiles the standard headers once, into the XDG cache" '
    run build -v rc
    expect_status 0
    test "$(grep -c -- "-x c++-header" err)" = 1
    e=$(entry)
    test "${#e}" = "$((${#pch} + 33))"
    test -s "$e/std.h.gch"
    grep -q "/torch/detail/std.h" "$e/std.h.d"
    cmp "$e/std.h" "$NEURONOP_SHARE_DIR/include/torch/detail/std.h"
    test "$(grep -c -- "-include $e/std.h -c -o" err)" = 3'

test_expect "g++ uses it: its -H marks the precompiled header as used" '
    e=$(entry)
    cmd=$(sed -n "s/^neuronop: note: \(g++ .* -include [^ ]*\) -c -o [^ ]* rc\/relu.cpp$/\1/p" err)
    test -n "$cmd"
    $cmd -Winvalid-pch -H -fsyntax-only rc/relu.cpp 2>h.txt
    grep -qx "! $e/std.h.gch" h.txt'

# HOME=/proc/self: a folder no one can make a cache in, root included
test_expect "a later build uses the entry it finds; without one, the text builds the same library" '
    cp rc/build/librelu_cxx.so with-pch.so
    run build -v --force rc
    expect_status 0
    if grep -q -- "-x c++-header" err; then exit 1; fi
    (unset XDG_CACHE_HOME; HOME=/proc/self "$NEURONOP" build -v --force rc) >out 2>err
    grep -q -- "-include $NEURONOP_SHARE_DIR/include/torch/detail/std.h -c -o" err
    if grep -q -- "-x c++-header" err; then exit 1; fi
    cmp with-pch.so rc/build/librelu_cxx.so'

test_expect "an entry older than a header it was made from is made again" '
    e=$(entry)
    touch -d "2001-01-01" "$e/std.h.gch"
    run build -v --force rc
    expect_status 0
    test "$(grep -c -- "-x c++-header" err)" = 1
    test "$(entry)" = "$e"
    test "$(stat -c %Y "$e/std.h.gch")" -gt 978307200'

test_expect "an object compiled with an entry since made again is not taken from the compile cache" '
    e=$(entry)
    NEURONOP_CACHE_DIR="$WORK/objs" "$NEURONOP" build --force rc >out
    NEURONOP_CACHE_DIR="$WORK/objs" "$NEURONOP" build --force rc >out
    grep -q "(0 files compiled, 3 from the cache)" out
    touch -d "2001-01-01" "$e/std.h.gch"
    NEURONOP_CACHE_DIR="$WORK/objs" "$NEURONOP" build -v --force rc >out 2>err
    test "$(grep -c -- "-x c++-header" err)" = 1
    grep -q "(3 files compiled)" out'

test_expect "macros, warnings and moot flags are not part of the key: g++ checks macros" '
    e=$(entry)
    cp -R rc rd
    echo "extra_cflags: [-DRELU_SOMETHING=3, -Wall, -Wextra, -w, -O2, -std=c++11]" \
        >>rd/neuronop.yaml
    run build -v rd
    expect_status 0
    if grep -q -- "-x c++-header" err; then exit 1; fi
    test "$(grep -c -- "-include $e/std.h -c -o" err)" = 3'

test_expect "when the cache has four entries, the least recently used goes for a new one" '
    for k in 1 2 3; do
        mkdir -p "$pch/0000000000000000000000000000000$k"
        touch -d "$k days ago" "$pch/0000000000000000000000000000000$k"
    done
    cp -R rc opt
    echo "extra_cflags: [-O3]" >>opt/neuronop.yaml
    run build -v opt
    expect_status 0
    test "$(grep -c -- "-x c++-header" err)" = 1
    test ! -e "$pch/00000000000000000000000000000003"
    test -d "$pch/00000000000000000000000000000001"
    test "$(ls "$pch" | wc -l)" = 4'

if command -v clang++ >/dev/null 2>&1; then
    test_expect "clang++ is given the text: its precompiled headers are another format" '
        rm -rf "$pch"
        CXX=clang++ "$NEURONOP" build -v --force rc >out 2>err
        grep -q -- "-include $NEURONOP_SHARE_DIR/include/torch/detail/std.h -c -o" err
        test ! -e "$pch"'
fi

# -fshort-enums makes std::float_round_style one byte (g++ on the text says so), and no
# macro tells g++ that an entry was made without it
test_expect "a flag given again keeps its last place: -fX -fno-X -fX is -fX, in the entry too" '
    cp -R rc se
    echo "static_assert(sizeof(std::float_round_style) == 1, \"short enums\");" >>se/relu.cpp
    echo "extra_cflags: [-fshort-enums, -fno-short-enums, -fshort-enums]" >>se/neuronop.yaml
    export XDG_CACHE_HOME="$WORK/xdg-se"
    run build -v se
    expect_status 0
    test "$(grep -c -- "-x c++-header" err)" = 1'

# -Wno-deprecated leaves __DEPRECATED undefined, which libstdc++ tests (memcheck gives it)
test_expect "-Wno-deprecated is part of the key: g++ would refuse an entry made without it" '
    cp -R rc dep
    echo "extra_cflags: [-Wno-deprecated]" >>dep/neuronop.yaml
    export XDG_CACHE_HOME="$WORK/xdg-dep"
    run build -v dep
    expect_status 0
    cmd=$(sed -n "s/^neuronop: note: \(g++ .* -include [^ ]*\) -c -o [^ ]* dep\/relu.cpp$/\1/p" err)
    test -n "$cmd"
    $cmd -Winvalid-pch -H -fsyntax-only dep/relu.cpp 2>h.txt
    grep -q "^! .*/std.h.gch$" h.txt'

# A header upgraded by a package manager keeps the package's (older) modification time; its
# change time is when it was put in place.  CPLUS_INCLUDE_PATH puts a "system" header of the
# library folder (which the confined compiler may read) on g++'s search path.
test_expect "an entry is made again when a header it read was replaced with an older time" '
    cp -R rc up
    mkdir up/sys
    printf "#include_next <float.h>\n#define SYS_VERSION 1\n" >up/sys/float.h
    echo "static_assert(SYS_VERSION == 2, \"the header as it is now\");" >>up/relu.cpp
    export CPLUS_INCLUDE_PATH="$PWD/up/sys" XDG_CACHE_HOME="$WORK/xdg-up"
    run build up
    expect_status 3
    grep -q "the header as it is now" err
    printf "#include_next <float.h>\n#define SYS_VERSION 2\n" >up/sys/float.h
    touch -d "2001-01-01" up/sys/float.h
    run build -v up
    expect_status 0
    test "$(grep -c -- "-x c++-header" err)" = 1'

# up's entry was made with CPLUS_INCLUDE_PATH: without it, g++ finds no up/sys/float.h
test_expect "the compiler's search path in the environment is part of the key" '
    export XDG_CACHE_HOME="$WORK/xdg-up"
    unset CPLUS_INCLUDE_PATH
    run build -v --force up
    expect_status 3
    test "$(grep -c -- "-x c++-header" err)" = 1
    grep -q "SYS_VERSION" err'

test_expect "a header that cannot be precompiled is tried once a build, not once a source" '
    run build -v --force rc
    key=$(sed -n "s|.* -include $pch/\([0-9a-f]*\)/std.h -c -o .*|\1|p" err | sort -u)
    test "${#key}" = 32
    mkdir -p "$WORK/xdg-bad/neuronop/pch"
    : >"$WORK/xdg-bad/neuronop/pch/$key"   # a file where the entry would go
    export XDG_CACHE_HOME="$WORK/xdg-bad"
    run build -v --force rc
    expect_status 0
    test "$(grep -c -- "-x c++-header" err)" = 1
    test "$(grep -c -- "-include $NEURONOP_SHARE_DIR/include/torch/detail/std.h -c -o" err)" = 3'

# Both builds start before either has an entry: without the lock each made its own and moved it
# in over the other's, whose new time made the compile cache miss the objects built with it.
test_expect "builds started together make one entry: the others wait for it" '
    export XDG_CACHE_HOME="$WORK/xdg-together"
    cp -R rc t1
    cp -R rc t2
    "$NEURONOP" build -v t1 >out1 2>err1 &
    one=$!
    "$NEURONOP" build -v t2 >out2 2>err2 &
    two=$!
    wait $one
    wait $two
    test "$(cat err1 err2 | grep -c -- "-x c++-header")" = 1
    test "$(cat err1 err2 | grep -c -- "-include $XDG_CACHE_HOME/neuronop/pch/.*/std.h -c -o")" = 6'

# strings.h declares index(), math.h y1(): names a source that includes nothing must not meet
test_expect "a C++ source that includes no torch header is given no standard header" '
    cp -R rc hp
    printf "static int index = 0;\nstatic double y1 = 1.0;\nint bump() { return ++index + (int)y1; }\n" \
        >hp/helper.cpp
    g++ -std=c++14 -pedantic-errors -fsyntax-only hp/helper.cpp
    sed -i "s/^compute_srcs: \[relu.cpp\]/compute_srcs: [relu.cpp, helper.cpp]/" hp/neuronop.yaml
    grep -q "helper.cpp" hp/neuronop.yaml
    run build -v hp
    expect_status 0
    test "$(grep -c -- "-include .* hp/helper.cpp$" err)" = 0
    test "$(grep -c -- "-include .* hp/relu.cpp$" err)" = 1'

# assert(false) in the kernel: with NDEBUG defined before <torch/torch.h>, it is gone
test_expect "NDEBUG defined before <torch/torch.h> removes assert, as <assert.h> says" '
    copy_example relu_cxx nd
    sed -i "s|#include <torch/torch.h>|#define NDEBUG\n#include <torch/torch.h>|" nd/relu.cpp
    sed -i "0,/int64_t rows/s//assert(t_in.size(0) < 0);\n    int64_t rows/" nd/relu.cpp
    grep -q "^#define NDEBUG" nd/relu.cpp
    grep -q "assert(t_in.size(0) < 0);" nd/relu.cpp
    run run nd relu_forward randn:4x4
    expect_status 0
    sed -i "/^#define NDEBUG/d" nd/relu.cpp
    run run nd relu_forward randn:4x4
    expect_status 1
    expect_err "assertion failed: t_in.size(0) < 0"'

test_done
