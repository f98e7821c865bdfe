/*
 * templates_cxx.c - the files `neuronop new --cxx` writes: the same library as the C
 * flavours (templates.c), in the device's torch-style C++, with a manifest of only
 * custom_op.load's arguments (the ops come from NEURON_LIBRARY in shape.cpp) plus the tests.
 */
#include <stddef.h>

#include "templates.h"

const struct template_file cxx_common_files[] = {
    { "@NAME@.cpp",
      TEMPLATE_KERNEL_COMMENT
      "#include <torch/torch.h>\n"
      "\n"
      "torch::Tensor @NAME@_forward(const torch::Tensor &input)\n"
      "{\n"
      "    const size_t n = input.numel();\n"
      "    torch::Tensor output = get_dst_tensor();\n"
      "    const uint32_t core = get_cpu_id(), cores = get_cpu_count();\n"
      "    const size_t first = n / cores * core;   // this core's first element\n"
      "    const size_t count = core + 1 == cores ? n - first : n / cores;\n"
      "\n"
      "    static constexpr size_t chunk = 1024;   // floats: 4 KB of the core's 16 KB of TCM\n"
      "    float *buf = static_cast<float *>(torch::neuron::tcm_malloc(chunk * sizeof(float)));\n"
      "    if (buf == nullptr)\n"
      "        return output;\n"
      "    auto in = input.tcm_accessor();\n"
      "    auto out = output.tcm_accessor();\n"
      "    for (size_t done = 0; done < count; done += chunk) {\n"
      "        const size_t k = count - done < chunk ? count - done : chunk;\n"
      "        in.tensor_to_tcm<float>(buf, first + done, k);\n"
      "        for (size_t j = 0; j < k; j++)\n"
      "            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;\n"
      "        out.tcm_to_tensor<float>(buf, first + done, k);\n"
      "    }\n"
      "    torch::neuron::tcm_free(buf);\n"
      "    return output;\n"
      "}\n" },
    { "shape.cpp",
      "/* The shape functions of @NAME@ and its registration: host code.  A shape function\n"
      " * describes an op's output (shape and dtype) from the shapes of its inputs and never\n"
      " * sees data; NEURON_LIBRARY names each op's shape function and kernel. */\n"
      "#include <torch/torch.h>\n"
      "#include <torchneuron/register.h>\n"
      "\n"
      "torch::Tensor @NAME@_forward_shape(const torch::Tensor &t_in)\n"
      "{\n"
      "    return torch::empty(t_in.sizes(), torch::kFloat);\n"
      "}\n"
      "\n"
      "NEURON_LIBRARY(@NAME@, m)\n"
      "{\n"
      "    m.def(\"@NAME@_forward\", &@NAME@_forward_shape, \"@NAME@_forward\");\n"
      "}\n" },
    { "ref.cpp",
      "/* The reference functions of @NAME@: plain host code that computes the answer the\n"
      " * kernels are held to by `neuronop test`.  Keep them simple and obviously right. */\n"
      "#include <torch/torch.h>\n"
      "\n"
      "torch::Tensor @NAME@_forward_ref(const torch::Tensor &t)\n"
      "{\n"
      "    torch::Tensor out = torch::empty(t.sizes(), torch::kFloat);\n"
      "    return torch::clamp_out(out, t, 0.0, 3.4e38);\n"
      "}\n" },
    { ".gitignore", "build/\n" },
    { NULL, NULL },
};

#define CXX_MANIFEST(multicore, comment, cores)                                               \
    "# @NAME@: a custom-operator library for the GPSIMD cores (see neuronop.yaml(5)).\n"      \
    "# The first keys are custom_op.load's; the ops come from NEURON_LIBRARY in shape.cpp.\n" \
    "name: @NAME@\n"                                                                          \
    "compute_srcs: [@NAME@.cpp]   # kernels: " comment "\n"                                   \
    "shape_srcs: [shape.cpp]      # shape functions and the registration: run on the host\n" \
    "build_directory: build\n"                                                                \
    "multicore: " multicore "\n"                                                              \
    "reference_srcs: [ref.cpp]    # host code the tests hold the kernels to\n"               \
    "tests:\n"                                                                                \
    "  - name: forward_odd_sizes\n"                                                           \
    "    op: @NAME@_forward\n"                                                                \
    "    args: [[randn:1, randn:1023, randn:1025, randn:4x1024]]\n"                           \
    "    reference: @NAME@_forward_ref\n"                                                     \
    cores

#define CXX_README(how)                                                                       \
    "# @NAME@\n"                                                                              \
    "\n"                                                                                      \
    "A custom-operator library for the GPSIMD cores of AWS Neuron devices, in the device's\n" \
    "torch-style C++, made by `neuronop new --cxx" how ".\n"                                  \
    "\n"                                                                                      \
    "    neuronop build @DIR@                           # compile it (g++ -std=c++14)\n"      \
    "    neuronop run @DIR@ @NAME@_forward randn:4x1024   # run its op on the device\n"       \
    "    neuronop test @DIR@                            # hold it to its reference\n"         \
    "\n"                                                                                      \
    "Edit `@NAME@.cpp` (the kernel), `shape.cpp` (with the NEURON_LIBRARY registration),\n"   \
    "`ref.cpp` and the `tests:` in `neuronop.yaml`; see neuronop-cxx(3) for the C++ API and\n" \
    "neuronop.yaml(5) for the manifest.\n"

const struct template_file cxx_single_files[] = {
    { "neuronop.yaml", CXX_MANIFEST("false", "run on one of the device's cores", "") },
    { "README.md", CXX_README("`. Its kernel runs on one core; `neuronop new --cxx --multicore`\n"
                              "makes one for all eight") },
    { NULL, NULL },
};

const struct template_file cxx_multicore_files[] = {
    { "neuronop.yaml", CXX_MANIFEST("true", "run on every core of the device",
                                    "    cores: [1, 3, 8]\n") },
    { "README.md", CXX_README(" --multicore`. Its kernel runs on all eight cores, each writing\n"
                              "its share of the output through TCM") },
    { NULL, NULL },
};
