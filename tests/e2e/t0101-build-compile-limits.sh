#!/bin/sh
# Bounded compilers: libtcc and g++ run in child processes with CPU-time and memory limits, so
# a compile bomb is exit 3 "compiling 'X' went past N s" (or N MB), never an OOM-killed
# neuronop; nothing is left running and nothing is written outside the build's folder.  The
# limits here are small (--compile-time, --compile-memory) so each case ends in a second or two.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

# macro_bomb FILE: 41 macros, each twice the one before: using A40 asks for 2^40 tokens
macro_bomb() {
    echo '#define A0 x' >>"$1"
    i=1
    while [ $i -le 40 ]; do
        echo "#define A$i A$((i - 1)) A$((i - 1))" >>"$1"
        i=$((i + 1))
    done
    echo 'int bomb = A40;' >>"$1"
}

# include_bomb DIR: h0.h includes h1.h twice, and so on: 2^24 includes, little memory
include_bomb() {
    i=0
    while [ $i -lt 24 ]; do
        printf '#include "h%d.h"\n#include "h%d.h"\n' $((i + 1)) $((i + 1)) >"$1/h$i.h"
        i=$((i + 1))
    done
    : >"$1/h24.h"
}

# The scratch TMPDIR of each build stays empty: the compilers' temporary files are in the
# build's own folder, and a killed compile leaves none behind.
tmp_is_clean() {
    test -z "$(ls -A "$WORK/tmp")" || { echo "left in TMPDIR:"; ls -A "$WORK/tmp"; return 1; }
}
mkdir -p "$WORK/tmp"

test_expect "a libtcc macro bomb ends at the memory limit with exit 3" '
    copy_example relu bomb
    macro_bomb bomb/relu.c
    TMPDIR=$WORK/tmp run build --compile-memory 64 bomb
    expect_status 3
    expect_err "neuronop: error: compiling '"'"'relu.c'"'"' went past 64 MB"
    expect_err "raise the limits with --compile-time and --compile-memory"
    test ! -e bomb/build/librelu.so
    test ! -e bomb/build/librelu.so.stamp
    tmp_is_clean'

# (not under AddressSanitizer, whose shadow memory needs far more than the limit)
if [ -z "${NEURONOP_SANITIZED:-}" ]; then
test_expect "under a smaller ulimit -v than the compile limit, the message names that limit" '
    copy_example relu small
    macro_bomb small/relu.c
    (ulimit -v 409600; TMPDIR=$WORK/tmp run build small
     expect_status 3
     expect_err "neuronop: error: compiling '"'"'relu.c'"'"' went past the 400 MB of address space neuronop itself may use"
     expect_err "neuronop runs under a smaller limit (ulimit -v)")
    tmp_is_clean'
fi

test_expect "a libtcc include bomb ends at the time limit with exit 3" '
    copy_example negate inc
    include_bomb inc
    sed -i "1i #include \"h0.h\"" inc/negate.c
    TMPDIR=$WORK/tmp run build --compile-time 1 inc
    expect_status 3
    expect_err "neuronop: error: compiling '"'"'negate.c'"'"' went past 1 s"
    tmp_is_clean'

test_expect "a g++ macro bomb ends at the memory limit with exit 3, cc1plus included" '
    copy_example negate_cxx gbomb
    macro_bomb gbomb/negate.cpp
    TMPDIR=$WORK/tmp run build --compile-memory 150 gbomb
    expect_status 3
    expect_err "neuronop: error: compiling '"'"'negate.cpp'"'"' went past 150 MB"
    tmp_is_clean'

# g++ stops a constexpr loop after 262144 iterations by itself, in under 1 s on a quick
# machine: the manifest lifts its limits so that only neuronop's time limit can end the loop.
test_expect "a g++ constexpr loop ends at the time limit, cc1plus not left running" '
    copy_example negate_cxx spin
    grep -q extra_cflags spin/neuronop.yaml && exit 1
    echo "extra_cflags: [-fconstexpr-loop-limit=2147483647, -fconstexpr-ops-limit=9223372036854775807]" \
        >>spin/neuronop.yaml
    cat >>spin/negate.cpp <<CXX
constexpr long spin(long n) { long s = 0; for (long i = 0; i < n; i++) for (long j = 0; j < n; j++) s += i ^ j; return s; }
static_assert(spin(1L << 20) != 1, "spins");
CXX
    TMPDIR=$WORK/tmp run_alone build --compile-time 1 spin
    expect_status 3
    expect_err "neuronop: error: compiling '"'"'negate.cpp'"'"' went past 1 s"
    tmp_is_clean'

# Before, below what cc1 needs to start it crashed ("internal compiler error") or cc1plus's
# libraries could not be mapped, and the build said only that the compiler failed.
test_expect "a memory limit too low for the compiler itself is named as the limit" '
    copy_example negate lowc
    TMPDIR=$WORK/tmp run build --compile-memory 16 --compiler cc lowc
    expect_status 3
    expect_err "neuronop: error: compiling '"'"'negate.c'"'"' went past 16 MB"
    copy_example negate_cxx lowx
    TMPDIR=$WORK/tmp run build --compile-memory 40 lowx
    expect_status 3
    expect_err "neuronop: error: compiling '"'"'negate.cpp'"'"' went past 40 MB"
    tmp_is_clean'

test_expect "the default limits leave room for a real kernel, and are in --help" '
    copy_example relu_tcm ok
    run build ok
    expect_status 0
    run build --help
    expect_out "--compile-time SECONDS"
    expect_out "--compile-memory MB"'

test_expect "a limit must be a whole number in range" '
    copy_example negate lim
    run build --compile-memory 1 lim
    expect_status 2
    run build --compile-time x lim
    expect_status 2'
test_done
