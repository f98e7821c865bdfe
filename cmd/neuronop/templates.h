/*
 * templates.h - the libraries `neuronop new` writes (templates.c).
 */
#ifndef NEURONOP_TEMPLATES_H
#define NEURONOP_TEMPLATES_H

/* One file: its path inside the new folder, and its text; @NAME@ stands for the library
 * name in both. */
struct template_file {
    const char *path;
    const char *text;
};

/* A kind of library: the files every flavour shares and its own, each list ending in a
 * {NULL, NULL} entry. */
struct template_flavour {
    const char *name;
    const struct template_file *common, *own;
};

/* The top comment of every flavour's kernel file: the same kernel, in C or in C++. */
#define TEMPLATE_KERNEL_COMMENT                                                                \
    "/*\n"                                                                                     \
    " * The kernels of @NAME@: they run on the (virtual) GPSIMD cores.\n"                      \
    " *\n"                                                                                     \
    " * @NAME@_forward is relu through TCM, the fast path: each core copies its share of the\n" \
    " * elements into a TCM buffer, computes there and copies the result into the output.\n"   \
    " * The offset is computed before the last core's share is enlarged by the remainder,\n"   \
    " * so every element is written exactly once for any size and any core count.\n"          \
    " */\n"

/* Every flavour, ending in a {NULL} entry: c, c-multicore, cxx, cxx-multicore. */
extern const struct template_flavour template_flavours[];

/* templates_cxx.c: the C++ flavours' files */
extern const struct template_file cxx_common_files[], cxx_single_files[], cxx_multicore_files[];

#endif /* NEURONOP_TEMPLATES_H */
