/*
 * neuronop/abi.h - the binary format of a built op library: the descriptor it exports.
 *
 * Not for kernel authors.  It is compiled twice: by libtcc into the glue of every library
 * `neuronop build` makes, and by the host compiler into libneuronop, which reads the
 * descriptor back.  It uses only plain C types and includes nothing, so the glue compiles in
 * microseconds and both compilers lay it out the same (x86-64 SysV).  lib/ checks that the
 * mirror types below match neuronop.h.  Any change here must bump NT_ABI_VERSION: the runtime
 * refuses a library built for another version and says to rebuild it.
 */
#ifndef NEURONOP_ABI_H
#define NEURONOP_ABI_H

#define NT_ABI_VERSION 6
#define NT_LIB_MAGIC 0x4e4f5031u          /* "NOP1" */
#define NT_LIB_SYMBOL "neuronop_library"  /* the exported descriptor */

/* Argument types of an op, in manifest order. */
enum nt__argtype { NT_ARG_TENSOR = 0, NT_ARG_SCALAR = 1, NT_ARG_DOUBLE = 2, NT_ARG_INT64 = 3 };

/* Layout twin of nt_scalar (neuronop.h). */
struct nt__scalar_abi {
    double f;
    long long i;
    int is_int;
    int reserved_;
};

/* One argument as the runtime passes it to a generated call shim. */
typedef union nt__arg {
    const void *t;                /* const nt_tensor * */
    struct nt__scalar_abi s;      /* nt_scalar */
    double d;
    long long i;                  /* int64_t */
} nt__arg;

/* A generated shim: unpacks args and calls the user's kernel or shape function, returning
 * its nt_tensor *. */
typedef void *(*nt__call_fn)(const nt__arg *args);

typedef struct nt__op_desc {
    const char *name;          /* op name */
    const char *kernel;        /* kernel function name (compute_srcs) */
    const char *shape;         /* shape function name (shape_srcs) */
    int nargs;
    const int *argtypes;       /* nargs values of enum nt__argtype */
    nt__call_fn call_kernel;
    nt__call_fn call_shape;
} nt__op_desc;

/* A reference function of the manifest's tests: host code with its op's signature. */
typedef struct nt__ref_desc {
    const char *name;
    int op;                    /* index into ops: whose signature and shape function it has */
    nt__call_fn call;
} nt__ref_desc;

typedef struct nt__source_desc {
    const char *path;          /* as written in the manifest */
    const char *role;          /* "compute", "shape" or "reference" */
    const char *hash;          /* XXH3-128 of the content, hex */
} nt__source_desc;

typedef struct nt__lib_desc {
    unsigned magic;            /* NT_LIB_MAGIC */
    unsigned abi_version;      /* NT_ABI_VERSION */
    const char *neuronop_version;
    const char *name;
    int multicore;
    int memcheck;
    long long stack_size;      /* bytes */
    const char *stack_size_from;  /* "default", "extra_cflags" or "stack_size" */
    int ncflags;
    const char *const *cflags;
    int nsources;
    const nt__source_desc *sources;
    int nops;
    const nt__op_desc *ops;
    const void **api;          /* where the runtime stores its function table (struct
                                  nt__api, lib/base/api.h) before any call; the library's
                                  trampolines jump through it */
    const char *build_key;     /* hash of everything the build depended on */
    int nrefs;
    const nt__ref_desc *refs;
    const char *ns;            /* NEURON_LIBRARY's namespace (C++ libraries), or NULL */
} nt__lib_desc;

#endif /* NEURONOP_ABI_H */
