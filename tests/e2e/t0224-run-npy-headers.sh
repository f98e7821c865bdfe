#!/bin/sh
# .npy headers are read as numpy reads them: each header below is given to numpy.load (the
# oracle, by Debian's python3) and to neuronop run, which must accept what numpy accepts, with
# the same dtype, shape and values, and refuse what it refuses.  numpy's rule (np.lib.format):
# the header is a Python dict literal with exactly the keys 'descr', 'fortran_order' and
# 'shape'; shape a tuple of ints, fortran_order a bool, descr a dtype.  Where neuronop refuses
# what numpy accepts (a key given twice, what the device cannot hold), the test says so.
. ./lib.sh
npy() { perl "$NEURONOP_SRC/tests/e2e/npy.pl" "$@"; }
cp -R "$NEURONOP_SRC/tests/fixtures/copy" "$WORK/copy"
"$NEURONOP" build copy >/dev/null 2>&1

# VERSION|HEADER|DATA: DATA is the float32 values 1 2 3 4 (16 bytes) unless it says otherwise;
# \n in HEADER is a line end.
cat >"$WORK/cases" <<'EOF'
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4), }|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': 4, }|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': [4], }|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': ((4,)), }|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4.0,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': ('4',)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (None,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (True, 4)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': ()}|1
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (0x4,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (0b1_00,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (04,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4_,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (+4,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4L,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4 L L,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4LL,)}|
3.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4L,)}|
3.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}|
2.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}|
1.1|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}|
1.0|{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}|
1.0|{'descr': '<f4', 'fortran_order': 'False', 'shape': (4,)}|
1.0|{'descr': '<f4', 'fortran_order': None, 'shape': (4,)}|
1.0|{'descr': b'<f4', 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr': None, 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 1: 2}|
1.0|{'descr': '<f4', 'fortran_order': False}|
1.0|{'descr': '<f4', 'shape': (4,)}|
1.0|{}|
1.0|[('descr', '<f4'), ('fortran_order', False), ('shape', (4,))]|
1.0||
1.0|{"descr": "<f4", "fortran_order": False, "shape": (4,)}|
1.0|{'descr':'<f4','fortran_order':False,'shape':(4,)}|
1.0| \n{'descr': '<f4',\n 'fortran_order': False, # a comment\n 'shape': (4,)} # another|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}\\\n|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}}|
1.0|{'descr': '<f4, 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr' '<f4', 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr': '<f4'; 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr': '<f4', 'fortran_order': False, 'shape': (4,)}\0|
1.0|{'descr': '<f4', 'fortran_order': Falsey, 'shape': (4,)}|
1.0|{'descr': 'f4', 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr': '=f4', 'fortran_order': False, 'shape': (4,)}|
1.0|{'descr': 'float32', 'fortran_order': False, 'shape': (4,)}|
EOF

# numpy's verdict on each: "ok" with the array saved again by numpy.save, or "refused"
/usr/bin/python3 - "$WORK" <<'EOF'
import io, struct, sys
import numpy as np
work = sys.argv[1]
for i, line in enumerate(open(work + '/cases').read().splitlines()):
    ver, hdr, data = line.split('|')
    major, minor = (int(x) for x in ver.split('.'))
    hdr = hdr.replace('\\n', '\n').replace('\\0', '\0').encode('latin1' if major < 3 else 'utf8')
    pre = 10 if major == 1 else 12
    hdr += b' ' * (-(pre + len(hdr) + 1) % 64) + b'\n'
    hlen = struct.pack('<H' if major == 1 else '<I', len(hdr))
    values = [float(v) for v in data.split()] if data else [1, 2, 3, 4]
    raw = b'\x93NUMPY' + bytes([major, minor]) + hlen + hdr + np.array(values, '<f4').tobytes()
    open('%s/in%d.npy' % (work, i), 'wb').write(raw)
    try:
        a = np.load(io.BytesIO(raw))
        np.save('%s/want%d.npy' % (work, i), a.copy(order='C'))
        verdict = 'ok'
    except Exception:
        verdict = 'refused'
    open('%s/numpy%d' % (work, i), 'w').write(verdict)
EOF

i=0
while IFS= read -r case; do
    # shown as written: echo (in test_expect) would read \n as a line end
    test_expect "numpy and neuronop agree on $(printf '%s' "$case" | sed 's/\\/\\\\/g')" '
        want=$(cat numpy'$i')
        run run copy copy in'$i'.npy -o out'$i'.npy
        if [ "$want" = ok ]; then
            expect_status 0
            test "$(npy read out'$i'.npy)" = "$(npy read want'$i'.npy)"
        else
            expect_status 2
            expect_err "neuronop: error: '\''in'$i'.npy'\'' is not a valid .npy file: "
        fi'
    i=$((i + 1))
done <"$WORK/cases"

# Where neuronop refuses what numpy reads, it says why.
test_expect "a key given twice is refused, though numpy would take the last" '
    npy header d.npy "{'\''descr'\'': '\''<f4'\'', '\''descr'\'': '\''<i4'\'', '\''fortran_order'\'': False, '\''shape'\'': (0,)}"
    /usr/bin/python3 -c "import numpy; assert numpy.load(\"d.npy\").dtype == numpy.int32"
    run run copy copy d.npy
    expect_status 2
    expect_err "neuronop: error: '\''d.npy'\'' is not a valid .npy file: its header gives '\''descr'\'' twice"
    expect_err "numpy would take the last silently; neuronop refuses: give each key once"'

test_expect "a structured dtype is named as one, with the dtypes the device has" '
    npy header s.npy "{'\''descr'\'': [('\''a'\'', '\''<f4'\'')], '\''fortran_order'\'': False, '\''shape'\'': (0,)}"
    /usr/bin/python3 -c "import numpy; assert numpy.load(\"s.npy\").dtype.names == (\"a\",)"
    run run copy copy s.npy
    expect_status 2
    expect_err "neuronop: error: '\''s.npy'\'' has a structured dtype (fields [('\''a'\'', '\''<f4'\'')]), which the device does not have"
    expect_err "device dtypes: float32, bfloat16, float16, int32, int8, int64, int16, uint8 (little-endian); save each field as an array of its own"'

test_expect "(4) is refused as the number it is, with the tuple to write" '
    npy header n.npy "{'\''descr'\'': '\''<f4'\'', '\''fortran_order'\'': False, '\''shape'\'': (4), }"
    run run copy copy n.npy
    expect_status 2
    expect_err "its '\''shape'\'' is (4), not a tuple of sizes like (4,) or (2, 3) (in Python, (4) is the number 4; (4,) is a tuple)"'

# Before: a 9-D file was "not a valid .npy file", while a 5-D one too large for the device
# had the device's limit.  numpy reads both.
test_expect "a well-formed .npy of 9 dimensions gets the device's limit of 8" '
    npy header nine.npy "{'\''descr'\'': '\''<f4'\'', '\''fortran_order'\'': False, '\''shape'\'': (1, 1, 1, 1, 1, 1, 1, 1, 0), }"
    /usr/bin/python3 -c "import numpy; assert numpy.load(\"nine.npy\").ndim == 9"
    run run copy copy nine.npy
    expect_status 2
    expect_err "neuronop: error: '\''nine.npy'\'' has a shape the device cannot hold: 9 dimensions; the device allows at most 8"'

# np.load reads a header of up to 10000 bytes (its max_header_size) and refuses a longer
# one; numpy.save never writes one.  Before, neuronop read any length.
test_expect "a header of 10000 bytes is read, and a longer one refused, as numpy does" '
    /usr/bin/python3 - <<\PYEOF
import numpy as np
def write(name, hlen):
    h = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (4,), }"
    h = (h + " " * (hlen - 1 - len(h)) + "\n").encode()
    open(name, "wb").write(b"\x93NUMPY\x02\x00" + len(h).to_bytes(4, "little") + h +
                           np.arange(4, dtype="<f4").tobytes())
write("at.npy", 10000)
write("past.npy", 10001)
assert list(np.load("at.npy")) == [0, 1, 2, 3]
try:
    np.load("past.npy")
    raise SystemExit("numpy read past.npy")
except ValueError:
    pass
PYEOF
    run run copy copy at.npy -o out.npy
    expect_status 0
    test "$(npy read out.npy | tr "\n" " ")" = "<f4 4 0 1 2 3 "
    run run copy copy past.npy
    expect_status 2
    expect_err "neuronop: error: '\''past.npy'\'' is not a valid .npy file: its header is 10001 bytes, and numpy reads at most 10000"
    expect_err "np.load refuses it too unless told to trust the file; save the array again with numpy.save"'

test_expect "a .npy of 8 dimensions is read" '
    npy write eight.npy "<f4" 1x1x1x1x1x1x2x2 1 2 3 4
    run run copy copy eight.npy -o out.npy
    expect_status 0
    test "$(npy read out.npy | tr "\n" " ")" = "<f4 1x1x1x1x1x1x2x2 1 2 3 4 "'

test_done
