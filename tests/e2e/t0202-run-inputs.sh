#!/bin/sh
# neuronop run's inputs: op names, argument counts and types, generators, .npy files of every
# dtype and every way of being broken, -o, --expect, schedules and device profiles.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
cp -R "$NEURONOP_SRC/tests/fixtures/copy" "$WORK/copy"
copy_example relu_tcm "$WORK/relu"
copy_example softclip "$WORK/softclip"
"$NEURONOP" build copy >/dev/null 2>&1
"$NEURONOP" build relu >/dev/null 2>&1

test_expect "a misspelt op gets a suggestion and the library's ops" '
    run run relu relu_froward zeros:4
    expect_status 2
    expect_err "neuronop: error: no op '\''relu_froward'\'' in library '\''relu_tcm'\''; did you mean '\''relu_forward'\''?"
    expect_err "its ops: relu_forward(tensor)"'

test_expect "the wrong number of arguments shows the signature" '
    run run softclip softclip zeros:4 5
    expect_status 2
    expect_err "neuronop: error: op '\''softclip'\'' takes 3 arguments, 2 given"
    expect_err "signature: softclip(tensor, double, scalar)"'

# Before: "cannot read .npy file '3'", which did not say a tensor was wanted.
test_expect "a number where a tensor goes says which argument and what to write" '
    run run softclip softclip 3 1 2
    expect_status 2
    expect_err "neuronop: error: argument 1 of op '\''softclip'\'' is a tensor: '\''3'\'' is a number, not a generator or a .npy file"
    expect_err "for a tensor of 3s write full:SHAPE:3 (full:4:3), or give a .npy file"'

# Before: "cannot read .npy file '32x4096'"
test_expect "a shape where a tensor goes is told the generator to write" '
    run run relu relu_forward 32x4096
    expect_status 2
    expect_err "neuronop: error: argument 1 of op '\''relu_forward'\'' is a tensor: '\''32x4096'\'' is a shape, not a generator or a .npy file"
    expect_err "for a tensor of that shape write a generator with it: randn:32x4096, zeros:32x4096, ..."'

test_expect "a number argument that is not a number" '
    run run softclip softclip zeros:4 five 1
    expect_status 2
    expect_err "argument 2 of op '\''softclip'\'' is a double: '\''five'\'' is not a number"'

test_expect "a scalar takes integers and reals" '
    run run softclip softclip ones:2 5 2
    expect_status 0
    run run softclip softclip ones:2 5 0.25
    expect_status 0'

# A number is read as Python's int() and float() read it, as a caller of the op in torch
# writes it: 010 was C's octal 8, 1e-310 (subnormal) and 1e400 (inf) "not a number", and a
# whole number past int64 became a double Scalar (a C++ idioms tester's finds)
softclip_10=$(torch_says "import torch; print('%g' % float(torch.clamp(torch.exp(torch.ones(1)), 0, 10) + int('010') * torch.ones(1)))")
test_expect "numbers are decimal, as Python reads them: 010 is ten" '
    run run softclip softclip ones:1 10 010
    expect_status 0
    expect_out "min $softclip_10  max $softclip_10"
    run run softclip softclip ones:1 1e-310 2
    expect_status 0
    run run softclip softclip ones:1 1e400 2
    expect_status 0
    run run softclip softclip ones:1 10 0x10
    expect_status 2
    expect_err "argument 3 of op '\''softclip'\'' is a scalar: '\''0x10'\'' is not a number"
    run run softclip softclip ones:1 10 9223372036854775808
    expect_status 2
    expect_err "argument 3 of op '\''softclip'\'' is a scalar: '\''9223372036854775808'\'' is a whole number outside int64"'

