/*
 * neuronop/registry.h - what NEURON_LIBRARY hands to neuronop (plain C; not for kernel authors).
 *
 * torchneuron/register.h (C++) turns each `m.def(op, &shape_fn, "kernel_fn")` into one
 * nt__reg_def and passes it to the registrar's callback.  `neuronop build` runs only the
 * registration function (NT_REG_SYMBOL) of the compiled shape sources, in a child process,
 * and reads the records back: the ops, their kernel names and argument types then come from
 * the registration, not from the manifest.  lib/build/register.c is the other side.
 */
#ifndef NEURONOP_REGISTRY_H
#define NEURONOP_REGISTRY_H

#define NT_REG_SYMBOL "nt__neuron_library"   /* extern "C" void (nt__registrar *) */
#define NT_REG_MAX_ARGS 16                   /* = NOP_MAX_ARGS */

/* Parameter kinds: the same values as abi.h's enum nt__argtype. */
enum nt__reg_kind { NT_REG_TENSOR = 0, NT_REG_SCALAR = 1, NT_REG_DOUBLE = 2, NT_REG_INT64 = 3 };

typedef struct nt__reg_def {
    const char *op;              /* op name, as m.def's first argument */
    const char *kernel;          /* kernel function name, m.def's third argument */
    const void *shape;           /* the shape function's address */
    int nargs;                   /* -1: more than NT_REG_MAX_ARGS */
    int kinds[NT_REG_MAX_ARGS];  /* enum nt__reg_kind of each parameter */
    int byref[NT_REG_MAX_ARGS];  /* 1: `const T &`, 0: by value */
    const char *file;            /* where m.def was called */
    int line;
} nt__reg_def;

typedef struct nt__registrar nt__registrar;
struct nt__registrar {
    void *ctx;
    void (*library)(nt__registrar *r, const char *ns, const char *file, int line);
    void (*def)(nt__registrar *r, const nt__reg_def *d);
};

#endif /* NEURONOP_REGISTRY_H */
