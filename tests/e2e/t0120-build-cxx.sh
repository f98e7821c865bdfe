#!/bin/sh
# C++ op libraries: built by the system C++ compiler, ops from NEURON_LIBRARY, the namespace
# in inspect and run, incremental builds, the C++ runtime rules, compiler: cc.
# (Each build diagnostic has its golden file in tests/golden/build/cxx-*.)
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

cp -R "$NEURONOP_SRC/tests/fixtures/cxx/ops" "$WORK/ops"
rm -rf "$WORK/ops/build"

test_expect "a manifest of only custom_op.load's arguments builds; the ops come from NEURON_LIBRARY" '
    run build ops
    expect_status 0
    expect_out "my_ops: built ops/build/libmy_ops.so"
    expect_out "namespace: my_ops"
    expect_out "ops: relu_forward(tensor), scale(tensor, double, int64, scalar)"
    expect_out "stack: 8192 bytes (from extra_cflags)"'

test_expect "a second build is up to date" '
    run build ops
    expect_status 0
    expect_out "my_ops: up to date"'

test_expect "changing a C++ source rebuilds" '
    echo "// changed" >> ops/kernels.cpp
    run build ops
    expect_status 0
    expect_out "built"'

test_expect "-v shows the C++ compile with its enforced flags" '
    run build -v --force ops
    expect_status 0
    expect_err "-std=c++14 -pedantic-errors -fno-exceptions -fno-rtti"'

test_expect "inspect shows the namespace and the registered ops" '
    run inspect ops/build/libmy_ops.so
    expect_status 0
    expect_out "\"namespace\": \"my_ops\""
    expect_out "\"name\": \"scale\", \"args\": [\"tensor\", \"double\", \"int64\", \"scalar\"], \"kernel\": \"scale\", \"shape\": \"scale_shape\""'

test_expect "run takes OP and shows it in its namespace" '
    run run ops relu_forward arange:6
    expect_status 0
    expect_out "my_ops::relu_forward: ok"
    expect_out "values: 0 1 2 3 4 5"'

test_expect "run takes my_ops::OP; by-value and const-reference args arrive" '
    run run ops my_ops::scale arange:4 2 3 0.5
    expect_status 0
    expect_out "values: 0 3 6 9"'

test_expect "bench takes my_ops::OP and shows the op in its namespace" '
    run bench ops my_ops::relu_forward randn:64 --iters 3
    expect_status 0
    expect_out "my_ops::relu_forward on trn1:"'

test_expect "neuronop test runs the tests of a registration-only manifest, with a C++ reference" '
    run test ops
    expect_status 0
    expect_out "3 passed, 0 failed"'

# run takes my_ops::relu_forward, and a test may name it so too (a new user's find); another
# namespace's gets a hint.  The compile cache keeps each rebuild to the registration's.
test_expect "a test names its op as run does, my_ops::OP; another namespace is a hint" '
    cp -R ops qual
    sed -i "s/op: relu_forward/op: my_ops::relu_forward/" qual/neuronop.yaml
    grep -q "op: my_ops::relu_forward" qual/neuronop.yaml
    export NEURONOP_CACHE_DIR="$WORK/qual-objs"
    run test qual --json
    expect_status 0
    # the op as the library names it, in every report (a reviewer saw my_ops::my_ops::...)
    jq -e "[.cases[].op] == [\"relu_forward\", \"relu_forward\", \"scale\"] and .passed == 3" \
        "$WORK/out"
    sed -i "s/op: my_ops::relu_forward/op: their_ops::relu_forward/" qual/neuronop.yaml
    run build qual
    expect_status 2
    expect_err "names op '\''their_ops::relu_forward'\'', which NEURON_LIBRARY does not register; did you mean '\''my_ops::relu_forward'\''?"'

test_expect "accessors of a temporary tensor are read-only, as the device'\''s const & forms make them" '
    mkdir tmpacc
    cp ops/shape.cpp tmpacc/
    cat > tmpacc/neuronop.yaml <<YAML
name: my_ops
compute_srcs: [k.cpp]
shape_srcs: [shape.cpp]
YAML
    cat > tmpacc/k.cpp <<CPP
#include <torch/torch.h>
torch::Tensor relu_forward(const torch::Tensor &t)
{
    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(sizeof(float) * 4));
    t.tcm_accessor().tensor_to_tcm<float>(buf, 0, 4);
    get_dst_tensor().tcm_accessor().tcm_to_tensor<float>(buf, 0, 4);
    torch::neuron::tcm_free(buf);
    return get_dst_tensor();
}
torch::Tensor scale(torch::Tensor t, double d, int64_t k, const torch::Scalar &s) { return t; }
CPP
    run build tmpacc
    expect_status 3
    expect_err "tmpacc/k.cpp:6:57: error: tcm_to_tensor on a read-only TCM accessor: it was made from a const tensor (an op'\''s input) or a temporary (as on the device); write to a named tensor: torch::Tensor out = get_dst_tensor();"
    sed -i "s/    get_dst_tensor().tcm_accessor()/    torch::Tensor out = get_dst_tensor();\n    out.tcm_accessor()/" tmpacc/k.cpp
    run run tmpacc relu_forward arange:4
    expect_status 0
    expect_out "values: 0 1 2 3"'

