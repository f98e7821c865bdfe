/*
 * templates.c - the files `neuronop new` writes, as data: one table per flavour of library,
 * each file a path and a text in which @NAME@ stands for the library's name.
 *
 * The kernel is the one we recommend starting from: the TCM accessor (the fast path), output
 * through get_dst_tensor, each core taking its share of the elements and the last core the
 * remainder, so it is right on one core and on any count of them, for any size.  The tests
 * hold it to a reference function on sizes that do not divide evenly.  To add a flavour,
 * add its tables (the C++ ones are in templates_cxx.c) and a row to template_flavours.
 */
#include <stddef.h>

#include "templates.h"

static const struct template_file common_files[] = {
    { "@NAME@.c",
      TEMPLATE_KERNEL_COMMENT
      "#include <neuronop.h>\n"
      "\n"
      "enum { BUF = 1024 };   /* floats per TCM buffer: 4 KB of the core's 16 KB pool */\n"
      "\n"
      "nt_tensor *@NAME@_forward(const nt_tensor *t_in)\n"
      "{\n"
      "    int64_t n = nt_numel(t_in);\n"
      "    nt_tensor *t_out = get_dst_tensor();\n"
      "    uint32_t id = get_cpu_id(), count = get_cpu_count();\n"
      "    int64_t part = n / count, begin = part * id;\n"
      "    if (id == count - 1)\n"
      "        part = n - begin;\n"
      "    float *buf = tcm_malloc(sizeof(float) * BUF);\n"
      "    if (!buf)\n"
      "        return t_out;\n"
      "    nt_tcm_accessor in = nt_tcm_accessor_of(t_in), out = nt_tcm_accessor_of(t_out);\n"
      "    for (int64_t i = 0; i < part; i += BUF) {\n"
      "        int64_t k = part - i < BUF ? part - i : BUF;\n"
      "        nt_tensor_to_tcm(&in, buf, begin + i, k);\n"
      "        for (int64_t j = 0; j < k; j++)\n"
      "            buf[j] = buf[j] > 0.0f ? buf[j] : 0.0f;\n"
      "        nt_tcm_to_tensor(&out, buf, begin + i, k);\n"
      "    }\n"
      "    tcm_free(buf);\n"
      "    return t_out;\n"
      "}\n" },
    { "shape.c",
      "/* The shape functions of @NAME@: they run on the host and describe each op's output\n"
      " * (shape and dtype) from the shapes of its inputs; they never see data.  The kernel\n"
      " * copies the input's bytes into a TCM buffer of floats, so the input must be float32\n"
      " * (a bfloat16 one would be read as garbage): checked here, where a failed assert is\n"
      " * reported with its line. */\n"
      "#include <assert.h>\n"
      "#include <neuronop.h>\n"
      "\n"
      "nt_tensor *@NAME@_forward_shape(const nt_tensor *t_in)\n"
      "{\n"
      "    assert(nt_dtype_of(t_in) == NT_F32 && \"@NAME@_forward takes a float32 tensor\");\n"
      "    return nt_empty(nt_dim(t_in), nt_sizes(t_in), NT_F32);\n"
      "}\n" },
    { "ref.c",
      "/* The reference functions of @NAME@: plain host code that computes the answer the\n"
      " * kernels are held to by `neuronop test`.  Keep them simple and obviously right. */\n"
      "#include <neuronop.h>\n"
      "\n"
      "nt_tensor *@NAME@_forward_ref(const nt_tensor *t)\n"
      "{\n"
      "    nt_tensor *out = nt_empty(nt_dim(t), nt_sizes(t), NT_F32);\n"
      "    return nt_clamp_out(out, t, nt_scalar_f(0.0), nt_scalar_f(3.4e38));\n"
      "}\n" },
    { ".gitignore", "build/\n" },
    { NULL, NULL },
};

static const struct template_file single_files[] = {
    { "neuronop.yaml",
      "# @NAME@: a custom-operator library for the GPSIMD cores (see neuronop.yaml(5)).\n"
      "name: @NAME@\n"
      "compute_srcs: [@NAME@.c]    # kernels: run on the device's cores\n"
      "shape_srcs: [shape.c]       # shape functions: run on the host\n"
      "reference_srcs: [ref.c]     # host code the tests hold the kernels to\n"
      "ops:\n"
      "  @NAME@_forward:\n"
      "    args: [tensor]\n"
      "    shape: @NAME@_forward_shape\n"
      "    kernel: @NAME@_forward\n"
      "tests:\n"
      "  - name: forward_odd_sizes\n"
      "    op: @NAME@_forward\n"
      "    args: [[randn:1, randn:1023, randn:1025, randn:4x1024]]\n"
      "    reference: @NAME@_forward_ref\n" },
    { "README.md",
      "# @NAME@\n"
      "\n"
      "A custom-operator library for the GPSIMD cores of AWS Neuron devices, made by\n"
      "`neuronop new`. Its kernel runs on one core; `neuronop new --multicore` makes one for\n"
      "all eight.\n"
      "\n"
      "    neuronop build @DIR@                           # compile it\n"
      "    neuronop run @DIR@ @NAME@_forward randn:4x1024   # run its op on the device\n"
      "    neuronop test @DIR@                            # hold it to its reference\n"
      "\n"
      "Edit `@NAME@.c` (the kernel), `shape.c`, `ref.c` and the `tests:` in `neuronop.yaml`;\n"
      "see neuronop-api(3) for the kernel API and neuronop.yaml(5) for the manifest.\n" },
    { NULL, NULL },
};

static const struct template_file multicore_files[] = {
    { "neuronop.yaml",
      "# @NAME@: a custom-operator library for the GPSIMD cores (see neuronop.yaml(5)).\n"
      "name: @NAME@\n"
      "compute_srcs: [@NAME@.c]    # kernels: run on every core of the device\n"
      "shape_srcs: [shape.c]       # shape functions: run on the host\n"
      "reference_srcs: [ref.c]     # host code the tests hold the kernels to\n"
      "multicore: true\n"
      "ops:\n"
      "  @NAME@_forward:\n"
      "    args: [tensor]\n"
      "    shape: @NAME@_forward_shape\n"
      "    kernel: @NAME@_forward\n"
      "tests:\n"
      "  - name: forward_odd_sizes     # sizes that do not divide by the core count\n"
      "    op: @NAME@_forward\n"
      "    args: [[randn:1, randn:1023, randn:1025, randn:4x1024]]\n"
      "    reference: @NAME@_forward_ref\n"
      "    cores: [1, 3, 8]\n" },
    { "README.md",
      "# @NAME@\n"
      "\n"
      "A custom-operator library for the GPSIMD cores of AWS Neuron devices, made by\n"
      "`neuronop new --multicore`. Its kernel runs on all eight cores, each writing its share\n"
      "of the output through TCM.\n"
      "\n"
      "    neuronop build @DIR@                           # compile it\n"
      "    neuronop run @DIR@ @NAME@_forward randn:4x1024   # run its op on the device\n"
      "    neuronop test @DIR@                            # every size, core count, order\n"
      "\n"
      "Edit `@NAME@.c` (the kernel), `shape.c`, `ref.c` and the `tests:` in `neuronop.yaml`;\n"
      "see neuronop-api(3) for the kernel API and neuronop.yaml(5) for the manifest.\n" },
    { NULL, NULL },
};

const struct template_flavour template_flavours[] = {
    { "c", common_files, single_files },
    { "c-multicore", common_files, multicore_files },
    { "cxx", cxx_common_files, cxx_single_files },
    { "cxx-multicore", cxx_common_files, cxx_multicore_files },
    { NULL, NULL, NULL },
};
