#!/bin/sh
# The idiom suite: torch C++ idioms on accessor elements (auto copies, T & bindings, integer
# compound operators, ?:, std::max, std::swap, template deduction, lambdas, const T & seeing
# later writes, c10's 16-bit float rounding, 4-D kernels in the style of the public RWKV
# wkv op - our own code, not a copy; c10's dtype numbers, BFloat16's bitwise operators,
# 16-bit NaNs widened and narrowed, clamp's promotion, libtorch's spellings: at:: and c10::
# names, sizes from one number or an array, dtype<T>(), IntArrayRef's slice() and reverse
# iterators) compute bit for bit what libtorch 1.13 computes, and torch::Scalar's
# conversions (and its type(), unary minus, equal(), log() and conj()) give its values and
# refuse what it refuses, as do c10's facts of a ScalarType (toString, elementSize,
# isFloatingType ...), a tensor's element_size() and IntArrayRef::slice().
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
rm -rf "$WORK/idioms/build" "$WORK/idioms/c10/build" "$WORK/idioms/scalars/build"
test_expect "the same kernels build unmodified with neuronop" '
    run build idioms
    expect_status 0
    run build idioms/c10
    expect_status 0'

# Each case: the inputs the driver gave torch, neuronop runs the op on them, and the output's
# elements (the .npy file's last bytes) must equal torch's exactly.
while read -r name op nin lib; do
    test_expect "idiom $name computes what libtorch computes, bit for bit" '
        set -- "$cache/$name.npy"
        [ "$nin" -lt 2 ] || set -- "$@" "$cache/$name.1.npy"
        [ "$nin" -lt 3 ] || set -- "$@" "$cache/$name.2.npy"
        run run "idioms/$lib" "$op" "$@" -o "$name.out.npy"
        expect_status 0
        expect_err "0 errors, 0 warnings"
        n=$(stat -c %s "$cache/$name.bin")
        tail -c "$n" "$name.out.npy" >"$name.got"
        cmp "$name.got" "$cache/$name.bin"'
done <"${cache:-/dev/null}/cases"

# torch::Scalar's conversions (scalars/k.cpp): the value libtorch converts each to, bit for
# bit, or where c10 throws (a value the type cannot hold), a stopped core with c10's message.
test_expect "Scalar conversions (toInt(), to<T>() ...) give what libtorch gives, or its refusal" '
    run build idioms/scalars
    expect_status 0
    bad=0
    while read -r name value how; do
        run run idioms/scalars scalar_to zeros:1 "$value" "$how" -o "$name.npy"
        if [ -f "$cache/$name.err" ]; then
            why=$(cat "$cache/$name.err")
            if [ "$status" != 1 ] || ! grep -qF -- ": $why" "$WORK/err"; then
                echo "$value by conversion $how: torch says \"$why\", neuronop exits $status"
                cat "$WORK/err"
                bad=1
            fi
        elif [ "$status" != 0 ] || ! tail -c 8 "$name.npy" | cmp -s - "$cache/$name.bin"; then
            echo "$value by conversion $how: not what libtorch converts it to"
            cat "$WORK/err"
            bad=1
        fi
    done <"${cache:-/dev/null}/scalars"
    [ -s "$cache/scalars" ] && [ $bad -eq 0 ]'

# log() of a bool Scalar: torch 1.13 throws there, from a failed internal assertion whose
# words are no message to copy (the driver leaves it out), so the core stops with its own
test_expect "log() of a bool Scalar stops the core, as libtorch throws" '
    run run idioms/scalars scalar_to zeros:1 1 27 -o boollog.npy
    expect_status 1
    expect_err "error: torch::Scalar::log() of a bool: c10 has no log of a bool"'

# c10::elementSize of a type the subset lacks (9, c10's ComplexFloat, 8 bytes in torch): the
# device has no such tensor, so the core stops rather than answer for a type it cannot hold
test_expect "c10::elementSize() of a ScalarType the subset lacks stops the core" '
    run run idioms/scalars scalar_to zeros:1 9 29 -o complexsize.npy
    expect_status 1
    expect_err "error: c10::elementSize() of ScalarType 9, which the device'\''s torch subset does not have (neuronop-cxx(3) lists its types)"'

# size(dim) of an int64 dim no int holds: torch 1.13 throws (Dimension out of range ...), and
# nt_size takes an int, which would wrap 4294967295 onto -1 and answer the last size
test_expect "size(dim) of a dim past int's range stops the core, as libtorch throws" '
    run run idioms/scalars scalar_to zeros:1 4294967295 32 -o bigdim.npy
    expect_status 1
    expect_err "error: size(dim=4294967295): the tensor has 2 dimensions"'

test_done