test_expect "a C library is shown without a namespace" '
    copy_example negate neg
    run build neg
    run inspect neg/build/libnegate.so
    expect_out "\"namespace\": null"
    run run neg negate randn:2x2
    expect_out "negate: ok"'

test_expect "ops: that agrees with the registration is accepted" '
    cat >> ops/neuronop.yaml <<YAML
ops:
  relu_forward: {args: [tensor], shape: relu_fwd_shape, kernel: relu_forward}
  scale: {args: [tensor, double, int64, scalar], shape: scale_shape, kernel: scale}
YAML
    run build ops
    expect_status 0
    expect_out "ops: relu_forward(tensor), scale(tensor, double, int64, scalar)"'

test_expect "a C kernel registered from C++ builds with libtcc and with cc, and runs" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/mixed" mixed
    rm -rf mixed/build
    run build mixed
    expect_status 0
    expect_out "ops: negate(tensor, double)"
    run run mixed mixed_ops::negate arange:4 2
    expect_out "values: -0 -2 -4 -6"
    run build --compiler=cc mixed
    expect_status 0'

test_expect "a C kernel whose parameters differ from the registration fails at its line" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/mixed" mixed2
    rm -rf mixed2/build
    sed -i "s/double k)/int64_t k)/" mixed2/negate.c
    run build mixed2
    expect_status 3
    expect_err "negate.c:5: error: incompatible types for redefinition of '\''negate'\''"
    expect_err "op '\''negate'\'' declares args [tensor, double] in "
    expect_err "shape.cpp:12, so its kernel function must be:"'

test_expect "the registration runs in a child: what it prints is not neuronop's output" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/mixed" mixed3
    rm -rf mixed3/build
    cat > mixed3/shape.cpp <<CPP
#include <stdio.h>
#include <torch/torch.h>
#include <torchneuron/register.h>
torch::Tensor negate_shape(const torch::Tensor &t, double k) { (void)k; return torch::empty(t.sizes(), t.scalar_type()); }
NEURON_LIBRARY(mixed_ops, m) {
    puts("chatty registration");
    fprintf(stderr, "chatty on stderr\\n");
    m.def("negate", &negate_shape, "negate");
}
CPP
    run build mixed3
    expect_status 0
    if grep -q chatty "$WORK/out"; then exit 1; fi
    if grep -q chatty "$WORK/err"; then exit 1; fi
    run build --json --force mixed3
    expect_status 0
    jq -e ".library.namespace == \"mixed_ops\"" "$WORK/out"
    if grep -q chatty "$WORK/out"; then exit 1; fi
    ! grep -q chatty "$WORK/err"'

# The registration loads the shape objects, which would run any load-time code they have:
# a constructor is refused at its line before the probe is linked (the registration child,
# confined before it loads the probe, is t0225's).
test_expect "a shape source'\''s constructor writes nothing at build time" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/mixed" mixed4
    rm -rf mixed4/build
    cat > mixed4/shape.cpp <<CPP
#include <fcntl.h>
#include <unistd.h>
#include <torch/torch.h>
#include <torchneuron/register.h>
__attribute__((constructor)) static void at_load(void) { close(creat("$WORK/built-ran", 0644)); }
torch::Tensor negate_shape(const torch::Tensor &t, double k) { (void)k; return torch::empty(t.sizes(), t.scalar_type()); }
NEURON_LIBRARY(mixed_ops, m) {
    m.def("negate", &negate_shape, "negate");
}
CPP
    run build mixed4
    expect_status 3
    expect_err "shape.cpp:5:1: error: shape function code has a constructor or an indirect function: code that runs when the library loads"
    test ! -e "$WORK/built-ran"'

test_expect "g++ warnings in the user'\''s files pass through in neuronop'\''s form" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/mixed" warn
    rm -rf warn/build
    echo "extra_cflags: [-Wall]" >> warn/neuronop.yaml
    sed -i "s/    (void)k;/    int unused;/" warn/shape.cpp
    run build warn
    expect_status 0
    expect_err "shape.cpp:7:9: warning: unused variable '\''unused'\''"'

