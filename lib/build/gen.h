/*
 * gen.h - C sources that neuronop generates around the user's code (internal).
 *
 * Two kinds:
 *   - the prelude of each user source: includes <neuronop.h> and declares every kernel (for a
 *     compute source) or shape function (for a shape source) with the signature the manifest
 *     gives it, then `#line 1 "file"` and the file's text.  A definition that disagrees with
 *     its declared args then fails to compile at the user's own line.
 *   - the glue: trampolines to the runtime, one call shim per op, and the library descriptor
 *     (neuronop/abi.h) that makes the built .so self-describing.
 */
#ifndef NEURONOP_GEN_H
#define NEURONOP_GEN_H

#include "manifest.h"

typedef enum nopi_role { NOPI_ROLE_COMPUTE, NOPI_ROLE_SHAPE, NOPI_ROLE_REFERENCE } nopi_role;

/* What the glue records about each source. */
typedef struct nopi_gen_source {
    const char *path;     /* as written in the manifest (recorded in the library) */
    const char *file;     /* where to read it from the current folder */
    nopi_role role;
    char hash[33];
} nopi_gen_source;

/* How the glue calls one function: a C function by its name, a C++ one by its mangled
 * symbol, with each by-reference parameter passed as the address of the argument (a
 * torch::Tensor is one nt_tensor pointer and a torch::Scalar one nt_scalar, register.h). */
typedef struct nopi_gen_fn {
    char *sym;            /* NULL: the C function of that name */
    bool byref[NOP_MAX_ARGS];
} nopi_gen_fn;

typedef struct nopi_gen_info {
    const nop_manifest *m;
    const nopi_gen_source *sources;
    int nsources;
    const char *build_key;
    bool memcheck;
    const nopi_gen_fn (*fns)[2];   /* per op: [0] kernel, [1] shape; NULL: all C */
    const nopi_gen_fn *refs;       /* per test: its reference; NULL: all C */
    const char *ns;                /* NEURON_LIBRARY's namespace, or NULL */
    bool object;                   /* compiled to an object the system linker links */
    const char *argnames;          /* nopi_argnames_scan's lines, exported as
                                    * neuronop_argnames; NULL: none */
} nopi_gen_info;

/* The user source wrapped with its prelude; malloc'd, NULL on no memory. */
char *nopi_gen_unit(const nop_manifest *m, nopi_role role, const char *path, const char *text);
/* The glue source; malloc'd, NULL on no memory. */
char *nopi_gen_glue(const nopi_gen_info *info);
/* The glue of the registration probe: the trampolines, so shape objects link, over a table
 * whose every call exits the probe with NOPI_PROBE_API_EXIT. */
#define NOPI_PROBE_API_EXIT 97
char *nopi_gen_probe_glue(void);
/* The C declaration of an op's kernel or shape function, e.g.
 * "nt_tensor *relu(const nt_tensor *, double)"; malloc'd. */
char *nopi_gen_signature(const nopi_op *op, const char *fname);

/* argnames.c: each op's parameter names as its kernel's (else its shape function's)
 * definition spells them, one line per op in manifest order, comma-separated, empty when
 * not found; malloc'd, NULL on no memory. */
char *nopi_argnames_scan(const nop_manifest *m, const nopi_gen_source *sources, int nsources);

/* True when a compute object may leave `name` undefined: the kernel API or the device's libc
 * subset (memory, string, math functions) and the compiler's runtime helpers. */
bool nopi_device_symbol_allowed(const char *name);
/* The header that declares name, a function the device has (math.h's, string.h's, the
 * kernel API's ...), or NULL for any other name. */
const char *nopi_device_symbol_header(const char *name);
/* devsyms.c: the kernel API's function that name, a name of its kind (nt_, tcm_, get_), is
 * a near-miss of ("nt_nmel": "nt_numel"), copied to buf; false when there is none. */
bool nopi_device_symbol_closest(const char *name, char *buf, size_t size);
/* True when `name` is one of libtcc's bounds-checking functions that a --memcheck library's
 * glue provides (gen.c). */
bool nopi_gen_is_bound_hook(const char *name);

#endif /* NEURONOP_GEN_H */