# True and False are a bool Scalar, which c10 keeps apart from 1 and 0: torch.add with a
# bool alpha is refused, in torch's words
alpha_true=$(torch_says "import torch
try:
    torch.add(torch.ones(2), torch.ones(2), alpha=True)
except RuntimeError as e:
    print(str(e).splitlines()[0].rstrip('.'))")
test_expect "a scalar takes True and False as a bool, as torch does" '
    run run softclip softclip ones:2 10 True
    expect_status 1
    expect_err "$alpha_true"
    run run softclip softclip ones:2 10 1
    expect_status 0
    run run softclip softclip ones:2 True 1
    expect_status 2
    expect_err "argument 2 of op '\''softclip'\'' is a double: '\''True'\'' is not a number"'

test_expect "generators: every kind, with dtypes" '
    for g in randn:3x4 rand:2x2:f32 zeros:5:i32 ones:2x2x2:bf16 full:3:2.5:f16 arange:10:i64 \
             arange:4:u8 ones:3:i8 zeros:2:i16; do
        run run copy copy $g
        expect_status 0
    done
    run run copy copy full:3:2.5:f16
    expect_out "output: 3 float16  min 2.5  max 2.5"'

# Before, randn:5:u8 truncated to 0 0 0 0 255 and rand:5:i32 to zeros; torch refuses both.
randoms=$(torch_says "
import torch
types = dict(f32=torch.float32, f16=torch.float16, bf16=torch.bfloat16, i64=torch.int64,
             i32=torch.int32, i16=torch.int16, i8=torch.int8, u8=torch.uint8)
for kind in ('randn', 'rand'):
    for name, d in types.items():
        try:
            getattr(torch, kind)(3, dtype=d)
            print(kind, name, 0)
        except RuntimeError:
            print(kind, name, 2)
")
test_expect "randn and rand make the dtypes torch.randn and torch.rand make, and refuse the rest" '
    test "$(echo "$randoms" | wc -l)" = 16
    echo "$randoms" | while read -r kind d want; do
        run run copy copy "$kind:3:$d"
        [ "$status" = "$want" ] || { echo "$kind:3:$d: exit $status, torch says $want"; exit 1; }
    done
    run run copy copy randn:5:u8
    expect_err "bad tensor generator '\''randn:5:u8'\'': randn makes floating-point numbers, not uint8 (torch.randn refuses it too); give a float dtype, or make integers with arange or full"'

# Before, an output of infinities summed up as "min 0  max 0  mean 0".
test_expect "an output with no finite element has no min, max or mean" '
    run run copy copy full:3:inf
    expect_status 0
    expect_out "output: 3 float32  min nan  max nan  mean nan  (3 not finite)"
    run run copy copy zeros:0 --json
    expect_out "\"min\": null, \"max\": null, \"mean\": null, \"nonfinite\": 0"
    run run copy copy zeros:0   # (a new user read "min nan  max nan  mean nan" of an empty one)
    expect_status 0
    expect_out "output: 0 float32  (no elements)"'

# Before, full wrapped values outside the dtype silently (300 as int8 was 44).  Each verdict
# and value is torch.full's: an error, or the value the tensor holds.
fulls="300:i8 -1:u8 -255:u8 -256:u8 -1.0:u8 255:u8 1e10:i32 inf:u8 2.5:i32 -2.5:i32 nan:i32 \
1e39:f32 70000:f16 65504:f16 inf:f32 1e39:bf16 -129:i8 127.9:i8 32768:i16 -9e18:i64 \
9007199254740993:i64 9200000000000000001:i64 -9223372036854775808:i64 \
9223372036854775808:i64 -9223372036854775809:i64 99999999999999999999:f32"
torch_says "
import re, torch
types = dict(i8=torch.int8, u8=torch.uint8, i16=torch.int16, i32=torch.int32,
             i64=torch.int64, f16=torch.float16, bf16=torch.bfloat16, f32=torch.float32)
for f in '$fulls'.split():
    text, d = f.split(':')
    v = int(text) if re.fullmatch(r'[+-]?[0-9]+', text) else float(text)
    try:
        print(f, repr(torch.full((1,), v, dtype=types[d])[0].item()))
    except RuntimeError:
        print(f, 'refused')
" >"$WORK/fulls"
# the value of an integer dtype is compared as printed, every digit; a floating one as a number
test_expect "full refuses the values torch.full refuses, and holds what it holds" '
    test "$(wc -l <"$WORK/fulls")" = 26
    while read -r f want; do
        run run copy copy "full:1:${f%%:*}:${f#*:}" -o v.npy
        if [ "$want" = refused ]; then
            expect_status 2
            expect_err "cannot be"
            continue
        fi
        expect_status 0
        case $want in
        *[!0-9-]*)
            got=$(npy read v.npy | tail -1)
            [ "$(perl -e "print $got == $want || (\"$got\" eq \"Inf\" && \"$want\" eq \"inf\") ? 1 : 0")" = 1 ] ||
                { echo "$f: holds $got, torch $want"; exit 1; } ;;
        *) expect_out "values: $want" ;;
        esac
    done <"$WORK/fulls"'

test_expect "integer outputs print every digit" '
    run run copy copy full:3:1410065408:i32
    expect_out "output: 3 int32  min 1410065408  max 1410065408  mean 1.41007e+09"
    expect_out "values: 1410065408 1410065408 1410065408"'

test_expect "the same seed gives the same tensor; another seed another" '
    run run copy copy randn:8 --seed 5 -o a.npy
    run run copy copy randn:8 --seed 5 -o b.npy
    run run copy copy randn:8 --seed 6 -o c.npy
    cmp a.npy b.npy
    ! cmp -s a.npy c.npy'

for bad in "randn:|a shape is sizes joined by x" "randn:3y4|a shape is sizes joined by x" \
           "randn:4x|a shape is sizes joined by x" "randn:4xx4|a shape is sizes joined by x" \
           "zeros:4:f64|unknown dtype 'f64'; the device's are float32, bfloat16, float16, int32, int8, int64, int16 or uint8" "full:4|full needs a shape and a value" \
           "full:4:abc|the value of full is not a number" "arange:2x2|arange takes a count"; do
    spec=${bad%%|*}
    msg=${bad#*|}
    test_expect "bad generator $spec" '
        run run copy copy "'"$spec"'"
        expect_status 2
        expect_err "neuronop: error: bad tensor generator '\'''"$spec"''\'': '"$msg"'"'
done

# Within the device's limits but past the machine's memory (here 40 GB against a 4 GB limit
# on address space; not under AddressSanitizer, whose shadow memory needs far more): before,
# "tensor ... is too large" said neither how large nor what to do.
if [ -z "${NEURONOP_SANITIZED:-}" ]; then
    test_expect "a generated tensor larger than memory is refused with its size" '
        ulimit -v 4194304
        run run copy copy randn:100000x100000
        expect_status 2
        expect_err "neuronop: error: tensor '\''randn:100000x100000'\'' is too large: 40.0 GB, more than this machine can give it"
        expect_err "give a smaller shape"'
else
    test_count=$((test_count + 1))
    echo "ok $test_count # skip a tensor larger than memory: AddressSanitizer needs the address space"
fi

test_expect "a generated tensor over the device limits is refused" '
    run run copy copy zeros:1x1x1x1x1x1x1x1x1
    expect_status 2
    expect_err "neuronop: error: tensor '\''zeros:1x1x1x1x1x1x1x1x1'\'' is over the device'\''s limits: 9 dimensions; the device allows at most 8"
    run run copy copy zeros:70000x1x1x1x1
    expect_status 2
    expect_err "over the device'\''s limits: a dimension over 65535 in a 5-D tensor"'

for d in "<f4" "<f2" "<V2" "<i4" "|i1" "<i8" "<i2" "|u1"; do
    test_expect ".npy of dtype $d goes through a kernel and back unchanged" '
        npy write in.npy "'"$d"'" 2x3 1 2 3 4 5 6
        run run copy copy in.npy -o out.npy
        expect_status 0
        test "$(npy read out.npy | tr "\n" " ")" = "'"$d"' 2x3 1 2 3 4 5 6 "'
done

test_expect "a Fortran-order .npy is read in its logical order" '
    npy write-fortran f.npy "<f4" 2x3 1 2 3 4 5 6
    run run copy copy f.npy -o out.npy
    expect_status 0
    test "$(npy read out.npy | tr "\n" " ")" = "<f4 2x3 1 2 3 4 5 6 "'

test_expect "a missing .npy file" '
    run run copy copy nothing.npy
    expect_status 2
    expect_err "neuronop: error: cannot read .npy file '\''nothing.npy'\'': No such file or directory"'

test_expect "a file that is not .npy" '
    echo hello >x.npy
    run run copy copy x.npy
    expect_status 2
    expect_err "'\''x.npy'\'' is not a valid .npy file: it does not start with the .npy magic"'

test_expect "a truncated .npy" '
    npy write t.npy "<f4" 4 1 2 3 4
    head -c $(($(wc -c <t.npy) - 10)) t.npy >short.npy
    run run copy copy short.npy
    expect_status 2
    expect_err "its shape needs 16 bytes of data, the file has 6 (truncated)"'

test_expect "an oversized .npy" '
    npy write t.npy "<f4" 4 1 2 3 4
    cp t.npy long.npy
    printf xxxx >>long.npy
    run run copy copy long.npy
    expect_status 2
    expect_err "its shape needs 16 bytes of data, the file has 20 (extra bytes at the end)"'

test_expect "a .npy of a dtype the device lacks" '
    npy header d.npy "{'\''descr'\'': '\''<f8'\'', '\''fortran_order'\'': False, '\''shape'\'': (0,), }"
    run run copy copy d.npy
    expect_status 2
    expect_err "'\''d.npy'\'' has dtype '\''<f8'\'', which the device does not have"'

test_expect "a .npy header without a shape" '
    npy header h.npy "{'\''descr'\'': '\''<f4'\'', '\''fortran_order'\'': False, }"
    run run copy copy h.npy
    expect_status 2
    expect_err "'\''h.npy'\'' is not a valid .npy file: its header lacks '\''shape'\''"'

# Before, these were found only after the op had run, however long it took.
test_expect "-o into a folder that does not exist, or naming a folder, is refused before the op runs" '
    run run copy copy zeros:3 -o no/such/dir/out.npy
    expect_status 2
    expect_err "neuronop: error: cannot write '\''no/such/dir/out.npy'\'': No such file or directory"
    if grep -q "device checks" err; then exit 1; fi
    mkdir adir
    run run copy copy zeros:3 -o adir/
    expect_status 2
    expect_err "neuronop: error: cannot write '\''adir/'\'': it is a folder; name a .npy file"
    run run copy copy zeros:3 -o adir
    expect_err "neuronop: error: cannot write '\''adir'\'': it is a folder; name a .npy file"
    run run copy copy zeros:3 -o new/
    expect_err "neuronop: error: cannot write '\''new/'\'': a file name cannot end in '\''/'\''; name a .npy file"
    ! grep -q "device checks" err'

# Before: an infinite expected element matched any output (its tolerance, rtol * inf, is
# infinite).  Every verdict must be what torch.isclose says, with equal_nan=True.
pairs="3:inf -inf:inf inf:inf -inf:-inf nan:nan nan:1 1:nan inf:nan 1e30:inf 1:1.000001 1:1.1"
torch_says "
import torch
for p in '$pairs'.split():
    g, w = (torch.tensor([float(v)]) for v in p.split(':'))
    print(p, int(torch.isclose(g, w, rtol=1.3e-6, atol=1e-5, equal_nan=True)))
" >"$WORK/isclose"
test_expect "--expect judges infinities and NaN as torch.isclose does" '
    test "$(wc -l <"$WORK/isclose")" = 11
    while read -r pair close; do
        npy write want.npy "<f4" 1 "${pair#*:}"
        run run copy copy "full:1:${pair%%:*}" --expect want.npy
        want_status=$((1 - close))
        [ "$status" = "$want_status" ] || { echo "$pair: exit $status, torch says $close"; exit 1; }
    done <"$WORK/isclose"'

# Before, elements were compared as doubles: int64 2^53+1 matched 2^53 exactly, and float16
# 60000 matched -60000 under rtol=3 although the difference is infinite in float16.
# And the allowed error was not rounded to the dtype: float16's 1.00136e-5 against 0 under
# atol=1e-5 is close for torch (its atol rounds to that very number), and was not here.
closes="i64:9007199254740993:9007199254740992:0:0 i64:9007199254740993:9007199254740992:0:1 \
f16:60000:-60000:3:1e-5 f32:-60000:60000:3:1e-5 bf16:3e38:-3e38:3:1e-5 i32:5:7:0.5:0 \
f16:1.001358e-05:0:1e-3:1e-5 bf16:1.001358e-05:0:1e-3:1e-5 f16:1001:1000:0.000999:0"
torch_says "
import torch
types = dict(i64=torch.int64, i32=torch.int32, f16=torch.float16, f32=torch.float32,
             bf16=torch.bfloat16)
for c in '$closes'.split():
    d, g, w, r, a = c.split(':')
    cast = int if d[0] == 'i' else float
    t = lambda v: torch.tensor([cast(v)], dtype=types[d])
    print(c, int(torch.isclose(t(g), t(w), rtol=float(r), atol=float(a), equal_nan=True)))
" >"$WORK/closes"
test_expect "--expect compares integers exactly and takes the error in the dtype, as torch.isclose" '
    test "$(wc -l <"$WORK/closes")" = 9
    while read -r c close; do
        IFS=: read -r d g w r a <<EOF2
$c
EOF2
        run run copy copy "full:1:$w:$d" -o want.npy
        run run copy copy "full:1:$g:$d" --expect want.npy --rtol "$r" --atol "$a"
        [ "$status" = $((1 - close)) ] || { echo "$c: exit $status, torch says $close"; exit 1; }
    done <"$WORK/closes"'

# Before: an infinite error was printed as inf, which no JSON parser takes (jq does).
test_expect "--json with an infinite error is JSON: max_abs_error is null" '
    npy write want.npy "<f4" 2 1 2
    run run copy copy full:2:inf --expect want.npy --json
    expect_status 1
    python3 -c "import json, sys
def refuse(c): raise ValueError(c)
o = json.load(open(sys.argv[1]), parse_constant=refuse)
assert o[\"max_abs_error\"] is None and o[\"mismatches\"] == 2, o" "$WORK/out"'

# Before: -o renamed a temporary file over any path, so -o /dev/null as root replaced the
# device with a regular file, and a FIFO or symlink became a plain file.
test_expect "-o into a FIFO writes through it and leaves it a FIFO" '
    run run copy copy arange:5 -o want.npy
    mkfifo pipe.npy
    timeout 10 cat pipe.npy >got.npy &
    run run copy copy arange:5 -o pipe.npy
    expect_status 0
    wait
    test -p pipe.npy
    cmp want.npy got.npy
    ! ls pipe.npy.tmp.* 2>/dev/null'

# /dev/stdout is a link to /proc/self/fd/1; the test makes its own such link, so that a
# regression replaces that one and not the machine's.
test_expect "-o /dev/stdout writes the .npy file into the pipe and leaves the link" '
    run run copy copy arange:5 -o want.npy
    ln -s /proc/self/fd/1 stdout
    "$NEURONOP" run copy copy arange:5 -o stdout 2>err | cat >got
    perl -0777 -ne "print substr(\$_, index(\$_, qq(\x93NUMPY)), -s qq(want.npy))" got |
        cmp - want.npy
    test -L stdout'

# A library folder is untrusted (a pull request in CI): a planted out.npy or report.xml
# linked to ~/.bashrc must not get neuronop's output.  A review found the first version of
# the FIFO fix writing through such links.
test_expect "-o through a link to a file replaces the link and leaves the file alone" '
    mkdir elsewhere
    echo keep >elsewhere/target.npy
    ln -s elsewhere/target.npy link.npy
    ln -s elsewhere/absent.npy dangling.npy
    run run copy copy arange:5 -o link.npy
    expect_status 0
    run run copy copy arange:5 -o dangling.npy
    expect_status 0
    test ! -L link.npy
    test ! -L dangling.npy
    test "$(cat elsewhere/target.npy)" = keep
    test ! -e elsewhere/absent.npy
    run run copy copy arange:5 -o direct.npy
    cmp direct.npy link.npy'

# (a red team's find: in a CI job run as root, a planted report.xml linked to /dev/sda would
# have been written over the disk; the node here is a loop device no disk stands behind)
if [ "$(id -u)" = 0 ] && mknod "$WORK/disk" b 7 250 2>/dev/null; then
test_expect "-o through a link to a disk replaces the link; a disk named itself is refused" '
    ln -s disk disklink.npy
    run run copy copy arange:5 -o disklink.npy
    expect_status 0
    test ! -L disklink.npy
    test -b disk
    run run copy copy arange:5 -o disk
    expect_status 2
    expect_err "neuronop: error: cannot write '\''disk'\'': it is a block device (a disk), which neuronop never writes; name a file"'
else
    echo "ok $((test_count + 1)) # skip block devices: not root, or no mknod here"
    test_count=$((test_count + 1))
fi

test_expect "--expect that matches, and one that does not, with the worst elements" '
    npy write want.npy "<f4" 2x2 1 2 3 4
    npy write got.npy "<f4" 2x2 1 2 3.5 4
    run run copy copy want.npy --expect want.npy
    expect_status 0
    expect_out "matches '\''want.npy'\''"
    run run copy copy got.npy --expect want.npy
    expect_status 1
    expect_err "output differs from '\''want.npy'\'': 1 of 4 elements beyond rtol=1.3e-06 atol=1e-05"
    expect_err "  at [1, 0]: got 3.5, expected 3 (error 0.5)"
    run run copy copy got.npy --expect want.npy --atol 0.6
    expect_status 0'

test_expect "--expect with another shape" '
    npy write want.npy "<f4" 4 1 2 3 4
    run run copy copy zeros:2x2 --expect want.npy
    expect_status 1
    expect_err "shape 2x2 differs from the expected 4"'

test_expect "a misspelt schedule" '
    run run copy copy zeros:2 --schedule sequental
    expect_status 2
    expect_err "neuronop run: error: --schedule takes parallel, sequential, reversed or shuffle, not '\''sequental'\''; did you mean '\''sequential'\''?"'

test_expect "an unknown device profile" '
    run run copy copy zeros:2 --device trn9
    expect_status 2
    expect_err "neuronop: error: no device profile '\''trn9'\''"'

test_expect "a broken device profile is reported at its line" '
    sed "s/^cores: 8 /cores: many /" "$NEURONOP_SHARE_DIR/devices/trn1.yaml" >bad.yaml
    run run copy copy zeros:2 --device ./bad.yaml
    expect_status 2
    expect_err "./bad.yaml:6:8: error: '\''cores'\'' must be a whole number, not '\''many'\''"'

# Before, this was reported at stack_max as "outside 500000..", the value given elsewhere.
test_expect "a stack_default above stack_max is reported at stack_default, naming both" '
    sed "s/^stack_default: [0-9]*/stack_default: 500000/" "$NEURONOP_SHARE_DIR/devices/trn1.yaml" >bad.yaml
    run run copy copy zeros:2 --device ./bad.yaml
    expect_status 2
    grep -n "^stack_default" bad.yaml | cut -d: -f1 >line
    expect_err "./bad.yaml:$(cat line):16: error: '\''stack_default'\'' is 500000, more than '\''stack_max'\'' (409600, line "'

test_expect "a cost model with a bad value is reported at its line" '
    sed "s/^  printf_cycles: 2800 /  printf_cycles: -1 /" "$NEURONOP_SHARE_DIR/devices/trn1.yaml" >bad.yaml
    run run copy copy zeros:2 --device ./bad.yaml
    expect_status 2
    expect_err "'\''printf_cycles'\'' is -1, outside 1e-09..1e+12"
    grep -n "printf_cycles" bad.yaml | cut -d: -f1 >line
    expect_err "./bad.yaml:$(cat line):18: error:"'

test_expect "a library path that does not exist" '
    run run nowhere.so op zeros:2
    expect_status 2
    expect_err "cannot read library '\''nowhere.so'\''"'

test_expect "run builds a folder first and stops on a compile error with status 3" '
    echo "broken" >>relu/relu.c
    run run relu relu_forward zeros:2
    expect_status 3
    expect_err "relu/relu.c:"'

test_done
