#!/bin/sh
# Generated glue names cannot clash with the user's: kernels and shape functions named like
# the glue's parameter ('a'), abi.h's types and macros, or the shims build and run, in C and
# in C++; the names the glue itself defines (nt__..., neuronop_library) are refused up front.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # the build itself is under test: every compile runs cold

# c_lib DIR KERNEL SHAPE: a one-op C library (negate) whose functions have the given names.
c_lib() {
    mkdir -p "$1"
    cat >"$1/neuronop.yaml" <<YAML
name: names
compute_srcs: [k.c]
shape_srcs: [s.c]
ops:
  neg:
    args: [tensor]
    shape: $3
    kernel: $2
YAML
    cat >"$1/k.c" <<C
#include <neuronop.h>
nt_tensor *$2(const nt_tensor *t_in)
{
    nt_tensor *t_out = get_dst_tensor();
    nt_accessor in = nt_accessor_of(t_in), out = nt_accessor_of(t_out);
    for (int64_t i = 0; i < nt_size(t_in, 0); i++)
        nt_set_f32(&out, -nt_get_f32(&in, i), i);
    return t_out;
}
C
    cat >"$1/s.c" <<C
#include <neuronop.h>
nt_tensor *$3(const nt_tensor *t_in)
{
    return nt_empty(nt_dim(t_in), nt_sizes(t_in), nt_dtype_of(t_in));
}
C
}

# the expected output from PyTorch itself: torch.neg of arange(3)
torch_says "import sys, torch, numpy; numpy.save(sys.stdout.buffer, torch.neg(torch.arange(3, dtype=torch.float32)).numpy())" >"$WORK/neg.npy"
for pair in "a b" "NT_LIB_MAGIC NT_ABI_VERSION" "args nt_tensor_desc" "nt_arg nt_call_fn" \
            "NT_ARG_TENSOR NT_LIB_SYMBOL" "NEURONOP_ABI_H args"; do
    set -- $pair
    test_expect "C kernel '$1' with shape function '$2' builds and runs" "
        c_lib '$WORK/c-$1' '$1' '$2'
        \"\$NEURONOP\" build '$WORK/c-$1' >out 2>err || { cat err; exit 1; }
        \"\$NEURONOP\" run '$WORK/c-$1' neg arange:3 --expect '$WORK/neg.npy' >out 2>err || { cat err; exit 1; }
        ! grep -q 'neuronop bug' err"
done

for name in nt__ops nt__kernel0 neuronop_library; do
    test_expect "a kernel named '$name' (the glue's own) is refused at its key" "
        c_lib '$WORK/r-$name' '$name' shape_fn
        status=0; \"\$NEURONOP\" build '$WORK/r-$name' >out 2>err || status=\$?
        test \$status -eq 2
        grep -q \"neuronop.yaml:8:13: error: function name '$name' is reserved\" err"
done

# C++: the same names through NEURON_LIBRARY, compiled by g++
cxx_lib() {
    mkdir -p "$1"
    printf 'name: cxxnames\ncompute_srcs: [k.cpp]\nshape_srcs: [s.cpp]\n' >"$1/neuronop.yaml"
    cat >"$1/k.cpp" <<CXX
#include <torch/torch.h>
torch::Tensor $2(const torch::Tensor &t_in)
{
    torch::Tensor t_out = torch::zeros({t_in.numel()}, torch::kFloat);
    auto in = t_in.accessor<float, 1>();
    auto out = t_out.accessor<float, 1>();
    for (int64_t i = 0; i < t_in.numel(); i++)
        out[i] = -in[i];
    return t_out;
}
CXX
    cat >"$1/s.cpp" <<CXX
#include <torch/torch.h>
#include <torchneuron/register.h>
torch::Tensor $3(const torch::Tensor &t_in)
{
    return torch::zeros({t_in.numel()}, torch::kFloat);
}
NEURON_LIBRARY(cxxnames, m) {
    m.def("neg", &$3, "$2");
}
CXX
}

test_expect "C++ kernel 'a' with shape function 'NT_LIB_MAGIC' builds and runs" "
    cxx_lib '$WORK/cxx' a NT_LIB_MAGIC
    \"\$NEURONOP\" build '$WORK/cxx' >out 2>err || { cat err; exit 1; }
    \"\$NEURONOP\" run '$WORK/cxx' neg arange:3 --expect '$WORK/neg.npy' >out 2>err || { cat err; exit 1; }"
test_done
