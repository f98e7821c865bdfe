#!/bin/sh
# File names and text that a library's sources choose reach neuronop itself (red team, stop
# 40): a #line, or a C++ registration made by hand, names the file a message is located in,
# which neuronop opened and read line by line to find the source line; /dev/zero has no
# line end, and neuronop spun forever after the compile, past every compile limit
# (DESIGN.md: no user code can hang it).  And the names and words a build prints are plain
# text (neuronop-run(1) TRUST): an escape sequence in a source's name, a #warning or a
# library's namespace reached the terminal raw, as did an expect file's name in a FAIL line,
# which could then read as a pass.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold
esc=$(printf '\033')

# raw_escape FILE...: an escape character reached FILE
no_escape() {
    if grep -q "$esc" "$@"; then
        echo "an escape character reached the output:"; cat -v "$@"; return 1
    fi
}

# cc_lib DIR SOURCE-TEXT: a one-op library of the system C compiler with k.c as given
cc_lib() {
    mkdir -p "$1"
    cp "$EXAMPLES/relu/shape.c" "$1/"
    printf '%s\n' "$2" >"$1/k.c"
    cat >"$1/neuronop.yaml" <<'EOF'
name: r
compiler: cc
compute_srcs: [k.c]
shape_srcs: [shape.c]
ops:
  relu_forward: {args: [tensor], shape: relu_fwd_shape, kernel: relu_forward}
EOF
}

# reg_lib DIR FILE LINE NAMESPACE KERNEL: relu_cxx whose registration, written by hand, says
# its def is at FILE:LINE, in NAMESPACE, and names KERNEL
reg_lib() {
    mkdir -p "$1"
    cp "$EXAMPLES/relu_cxx/relu.cpp" "$1/"
    printf 'name: relu_cxx\ncompute_srcs: [relu.cpp]\nshape_srcs: [shape.cpp]\n' \
        >"$1/neuronop.yaml"
    cat >"$1/shape.cpp" <<EOF
#include <torch/torch.h>
#include <torchneuron/register.h>
torch::Tensor relu_fwd_shape(const torch::Tensor &t) { return torch::zeros(t.sizes(), torch::kFloat); }
extern "C" void nt__neuron_library(nt__registrar *r) {
    r->library(r, "$4", "shape.cpp", 4);
    nt__reg_def d = {};
    d.op = "relu_forward";
    d.kernel = "$5";
    d.shape = reinterpret_cast<const void *>(&relu_fwd_shape);
    d.nargs = 1;
    d.byref[0] = 1;
    d.file = "$2";
    d.line = $3;
    r->def(r, &d);
}
EOF
}

test_expect "a compile error placed in /dev/zero by #line ends (cc)" '
    cc_lib zero "$(printf "#line 2 \"/dev/zero\"\nint x = ;")"
    timeout 20 "$NEURONOP" build zero >out 2>err && exit 1
    status=$?
    test $status = 3
    grep -q "/dev/zero" err'

test_expect "a compile error placed in /dev/zero by #line ends (g++)" '
    copy_example relu_cxx zcxx
    printf "#line 2 \"/dev/zero\"\nint x = ;\n" >>zcxx/relu.cpp
    timeout 20 "$NEURONOP" build zcxx >out 2>err && exit 1
    status=$?
    test $status = 3'

test_expect "a hand-made registration that places its def in /dev/zero ends" '
    reg_lib regzero /dev/zero 2 ops "not a name"
    timeout 20 "$NEURONOP" build regzero >out 2>err && exit 1
    status=$?
    test $status = 3
    grep -q "names kernel .not a name., which is not a function name" err'

test_expect "a FIFO named as the file of a def is not opened" '
    mkfifo "$WORK/fifo"
    reg_lib regfifo "$WORK/fifo" 1 ops "not a name"
    timeout 20 "$NEURONOP" build regfifo >out 2>err && exit 1
    status=$?
    test $status = 3'

test_expect "a namespace that is not an identifier is refused, where it is registered" '
    reg_lib ns shape.cpp 1 "ops\\033[8m" relu_forward
    run build ns
    expect_status 3
    expect_err "shape.cpp:4: error: the library'"'"'s namespace '"'"'ops?[8m'"'"' is not an identifier"
    no_escape out err'

test_expect "an escape sequence in a source name and a #warning shows as ?" '
    copy_example relu wr
    printf "#warning hidden${esc}[8m text\n" >>"wr/relu.c"
    mv wr/relu.c "wr/k${esc}[8m.c"
    sed -i "s/compute_srcs: \[relu.c\]/compute_srcs: [\"k\\\\e[8m.c\"]/" wr/neuronop.yaml
    run build wr
    expect_status 0
    expect_err "k?[8m.c:"
    expect_err "hidden?[8m text"
    no_escape out err'

test_expect "an escape sequence in a g++ #error shows as ?" '
    copy_example relu_cxx wx
    printf "#error hidden${esc}[8m text\n" >>wx/relu.cpp
    run build wx
    expect_status 3
    expect_err "hidden?[8m text"
    no_escape out err'

# a review's find: without Landlock, the check of a compile's dependency list named the
# file outside as it found it
test_expect "without Landlock, a file outside named with an escape sequence shows it as ?" '
    mkdir -p "$WORK/out${esc}[8mside"
    echo "int hidden;" >"$WORK/out${esc}[8mside/h.h"
    cc_lib deps "$(printf "#include \"%s\"\n" "$WORK/out${esc}[8mside/h.h")"
    NEURONOP_LANDLOCK=off run build deps
    expect_status 3
    expect_err "out?[8mside/h.h'"'"' is outside the library folder"
    no_escape out err'

test_expect "an expect file named with escape sequences: the FAIL line shows them as ?" '
    copy_example relu ex
    cp ex/tests/relu_backward.npy "ex/tests/x${esc}[8m.npy"
    cat >>ex/neuronop.yaml <<EOF
  - name: named
    op: relu_forward
    args: [tests/x.npy]
    expect: "tests/x\\e[8m.npy"
EOF
    run test ex -k named --junit report.xml
    expect_status 1
    expect_out "FAIL  named: the output differs from '"'"'ex/tests/x?[8m.npy'"'"'"
    no_escape out err report.xml'

test_done
