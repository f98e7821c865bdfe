#!/bin/sh
# The tensor library against PyTorch 1.13 (tests/diff/diff.py: every op and overload, dtype,
# form and special value, through the C and the C++ surface; where torch raises, the device
# error and torch's reason), and Scalars on the command line that start with '-'.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
PY=/usr/bin/python3   # Debian's, with python3-torch (mk/deps.sh)
# The libraries are built once per version of tests/diff, under out/ (g++ takes seconds).
key=$(cd "$NEURONOP_SRC/tests/diff" && cat k.c s.c table.h neuronop.yaml cxx/* | cksum | cut -d' ' -f1)
CACHE="$NEURONOP_SRC/out/e2e-cache/tdiff-$key"
if [ ! -d "$CACHE" ]; then
    mkdir -p "$NEURONOP_SRC/out/e2e-cache"
    rm -rf "$CACHE.tmp.$$"
    cp -R "$NEURONOP_SRC/tests/diff" "$CACHE.tmp.$$"
    rm -rf "$CACHE.tmp.$$/build" "$CACHE.tmp.$$/cxx/build"
    mv "$CACHE.tmp.$$" "$CACHE" 2>/dev/null || rm -rf "$CACHE.tmp.$$"
fi

test_expect "every op and overload computes and refuses what torch 1.13 does" '
    # found, not imported: diff.py imports it, and an import costs seconds
    "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec(\"torch\") is None)" ||
        { echo "no torch for $PY: run mk/deps.sh"; exit 1; }
    st=0
    TMPDIR="$WORK" "$PY" "$NEURONOP_SRC/tests/diff/diff.py" "$NEURONOP" "$CACHE" >diff.tap || st=$?
    grep -v "^ok" diff.tap || true
    [ $st -eq 0 ]
    grep -q "^ok 24 - fill_" diff.tap'

cp -R "$NEURONOP_SRC/tests/diff" "$WORK/tdiff"
rm -rf "$WORK/tdiff/build" "$WORK/tdiff/cxx"
test_expect "-inf, -nan and negative numbers in an argument position are values" '
    run run tdiff add_scalar full:2:1 -inf -o a.npy
    expect_status 0
    expect_out "values: -inf -inf"
    run run tdiff add_scalar full:2:1 -nan
    expect_status 0
    expect_out "values: -nan -nan"
    run run tdiff add_scalar full:2:1 -2.5
    expect_status 0
    expect_out "values: -1.5 -1.5"
    run run tdiff add_scalar full:2:1 -1e-3
    expect_status 0
    expect_out "values: 0.999 0.999"
    run run tdiff add_scalar arange:2:i32 -3
    expect_status 0
    expect_out "values: -3 -2"'

test_expect "an option is still an option, and -- still ends them" '
    run run tdiff add_scalar full:2:1 -x
    expect_status 2
    expect_err "unknown option '"'"'-x'"'"'"
    run run tdiff add_scalar full:2:1 -- -7
    expect_status 0
    expect_out "values: -6 -6"'

# ATen's float32 pow by a Scalar of the general case: its vectorised loop (16 elements at a
# time) raises to the exponent made a float with Sleef's powf, its scalar loop (the rest) to
# the double with libm's; for 1.7 the two differ by several ulp.  Where torch's CPU
# capability is AVX2 the device calls the same Sleef functions, and the bits are torch's;
# elsewhere neuronop-api(3) promises 1 ulp (ulp: 0 or 1, from torch).  The expectation is
# torch's result for arange(40), as raw bits.
ulp=$(torch_says '
import torch
print(0 if "CPU capability usage: AVX2" in torch.__config__.show() else 1)
')
want=$(torch_says '
import torch
x = torch.arange(40, dtype=torch.float32)
print(" ".join(str(v) for v in x.pow(1.7).view(torch.int32).tolist()))
')
test_expect "float32 pow by 1.7 of 40 elements is torch's (within $ulp ulp), the vectorised part too" '
    [ -n "$want" ] && [ -n "$ulp" ]
    run run tdiff pow_scalar arange:40 1.7 -o p.npy
    expect_status 0
    "$PY" -c "
import sys, numpy as np
got = np.load(\"p.npy\").view(np.int32).astype(np.int64)
want = np.array([int(v) for v in sys.argv[1].split()], dtype=np.int64)
far = np.nonzero(np.abs(got - want) > int(sys.argv[2]))[0]
for i in far:
    print(\"element %d: torch bits %d, neuronop %d\" % (i, want[i], got[i]))
sys.exit(1 if len(far) or len(got) != 40 else 0)
" "$want" "$ulp"'

# ATen's float32 sin, cos, tan, exp, log, log2, log10 (vectorised to the last element) and
# pow's vectorised loop are Sleef's, which rounds otherwise than libm in a few percent of
# elements (libm's sin differs from torch's in 4% of these, its tan in 10%).  Sleef takes 8
# elements at a time, and its sin and cos round all 8 otherwise when one of them is large
# (past about 125), inf or NaN: the last 1024 numbers mix small and large ones in most
# groups of 8 (a new user's find: sin(-80) beside 200 was 1 ulp off).  2024 numbers over a
# wide range, both pows' scalar loops too (2024 % 16 elements), and torch 1.13's bits
# (within $ulp ulp, as above); tdiff's nan_op and nan_op2 run the same ops in the same order.
rounds=$(torch_says '
import torch
g = torch.Generator().manual_seed(7)
x = torch.cat([torch.randn(400, generator=g) * 10, torch.randn(300, generator=g) * 1000,
               torch.rand(300, generator=g) * 200 - 100, torch.rand(1024, generator=g) * 400 - 200])
y = torch.rand(2024, generator=g) * 6 - 3
b = lambda t: " ".join(str(v) for v in t.view(torch.int32).tolist())
print(b(x))
print(b(y))
ax, x10, ax100 = x.abs(), x / 10, x.abs() / 100
for name, k, arg, r in (
        ("nan_op", 1, "x", torch.sin(x)), ("nan_op2", 10, "x", torch.cos(x)),
        ("nan_op2", 11, "x", torch.tan(x)), ("nan_op", 3, "x10", torch.exp(x10)),
        ("nan_op", 4, "ax", torch.log(ax)), ("nan_op2", 12, "ax", torch.log2(ax)),
        ("nan_op2", 13, "ax", torch.log10(ax)), ("nan_op", 9, "ax", torch.pow(ax, 1.7)),
        ("nan_op2", 4, "ax100", torch.pow(ax100, y))):
    print(name, k, arg, b(r))
')
test_expect "float32 transcendentals of 2024 numbers are torch's bits (within $ulp ulp), 9 ops" '
    [ "$(echo "$rounds" | wc -l)" -eq 11 ]
    "$PY" -c "
import sys, numpy as np
x = np.array([int(v) for v in sys.argv[1].split()], dtype=np.int32).view(np.float32)
y = np.array([int(v) for v in sys.argv[2].split()], dtype=np.int32).view(np.float32)
np.save(\"x.npy\", x); np.save(\"ax.npy\", np.abs(x)); np.save(\"x10.npy\", x / np.float32(10))
np.save(\"ax100.npy\", np.abs(x) / np.float32(100)); np.save(\"y.npy\", y)
" "$(echo "$rounds" | sed -n 1p)" "$(echo "$rounds" | sed -n 2p)"
    echo "$rounds" | sed 1,2d >ops
    while read -r op k arg want; do   # each result to its own file, checked at once below
        if [ "$op" = nan_op ]; then
            run run tdiff nan_op "$arg.npy" "$k" -o "t_$op$k.npy"
        else
            run run tdiff nan_op2 "$arg.npy" y.npy "$k" -o "t_$op$k.npy"
        fi
        [ "$status" = 0 ] || { echo "$op $k: exit $status"; cat "$WORK/err"; exit 1; }
    done <ops
    "$PY" -c "
import sys, numpy as np
bad = 0
for line in open(\"ops\"):
    op, k, arg, want = line.split(None, 3)
    got = np.load(\"t_%s%s.npy\" % (op, k)).view(np.int32).astype(np.int64)
    want = np.array([int(v) for v in want.split()], dtype=np.int64)
    far = np.nonzero(np.abs(got - want) > int(sys.argv[1]))[0] if len(got) == len(want) else [0]
    for i in far[:6]:
        print(\"%s %s element %d: torch bits %#x, neuronop %#x\" % (op, k, i, want[i], got[i]))
    bad += len(far) > 0
sys.exit(1 if bad else 0)
" "$ulp"'

# bfloat16 add with an alpha: ATen's vectorised loop (32 elements at a time) computes
# self + alpha * other as one float multiply-add, its scalar loop (the rest) rounds alpha *
# other to bfloat16 first.  The inputs and torch 1.13's result, bit for bit, come from torch.
sums=$(torch_says '
import torch
i = torch.arange(40, dtype=torch.float32)
a = ((i * 0.731).sin() * 3).bfloat16()
b = ((i * 1.37).cos() * 5).bfloat16()
print(" ".join(repr(v) for v in a.float().tolist()))
print(" ".join(repr(v) for v in b.float().tolist()))
print(" ".join(str(v & 0xffff) for v in torch.add(a, b, alpha=1.7).view(torch.int16).tolist()))
')
test_expect "bfloat16 add with alpha 1.7 of 40 elements is torch's, bit for bit, both loops" '
    [ -n "$sums" ]
    npy write a.npy "<V2" 40 $(echo "$sums" | sed -n 1p)
    npy write b.npy "<V2" 40 $(echo "$sums" | sed -n 2p)
    run run tdiff add_alpha a.npy b.npy 1.7 -o sum.npy
    expect_status 0
    got=$("$PY" -c "
import numpy as np
print(\" \".join(str(v) for v in np.load(\"sum.npy\").view(np.uint16).tolist()))
")
    [ "$got" = "$(echo "$sums" | sed -n 3p)" ] || {
        echo "torch:    $(echo "$sums" | sed -n 3p)"; echo "neuronop: $got"; false; }'

# bfloat16 pow by a Scalar that rounds to -2 or 3 in bfloat16 (-2.003, 3.004): ATen picks its
# 1 / (x * x) and x * x * x forms by the exponent in bfloat16, not Sleef's pow, in its
# vectorised loop too (the first 32 of 40 elements).  The inputs are 1e-20 to 1e19, where
# Sleef's powf and those forms round otherwise; torch 1.13's results, bit for bit.
bpows=$(torch_says '
import torch
a = torch.logspace(-20, 19, 40).bfloat16()
print(" ".join(repr(v) for v in a.float().tolist()))
for e in (-2.003, 3.004):
    print(" ".join(str(v & 0xffff) for v in torch.pow(a, e).view(torch.int16).tolist()))
')
test_expect "bfloat16 pow by -2.003 and 3.004 of 40 elements is torch's, bit for bit, both loops" '
    [ -n "$bpows" ]
    npy write bp.npy "<V2" 40 $(echo "$bpows" | sed -n 1p)
    line=2
    for e in -2.003 3.004; do
        run run tdiff pow_scalar bp.npy $e -o bpow.npy
        expect_status 0
        got=$("$PY" -c "
import numpy as np
print(\" \".join(str(v) for v in np.load(\"bpow.npy\").view(np.uint16).tolist()))
")
        want=$(echo "$bpows" | sed -n ${line}p)
        [ "$got" = "$want" ] || { echo "^$e torch:    $want"; echo "neuronop: $got"; exit 1; }
        line=$((line + 1))
    done'

# float32 add of a Scalar with an alpha: ATen's vectorised loop (16 elements at a time) and
# the scalar code of its scalar loop fuse self + alpha * other; the part of that loop GCC 12
# vectorised again adds alpha * other rounded once before it.  Tensors of 47 and 13
# elements (float32, and int32 made float32 by a float Scalar), several alphas: torch's
# results, bit for bit.
adds=$(torch_says '
import torch
for n in (47, 13):
    i = torch.arange(n, dtype=torch.float32)
    for t in ((i * 0.731).sin() * 3, (i * 7 - 100).int()):
        for s, alpha in ((2.3, 1.7), (2.3, 0.3), (-1.1, -2.9), (5.5, 3)):
            print(n, "f32" if t.dtype == torch.float32 else "i32", s, alpha,
                  " ".join(repr(v) for v in t.tolist()), ":",
                  " ".join(str(v) for v in torch.add(t, s, alpha=alpha).view(torch.int32).tolist()))
')
test_expect "float32 add of a Scalar with an alpha is what torch computes, bit for bit, both loops" '
    [ "$(echo "$adds" | wc -l)" -eq 16 ]
    bad=0
    echo "$adds" >adds
    while read -r n dt s alpha rest; do
        vals=${rest%% :*}
        want=${rest#*: }
        if [ "$dt" = f32 ]; then
            npy write x.npy "<f4" "$n" $vals
        else
            npy write x.npy "<i4" "$n" $vals
        fi
        run run tdiff add_s_alpha x.npy "$s" "$alpha" -o sum.npy
        got=$("$PY" -c "
import numpy as np
print(\" \".join(str(v) for v in np.load(\"sum.npy\").view(np.int32).tolist()))
")
        if [ "$status" != 0 ] || [ "$got" != "$want" ]; then
            echo "$n $dt + $s * $alpha: torch    $want"
            echo "$n $dt + $s * $alpha: neuronop $got"; cat "$WORK/err"; bad=1
        fi
    done <adds
    [ $bad -eq 0 ]'

# bfloat16 pow by -0.5 (ATen's rsqrt): its scalar loop rounds sqrt(x) to bfloat16 before
# dividing 1 by it, its vectorised loop (32 elements at a time) divides in float.  The
# inputs, 40 bfloat16 values, and torch 1.13's result, bit for bit, come from torch; tdiff's
# nan_op 11 is pow by -0.5.
rsq=$(torch_says '
import torch
i = torch.arange(40, dtype=torch.float32)
x = ((i * 0.731).sin().abs() * 7 + 0.01).bfloat16()
print(" ".join(repr(v) for v in x.float().tolist()))
print(" ".join(str(v & 0xffff) for v in torch.pow(x, -0.5).view(torch.int16).tolist()))
')
test_expect "bfloat16 pow by -0.5 of 40 elements is torch's, bit for bit, both loops" '
    [ -n "$rsq" ]
    npy write x.npy "<V2" 40 $(echo "$rsq" | sed -n 1p)
    run run tdiff nan_op x.npy 11 -o rsqrt.npy
    expect_status 0
    got=$("$PY" -c "
import numpy as np
print(\" \".join(str(v) for v in np.load(\"rsqrt.npy\").view(np.uint16).tolist()))
")
    [ "$got" = "$(echo "$rsq" | sed -n 2p)" ] || {
        echo "torch:    $(echo "$rsq" | sed -n 2p)"; echo "neuronop: $got"; false; }'

# same_bits OP: for each line of stdin, "DTYPE ARG BITS... : WANT...", runs tdiff OP on a
# tensor of DTYPE (float32, bfloat16, float16 or int32) with elements BITS and the Scalar
# ARG, and says where the output's raw bits are not torch's WANT; false if any are not.
same_bits() {
    sb_bad=0
    while read -r sb_dt sb_arg sb_rest; do
        sb_want=${sb_rest#*: }
        "$PY" -c "
import sys, numpy as np
d = {\"float32\": np.float32, \"bfloat16\": \"V2\", \"float16\": np.float16, \"int32\": np.int32}[sys.argv[1]]
u = np.uint16 if sys.argv[1] in (\"bfloat16\", \"float16\") else np.uint32
np.save(\"in.npy\", np.array([int(v) for v in sys.argv[2].split()], dtype=u).view(d))
" "$sb_dt" "${sb_rest%% :*}"
        run run tdiff "$1" in.npy "$sb_arg" -o bits.npy
        sb_got=$("$PY" -c "
import numpy as np
a = np.load(\"bits.npy\")
print(\" \".join(str(v) for v in a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint16).tolist()))
")
        if [ "$status" != 0 ] || [ "$sb_got" != "$sb_want" ]; then
            echo "$1 of $sb_dt, $sb_arg: torch    $sb_want"
            echo "$1 of $sb_dt, $sb_arg: neuronop $sb_got"
            cat "$WORK/err"; sb_bad=1
        fi
    done
    [ $sb_bad -eq 0 ]
}

# pow of a Scalar base that equals 1.0: ATen fills ones, whatever the exponent, where libm's
# powf(1, y) is a NaN for a signalling NaN y (a bool base true, and 1.00000001, compute).
# float32 and bfloat16 exponents with signalling NaNs, 47 elements: torch's results.
ones=$(torch_says '
import torch
for dt, it, bits in ((torch.float32, torch.int32, [0x7f800001, 0x7fc00001, 0x3f800000, -8388607]),
                     (torch.bfloat16, torch.int16, [0x7f81, 0x7fc1, 0x3f80, -127])):
    x = torch.tensor((bits * 12)[:47], dtype=it).view(dt)
    m = 0xffffffff if it == torch.int32 else 0xffff
    for base in ("1", "1.0", "1.00000001"):
        print(str(dt)[6:], base, " ".join(str(v & m) for v in x.view(it).tolist()), ":",
              " ".join(str(v & m) for v in torch.pow(eval(base), x).view(it).tolist()))
')
test_expect "pow of the Scalar base 1 is ones, as torch fills them" '
    [ "$(echo "$ones" | wc -l)" -eq 6 ]
    echo "$ones" | same_bits pow_base'

# pow by a C++ bool: c10's true equals no 1.0 and false no 0.0, so ATen computes x ^ 1.0 and
# x ^ 0.0 (Sleef's in its vectorised loop, libm's in the rest) where an int Scalar would
# copy self or fill ones: NaNs show the difference.  float32, bfloat16, float16 and int32
# tensors of 47 elements, signalling NaNs among them: torch's results, bit for bit.
pbool=$(torch_says '
import torch
for dt, it, bits in ((torch.float32, torch.int32, [0x7f800001, 0x7fc00001, 0x3fc00000, -1069547520, -8388607]),
                     (torch.bfloat16, torch.int16, [0x7f81, 0x7fc1, 0x3fc0, -16320, -127]),
                     (torch.float16, torch.int16, [0x7c01, 0x7e01, 0x3e00, -15872, -1023]),
                     (torch.int32, torch.int32, [3, -2, 0, 7, -9])):
    x = torch.tensor((bits * 10)[:47], dtype=it).view(dt)
    m = 0xffffffff if it == torch.int32 else 0xffff
    for e in (1, 0):
        print(str(dt)[6:], e, " ".join(str(v & m) for v in x.view(it).tolist()), ":",
              " ".join(str(v & m) for v in torch.pow(x, bool(e)).view(it).tolist()))
')
test_expect "pow by true and false computes x ^ 1.0 and x ^ 0.0, as torch does" '
    [ "$(echo "$pbool" | wc -l)" -eq 8 ]
    echo "$pbool" | same_bits pow_bool'

# bfloat16 NaNs: ATen makes each result a bfloat16 in its vectorised loop (32 elements at a
# time) with an AVX2 conversion that makes every NaN 0xffff, in its scalar loop (the rest)
# with c10's, which makes it 0x7fc0, and some ops (sin, exp, ceil ...) are vectorised to the
# last element; clamp and pow by 1 keep a NaN element as it is.  The input, NaNs of several
# payloads among numbers that make NaNs, and torch 1.13's results, bit for bit, come from
# torch; tdiff's nan_op runs the same ops in the same order.
nans=$(torch_says '
import torch
bits = [0x7fc1, 0xff81, 0xbf80, 0x7f80, 0x0000, 0x3fc0, 0xff80, 0x7f81] * 5
x = torch.tensor([b - 65536 if b > 32767 else b for b in bits], dtype=torch.int16)
x = x.view(torch.bfloat16)
nan = float("nan")
ops = [torch.abs, torch.sin, torch.ceil, torch.exp, torch.log,
       lambda x: torch.clamp(x, 0, 2), lambda x: torch.clamp(x, nan, 2),
       lambda x: torch.pow(x, 1), lambda x: torch.pow(x, 0.5), lambda x: torch.pow(x, 1.7),
       lambda x: torch.pow(x, 2), lambda x: torch.pow(x, -0.5), lambda x: torch.mul(x, x),
       lambda x: torch.div(x, x), lambda x: torch.sub(x, x), lambda x: torch.add(x, -float("inf")),
       lambda x: torch.pow(-1.5, x), lambda x: torch.pow(x, x),
       lambda x: torch.empty_like(x).fill_(-nan),
       lambda x: torch.mul(x.float(), x.float(), out=torch.empty_like(x))]
print(" ".join(str(b) for b in bits))
for f in ops:
    print(" ".join(str(v & 0xffff) for v in f(x).view(torch.int16).tolist()))
')
test_expect "bfloat16 NaNs of 40 elements are the bits torch makes, both loops, 20 ops" '
    [ "$(echo "$nans" | wc -l)" -eq 21 ]
    "$PY" -c "
import sys, numpy as np
np.save(\"nanx.npy\", np.array([int(v) for v in sys.argv[1].split()], dtype=np.uint16).view(\"V2\"))
" "$(echo "$nans" | sed -n 1p)"
    bad=0
    k=0
    while [ $k -lt 20 ]; do
        run run tdiff nan_op nanx.npy $k -o nan.npy
        got=$("$PY" -c "
import numpy as np
print(\" \".join(str(v) for v in np.load(\"nan.npy\").view(np.uint16).tolist()))
")
        want=$(echo "$nans" | sed -n "$((k + 2))p")
        if [ "$status" != 0 ] || [ "$got" != "$want" ]; then
            echo "op $k: torch    $want"; echo "op $k: neuronop $got"; cat "$WORK/err"; bad=1
        fi
        k=$((k + 1))
    done
    [ $bad -eq 0 ]'

# float32 and float16 NaNs: ATen's float32 sin, cos and tan (Sleef) make every NaN
# 0xffffffff, its log 0x7fc00000, its pow's vectorised loop (16 elements at a time) Sleef's
# NaNs and its scalar loop libm's; of two NaN operands add and sub give other's, div self's,
# mul other's and, in its scalar loop, a pattern of the compiled code's; a half result keeps
# only a NaN's sign, and there add and sub give other's in the vectorised loop (32 at a time)
# and self's in the rest (tlkernel.c); by a NaN alpha, alpha * other is computed first (an
# ATen tester's find: a NaN made of numbers was given).  The inputs, NaNs of several signs and payloads
# among numbers that make NaNs, 47 elements (both loops), and torch 1.13's results, bit for
# bit, come from torch; tdiff's nan_op and nan_op2 run the same ops in the same order.
for dt in float32 float16; do
nans=$(torch_says '
import torch
dt = getattr(torch, "'$dt'")
nan, inf, n = float("nan"), float("inf"), 47
if dt == torch.float32:
    xb = [0x7fc00001, 0xff800001, 0xbf800000, 0x7f800000, 0, 0x3fc00000, 0xff800000, 0x7f800001]
    yb = [0xffc00002, 0x7fc00003, 0x3f800000, 0xff800005, 0xffc00006, 0, 0x7fc00007]
    it, nb = torch.int32, 32
else:
    xb = [0x7e01, 0xfc01, 0xbc00, 0x7c00, 0, 0x3e00, 0xfc00, 0x7c01]
    yb = [0xfe02, 0x7e03, 0x3c00, 0xfc05, 0xfe06, 0, 0x7e07]
    it, nb = torch.int16, 16
xb, yb = (xb * 7)[:n], (yb * 7)[:n]
t = lambda bits: torch.tensor([b - (1 << nb) if b >> (nb - 1) else b for b in bits], dtype=it).view(dt)
x, y = t(xb), t(yb)
one = [torch.abs, torch.sin, torch.ceil, torch.exp, torch.log,
       lambda x: torch.clamp(x, 0, 2), lambda x: torch.clamp(x, nan, 2),
       lambda x: torch.pow(x, 1), lambda x: torch.pow(x, 0.5), lambda x: torch.pow(x, 1.7),
       lambda x: torch.pow(x, 2), lambda x: torch.pow(x, -0.5), lambda x: torch.mul(x, x),
       lambda x: torch.div(x, x), lambda x: torch.sub(x, x), lambda x: torch.add(x, -inf),
       lambda x: torch.pow(-1.5, x), lambda x: torch.pow(x, x),
       lambda x: torch.empty_like(x).fill_(-nan),
       lambda x: torch.mul(x.float(), x.float(), out=torch.empty_like(x))]
two = [lambda: torch.add(x, y), lambda: torch.sub(x, y, alpha=2), lambda: torch.mul(x, y),
       lambda: torch.div(x, y), lambda: torch.pow(x, y), lambda: torch.add(x, -nan),
       lambda: torch.mul(x, -nan), lambda: torch.div(x, -nan), lambda: torch.pow(-nan, x),
       lambda: torch.pow(x, -nan), lambda: torch.cos(x), lambda: torch.tan(x),
       lambda: torch.log2(x), lambda: torch.log10(x), lambda: torch.floor(x),
       lambda: torch.pow(x, 3), lambda: torch.pow(x, -1), lambda: torch.pow(x, -2),
       lambda: torch.div(x, 0.0), lambda: torch.mul(x, inf), lambda: torch.sub(y, x),
       lambda: torch.mul(y, x), lambda: torch.pow(y, x), lambda: torch.add(x, y, alpha=nan),
       lambda: torch.sub(x, y, alpha=-nan)]
print(" ".join(str(b) for b in xb))
print(" ".join(str(b) for b in yb))
ops = [("nan_op", k, lambda f=f: f(x)) for k, f in enumerate(one)]
ops += [("nan_op2", k, f) for k, f in enumerate(two)]
for name, k, f in ops:
    try:
        r = f()
    except RuntimeError:
        continue   # a refusal (half has no sin ...): the differential suite checks those
    print(name, k, " ".join(str(v & ((1 << nb) - 1)) for v in r.view(it).tolist()))
')
test_expect "$dt NaNs of 47 elements are the bits torch makes, both loops, 45 ops where it computes" '
    [ "$(echo "$nans" | wc -l)" -gt 20 ]
    "$PY" -c "
import sys, numpy as np
d = np.float32 if sys.argv[1] == \"float32\" else np.float16
u = np.uint32 if d == np.float32 else np.uint16
for i, f in ((1, \"nanx.npy\"), (2, \"nany.npy\")):
    np.save(f, np.array([int(v) for v in sys.argv[i + 1].split()], dtype=u).view(d))
" '$dt' "$(echo "$nans" | sed -n 1p)" "$(echo "$nans" | sed -n 2p)"
    echo "$nans" | sed 1,2d >ops
    while read -r op k want; do   # each result to its own file, checked at once below
        if [ "$op" = nan_op ]; then
            run run tdiff nan_op nanx.npy "$k" -o "n_$op$k.npy"
        else
            run run tdiff nan_op2 nanx.npy nany.npy "$k" -o "n_$op$k.npy"
        fi
        [ "$status" = 0 ] || { echo "$op $k: exit $status"; cat "$WORK/err"; exit 1; }
    done <ops
    # NaNs bit for bit, numbers within $ulp ulp (as above: Sleef and libm round cos
    # differently, where torch does not call Sleef'"'"'s AVX2 functions)
    "$PY" -c "
import sys, numpy as np
bad = 0
for line in open(\"ops\"):
    op, k, want = line.split(None, 2)
    a = np.load(\"n_%s%s.npy\" % (op, k))
    nb = a.dtype.itemsize * 8
    got = [int(v) for v in a.view(np.uint32 if nb == 32 else np.uint16)]
    want = [int(v) for v in want.split()]
    def key(b):
        return -(b & ((1 << (nb - 1)) - 1)) if b >> (nb - 1) else b
    def nan(b):
        e = 0xff if nb == 32 else 0x1f
        m = 23 if nb == 32 else 10
        return (b >> m) & e == e and b & ((1 << m) - 1)
    far = [i for i, (w, g) in enumerate(zip(want, got))
           if (w != g if nan(w) or nan(g) else abs(key(w) - key(g)) > int(sys.argv[1]))]
    for i in far[:6]:
        print(\"%s %s element %d: torch %#x, neuronop %#x\" % (op, k, i, want[i], got[i]))
    bad += bool(far) or len(got) != len(want)
sys.exit(1 if bad else 0)
" "$ulp"'
done

# c10 makes a float16 signalling NaN quiet when it widens it to float, so pow of a float16
# tensor and a float32 one (a float32 result) takes x ^ 0 and 1 ^ x to be 1 in ATen's scalar
# loop too, where libm's powf of a signalling NaN is a NaN (an ATen tester's find).  20
# elements: both loops; torch 1.13's bits.  (tdiff's nan_op2 takes its result's dtype from
# its first tensor: 22 is pow(y, x).)
pows=$(torch_says '
import torch
h = [0x7d00, 0xfd00, 0x7c01, 0x3c00, 0x7e00] * 4
x = torch.tensor([b - 65536 if b > 32767 else b for b in h], dtype=torch.int16).view(torch.float16)
z = torch.tensor([0.0, -0.0] * 10)
b = lambda t: " ".join(str(v & 0xffffffff) for v in t.view(torch.int32).tolist())
print(" ".join(str(v) for v in h))
print(b(torch.pow(x, z)), "|", b(torch.pow(torch.ones(20), x)))
')
test_expect "pow of a float16 signalling NaN and a float32 tensor is torch's" '
    [ "$(echo "$pows" | wc -l)" -eq 2 ]
    "$PY" -c "
import sys, numpy as np
np.save(\"h.npy\", np.array([int(v) for v in sys.argv[1].split()], dtype=np.uint16).view(np.float16))
z = np.array([0.0, -0.0] * 10, dtype=np.float32)
np.save(\"z.npy\", z)
np.save(\"ones.npy\", np.ones(20, dtype=np.float32))
" "$(echo "$pows" | sed -n 1p)"
    run run tdiff nan_op2 z.npy h.npy 22 -o p1.npy
    expect_status 0
    run run tdiff nan_op2 ones.npy h.npy 4 -o p2.npy
    expect_status 0
    got=$("$PY" -c "
import numpy as np
print(\" | \".join(\" \".join(str(v) for v in np.load(f).view(np.uint32).tolist()) for f in (\"p1.npy\", \"p2.npy\")))
")
    want=$(echo "$pows" | sed -n 2p)
    [ "$got" = "$want" ] || { echo "torch    $want"; echo "neuronop $got"; exit 1; }'


why=$(torch_says '
import torch
i = torch.arange(3, dtype=torch.int32)
try:
    torch.add(i, i, alpha=0.5, out=torch.empty(3, dtype=torch.int32))
except RuntimeError as e:
    print(str(e).split("\n")[0].rstrip("."))
')
test_expect "a refusal names the C call with its arguments, and gives the reason torch gives" '
    [ -n "$why" ]
    run run tdiff add_alpha arange:3:i32 arange:3:i32 0.5 -o r.npy
    expect_status 1
    expect_err "neuronop: add_alpha: core 0: error: nt_add_out(int32 tensor, int32 tensor, int32 tensor, 0.5): $why"
    [ ! -e r.npy ]'

# nt_add_s_out is C++'s add_out(out, self, Scalar), which ATen 1.13 makes of the functional
# op and a copy into out: a float result into an int32 out is truncated, not refused (as
# torch.ops.aten.add.Scalar_out does; Python'"'"'s torch.add(..., out=) takes the Tensor form)
sout=$(torch_says '
import torch
o = torch.empty(3, dtype=torch.int32)
torch.ops.aten.add.Scalar_out(torch.tensor([-4, 0, 5], dtype=torch.int32), 2.5, out=o)
print(" ".join(str(v) for v in o.tolist()))
')
test_expect "a Scalar out form casts its result into an out of another dtype, as aten::add.Scalar_out" '
    [ "$sout" = "-1 2 7" ]
    "$PY" -c "import numpy as np; np.save(\"x.npy\", np.array([-4, 0, 5], dtype=np.int32))"
    run run tdiff add_scalar x.npy 2.5
    expect_status 0
    expect_out "values: $sout"'

test_done
