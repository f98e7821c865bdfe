#!/bin/sh
# `neuronop python --memcheck`: ops run their libraries' memcheck builds, so a kernel's own
# bad pointer is reported as `neuronop run --memcheck` reports it (the same words), and a
# library that has no memcheck build is refused with what to do.  The tutorials' flow too:
# build.py builds the plain library, and model.py's MLP under --memcheck trains with the
# memcheck one, its loss torch.relu's at every step.
. ./lib.sh
py() { printf '%s\n' "$@" >"$WORK/s.py"; }

# the memcheck fixture's kernels that copy their input through a TCM buffer and a local
# array, touching `extra` elements past its end: in plain/ built as usual, in both/ with its
# memcheck build beside
cp -R "$NEURONOP_SRC/tests/fixtures/memcheck" "$WORK/plain"
printf '%s\n' 'name: mc' 'compute_srcs: [k.c]' 'shape_srcs: [s.c]' 'ops:' \
    '  tcm: {args: [tensor, int64], shape: same_i, kernel: tcm}' \
    '  local: {args: [tensor, int64], shape: same_i, kernel: local}' >"$WORK/plain/py.yaml"
cp -R "$WORK/plain" "$WORK/both"
"$NEURONOP" build "$WORK/plain/py.yaml" >/dev/null
"$NEURONOP" build "$WORK/both/py.yaml" >/dev/null
"$NEURONOP" build --memcheck "$WORK/both/py.yaml" >/dev/null
# loads each library given, then calls mc.OP on ones(10) and prints what happened, the
# class when it raised
py "import sys, torch, neuronop" "from neuronop import custom_op" \
   "for path in sys.argv[1:]:" \
   "    try:" \
   "        lib = custom_op.load_library(path)" \
   "    except neuronop.Error as e:" \
   "        print('load raised %s' % type(e).__name__); print(e)" \
   "    else:" \
   "        print('loaded ' + lib.path.split('/')[-1])" \
   "x = torch.ones(10)" \
   "for op, extra in [('tcm', 0), ('local', 0), ('tcm', 1), ('tcm', 0)]:" \
   "    try:" \
   "        y = getattr(torch.ops.mc, op)(x, extra)" \
   "    except neuronop.Error as e:" \
   "        print('%s %d raised %s' % (op, extra, type(e).__name__)); print(e)" \
   "    else:" \
   "        print('%s %d gives the input: %s' % (op, extra, torch.equal(y, x)))"
# one Python under --memcheck for the three tests below (importing torch takes a second)
(cd "$WORK" && alone=0 && { run_alone python --memcheck s.py plain/build/libmc.so \
    both/build/libmc.so || alone=1; } && cp out memcheck.out &&
    echo "$status $alone" >memcheck.status)

test_expect "a library without a memcheck build is refused, saying what to do" '
    cp memcheck.out out
    test "$(cat memcheck.status)" = "0 0"   # its exit status, and nothing left behind
    expect_out "load raised InputError"
    expect_out "neuronop: error: '\''$WORK/plain/build/libmc.so'\'' was built without --memcheck"
    expect_out "load the library with custom_op.load, or build it with '\''neuronop build --memcheck'\''"'

# the device would not notice the store past the buffer; the pool's fill pattern does, at
# the buffer's tcm_free (neuronop-api(3), TCM buffers), and the next call works
test_expect "without --memcheck a store past a TCM buffer raises DeviceError, without its line" '
    run_alone python s.py both/build/libmc.so
    expect_status 0
    expect_out "loaded libmc.so"
    expect_out "tcm 1 raised DeviceError"
    expect_out "a store past the end of this 40-byte TCM buffer changed byte 42 of it"
    expect_out "tcm 0 gives the input: True"'

test_expect "under --memcheck load_library takes the memcheck build beside the library" '
    cp memcheck.out out
    expect_out "loaded libmc.memcheck.so"
    expect_out "tcm 0 gives the input: True"
    expect_out "local 0 gives the input: True"'

test_expect "... and its bad access raises DeviceError with the words of neuronop run --memcheck" '
    status=0
    "$NEURONOP" run --memcheck both/build/libmc.memcheck.so tcm ones:10 1 >/dev/null 2>cli ||
        status=$?
    test "$status" = 1
    grep -q "(memcheck)" cli
    grep -v -e "^neuronop: device checks:" -e "^==[0-9]*==" cli >want   # ==: ASan warnings
    sed -n "/^tcm 1 raised DeviceError\$/,/^tcm 0 gives/p" memcheck.out | sed "1d;\$d" >got
    diff want got
    tail -n 1 memcheck.out | grep -qx "tcm 0 gives the input: True"'

# the tutorials' flow on the example: the g++ builds are kept in out/, keyed by the sources
src=$EXAMPLES/mlp_python
key=$(cat "$src"/*.cpp "$src"/*.py | cksum | tr ' ' -)
mlp=$NEURONOP_SRC/out/python-tests/mlp-memcheck-$key
mkdir -p "$mlp"
for f in build.py my_ops.py model.py relu.cpp shape.cpp; do
    cmp -s "$src/$f" "$mlp/$f" || cp "$src/$f" "$mlp/$f"
done
test_expect "build.py, then model.py under --memcheck: the memcheck relu gives torch.relu's loss" '
    cd "$mlp"
    run_alone python build.py
    expect_status 0
    printf "%s\n" "import torch, model" "mine, _ = model.train(3)" \
        "theirs, _ = model.train(3, torch.relu)" "print(mine == theirs, len(mine))" >same.py
    run_alone python --memcheck --stats same.py
    expect_status 0
    expect_out "True 3"
    expect_err "my_ops::relu_forward"
    # it exited 0, so it loaded the memcheck build: the supervisor refuses a plain one
    test -f librelu.memcheck.so'

test_done
