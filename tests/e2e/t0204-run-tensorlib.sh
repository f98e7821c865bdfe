#!/bin/sh
# The device's tensor library, op family by op family, against values computed in Perl.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
values() { npy read "$1" | tail -n +2 | tr '\n' ' ' | sed 's/ $//'; }
# same GOT WANT: equal and not empty (an empty string on both sides proves nothing)
same() { [ -n "$1" ] && [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }; }
# perl_f32 EXPR: the expression of $_ over the inputs, rounded through float32 like the device
perl_f32() {
    perl -e '@x = split / /, $ARGV[1]; @y = split / /, ($ARGV[2] // ""); $i = 0;
             print join(" ", map { my $b = $y[$i++]; 0 + sprintf("%.6g", unpack("f", pack("f", eval $ARGV[0]))) } @x), "\n"' "$@"
}
cp -R "$NEURONOP_SRC/tests/fixtures/tlib" "$WORK/tlib"

test_expect "abs, floor, sin, log2, add, mul" '
    npy write x.npy "<f4" 5 -2.5 -0.5 0 1.5 3.25
    run run tlib unary x.npy -o out.npy
    expect_status 0
    want=$(perl_f32 "use POSIX; floor(abs(\$_)) + sin(\$_) * log(abs(\$_) + 1) / log(2)" "-2.5 -0.5 0 1.5 3.25")
    got=$(values out.npy)
    perl -e "@a = split / /, \"$got\"; @b = split / /, \"$want\";
             for (0..\$#b) { exit 1 if abs(\$a[\$_] - \$b[\$_]) > 1e-5 * (1 + abs(\$b[\$_])) }"'

test_expect "pow with a scalar, a scalar base and a tensor exponent" '
    npy write x.npy "<f4" 4 0.5 1 2 3
    run run tlib pow_forms x.npy -o out.npy
    expect_status 0
    same "$(values out.npy)" "$(perl_f32 "\$_**2 + 2**\$_ - \$_**\$_" "0.5 1 2 3")"'

test_expect "sub with alpha, div by a scalar, mul" '
    npy write a.npy "<f4" 3 1 2 3
    npy write b.npy "<f4" 3 4 -2 0.5
    run run tlib arith a.npy b.npy -o out.npy
    expect_status 0
    same "$(values out.npy)" "$(perl_f32 "(\$_ - 0.5 * \$b) / 4 * \$b" "1 2 3" "4 -2 0.5")"'

test_expect "bitwise and, or, not on int32" '
    npy write x.npy "<i4" 4 0 5 12 -1
    run run tlib bits x.npy -o out.npy
    expect_status 0
    same "$(values out.npy)" "$(perl -e "print join(\" \", map { ((\$_ & 12) | 1) + (~\$_ & 0xffffffff) - 2**32 * ((~\$_ & 0xffffffff) >= 2**31) } 0, 5, 12, -1)")"'

test_expect "eye and mul_s_out" '
    run run tlib eye 2 3 -o out.npy
    expect_status 0
    same "$(values out.npy)" "7 0 0 0 7 0"'

# (a C++ idioms helper's find: the device made a bfloat16 identity where torch raises)
why=$(torch_says '
import torch
try:
    torch.eye(2, 3, dtype=torch.bfloat16)
except RuntimeError as e:
    print(e)
')
test_expect "eye in bfloat16 is refused with torch'\''s reason" '
    [ -n "$why" ]
    run run tlib eye_bf16 2 3
    expect_status 1
    expect_err "core 0: error: nt_eye(2, 3, NT_BF16): $why"'

# (a C++ idioms tester's find: "shape over the device's limits: dimension 0 has negative
# size -1" where ATen names the negative dimension, and eye its n or m)
negative=$(torch_says '
import torch
for f in (lambda: torch.empty(-1, 3), lambda: torch.eye(-1, 3), lambda: torch.eye(3, -2)):
    try:
        f()
    except RuntimeError as e:
        print(e)
')
test_expect "a negative size is refused in torch'''s words" '
    [ "$(echo "$negative" | wc -l)" -eq 3 ]
    run run tlib eye -1 3
    expect_status 1
    expect_err "nt_empty: $(echo "$negative" | sed -n 1p)"
    run run tlib eye_any zeros:1 -1 3
    expect_status 1
    expect_err "core 0: error: nt_eye(-1, 3): $(echo "$negative" | sed -n 2p)"
    run run tlib eye_any zeros:1 3 -2
    expect_status 1
    expect_err "core 0: error: nt_eye(3, -2): $(echo "$negative" | sed -n 3p)"'

test_expect "exp of an integral tensor is float32" '
    run run tlib int_exp arange:3:i32 -o out.npy
    expect_status 0
    expect_out "output: 3 float32"
    same "$(values out.npy)" "$(perl_f32 "exp(\$_)" "0 1 2")"'

test_expect "shapes must match: no broadcasting" '
    run run tlib mismatch randn:3x4
    expect_status 1
    expect_err "neuronop: mismatch: core 0: error: nt_add: self is 3x4 but other is 1; shapes must match (no broadcasting)"'

test_expect "bitwise ops refuse float tensors" '
    run run tlib bits_on_float randn:4
    expect_status 1
    expect_err "nt_bitwise_and_s on a float32 tensor: bitwise ops take integral tensors only"'

test_done
