#!/bin/sh
# The idiom suite: torch C++ idioms on accessor elements (auto copies, T & bindings, integer
# compound operators, ?:, std::max, std::swap, template deduction, lambdas, const T & seeing
# later writes, c10's 16-bit float rounding, 4-D kernels in the style of the public RWKV
# wkv op - our own code, not a copy) compute bit for bit what libtorch 1.13 computes.
# tests/fixtures/cxx/idioms/k.cpp is compiled unmodified twice: by neuronop build, and into
# driver.cpp against the real libtorch, whose outputs are the expectations.
# One translation unit against libtorch takes 6-40 s, so the driver's outputs are cached
# under out/ keyed by the hash of the sources (oracle.sh, which make check runs first).
. ./lib.sh

fix="$NEURONOP_SRC/tests/fixtures/cxx/idioms"
cache=$(sh "$fix/oracle.sh" "$NEURONOP_SRC/out" 2>"$WORK/oracle.err") || cache=
test_expect "libtorch 1.13 computes the expectations (oracle.sh, cached by source hash)" '
    cat "$WORK/oracle.err"
    test -s "$cache/cases"'

cp -R "$fix" "$WORK/idioms"
rm -rf "$WORK/idioms/build"
test_expect "the same kernels build unmodified with neuronop" '
    run build idioms
    expect_status 0'

# Each case: the inputs the driver gave torch, neuronop runs the op on them, and the output's
# elements (the .npy file's last bytes) must equal torch's exactly.
while read -r name op nin; do
    test_expect "idiom $name computes what libtorch computes, bit for bit" '
        set -- "$cache/$name.npy"
        [ "$nin" -lt 2 ] || set -- "$@" "$cache/$name.1.npy"
        [ "$nin" -lt 3 ] || set -- "$@" "$cache/$name.2.npy"
        run run idioms "$op" "$@" -o "$name.out.npy"
        expect_status 0
        expect_err "0 errors, 0 warnings"
        n=$(stat -c %s "$cache/$name.bin")
        tail -c "$n" "$name.out.npy" >"$name.got"
        cmp "$name.got" "$cache/$name.bin"'
done <"${cache:-/dev/null}/cases"

test_done