test_expect "a missing C++ compiler (CXX, or cxx:) is a clear error" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/mixed" nocxx
    rm -rf nocxx/build
    CXX=no-such-g++ run build nocxx
    expect_status 2
    expect_err "neuronop: error: cannot run '\''no-such-g++'\'': No such file or directory"
    expect_err "apt-get install g++"
    echo "cxx: clang++-99" >> nocxx/neuronop.yaml
    run build nocxx
    expect_status 2
    expect_err "cannot run '\''clang++-99'\''"'

test_expect "a C++ library may declare ops: without a registration; C++ names resolve" '
    mkdir plain
    cp ops/kernels.cpp plain/
    sed -e "/NEURON_LIBRARY/,\$d" -e "/torchneuron/d" ops/shape.cpp > plain/shape.cpp
    if grep -q NEURON_LIBRARY plain/shape.cpp; then exit 1; fi
    cat > plain/neuronop.yaml <<YAML
name: plain
compute_srcs: [kernels.cpp]
shape_srcs: [shape.cpp]
ops:
  scale: {args: [tensor, double, int64, scalar], shape: scale_shape, kernel: scale}
YAML
    run build plain
    expect_status 0
    run run plain scale arange:3 1 2 1.5
    expect_out "scale: ok"
    expect_out "values: 0 3 6"
    run inspect plain/build/libplain.so
    expect_out "\"namespace\": null"'

test_expect "a C++ kernel whose parameters differ from the manifest'\''s args names both" '
    mkdir plain2
    cp plain/kernels.cpp plain/shape.cpp plain2/
    sed "s/args: \[tensor, double, int64, scalar\]/args: [tensor, double, double, scalar]/" \
        plain/neuronop.yaml > plain2/neuronop.yaml
    run build plain2
    expect_status 3
    expect_err "op '\''scale'\'': shape function '\''scale_shape'\'' and kernel '\''scale'\'' take different parameters"'

test_expect "host code may use the C++ library: the link then takes libstdc++" '
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/mixed" stl
    rm -rf stl/build
    sed -i "s/    (void)k;/    std::vector<double> v(3, k); v.push_back(k); (void)v;/" stl/shape.cpp
    sed -i "1i #include <vector>" stl/shape.cpp
    run build -v stl
    expect_status 0
    expect_err "g++ -shared"
    run run stl negate arange:3 1
    expect_out "values: -0 -1 -2"'

test_expect "without the C++ library the C driver links, which is much faster" '
    run build -v --force mixed
    expect_status 0
    expect_err "cc -shared"'

test_expect "compiler: cc builds C kernels with the system compiler, with the same checks" '
    copy_example negate negcc
    run build --compiler=cc -v negcc
    expect_status 0
    expect_err "cc -O2"
    run run negcc negate full:2x2:3
    expect_out "values: -3 -3 -3 -3"
    sed -i "s/const nt_tensor \*t_in/nt_tensor *t_in/" negcc/negate.c
    run build --compiler=cc negcc
    expect_status 3
    expect_err "negate.c:4:12: error: conflicting types for '\''negate'\''"
    expect_err "so its kernel function must be:"'

test_expect "compiler: cc in the manifest; a bad value is a manifest error" '
    copy_example negate negcc2
    echo "compiler: cc" >> negcc2/neuronop.yaml
    run build -v negcc2
    expect_status 0
    expect_err "cc -O2"
    echo "compiler: gcc" >> negcc2/neuronop.yaml
    run build negcc2
    expect_status 2'

test_expect "--compiler takes only tcc or cc" '
    copy_example negate negcc3
    run build --compiler=clang negcc3
    expect_status 2
    expect_err "neuronop build: error: --compiler takes tcc or cc, not '\''clang'\''"
    expect_err "see '\''neuronop build --help'\''"
    test ! -e negcc3/build'

test_expect "CXX=clang++ builds, runs and tests a C++ library; --memcheck says it needs g++" '
    command -v clang++ >/dev/null || { echo "# no clang++: skipped"; exit 0; }
    cp -R "$NEURONOP_SRC/tests/fixtures/cxx/ops" "$WORK/clang"
    rm -rf "$WORK/clang/build"
    CXX=clang++ run build -v clang
    expect_status 0
    expect_err "clang++ -O2"
    expect_err "-fno-caret-diagnostics"
    CXX=clang++ run test clang
    expect_status 0
    expect_out "3 passed, 0 failed"
    echo "int bad = undefined_name;" >> clang/kernels.cpp
    CXX=clang++ run build clang
    expect_status 3
    expect_err "clang/kernels.cpp:25:11: error: use of undeclared identifier '\''undefined_name'\''"
    CXX=clang++ run build --memcheck clang
    expect_status 2
    expect_err "neuronop: error: --memcheck of C++ kernels needs g++, not '\''clang++'\''"'

test_done
