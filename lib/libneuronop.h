/*
 * libneuronop.h - the one public header of libneuronop.
 *
 * libneuronop loads manifests, builds op libraries with libtcc, loads built libraries and runs
 * their ops on a virtual GPSIMD core array.  The neuronop command is a thin client of it.
 *
 * Conventions (libtcc and libyaml are the models):
 *   - Public names start with nop_ (internal ones, in lib/internal.h, with nopi_).
 *   - Objects are opaque and come in pairs: nop_X_new/nop_X_load/nop_X_open creates,
 *     nop_X_free/nop_X_close destroys; *_free(NULL) is a no-op.
 *   - Functions that can fail return 0 on success and -1 on failure, filling the caller's
 *     nop_error (which may be NULL when the caller does not care).
 *   - The library never prints, never calls exit() and keeps no process-wide mutable state:
 *     warnings and progress go to a caller-supplied nop_diag_fn.
 */
#ifndef LIBNEURONOP_H
#define LIBNEURONOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NOP_VERSION "0.1.0"

/* ---- errors and diagnostics ------------------------------------------------------------ */

/* Exit statuses of the neuronop command; every error carries the one it maps to. */
enum nop_status {
    NOP_EXIT_OK = 0,       /* success */
    NOP_EXIT_FAIL = 1,     /* the op or a test failed: device rule, crash, timeout, mismatch */
    NOP_EXIT_USAGE = 2,    /* usage, manifest or input error */
    NOP_EXIT_COMPILE = 3,  /* the user's C sources did not compile or link */
};

enum nop_severity { NOP_SEV_ERROR, NOP_SEV_WARNING, NOP_SEV_NOTE };

/*
 * One message about one place.  `file` (with 1-based `line` and `col`, 0 when unknown) names
 * an input file; `where` names a device context ("relu_forward: core 7"); both may be empty.
 * `detail` holds further lines shown under the message (a source excerpt, a hint).
 */
typedef struct nop_diag {
    enum nop_severity severity;
    char file[1024];
    int line, col;
    char where[256];
    char msg[1024];
    char detail[2048];
} nop_diag;

/* The error record filled by a failing call: the diagnostic and the exit status it maps to. */
typedef struct nop_error {
    enum nop_status status;
    nop_diag diag;
} nop_error;

/* Receives warnings, notes and progress lines; `d` is valid only during the call. */
typedef void nop_diag_fn(void *ctx, const nop_diag *d);

/* ---- manifests ------------------------------------------------------------------------- */

typedef struct nop_manifest nop_manifest;

enum nop_argtype { NOP_ARG_TENSOR, NOP_ARG_SCALAR, NOP_ARG_DOUBLE, NOP_ARG_INT64 };
#define NOP_MAX_OPS 10
#define NOP_MAX_ARGS 16

/* Where the library's stack size came from. */
enum nop_stack_from { NOP_STACK_DEFAULT, NOP_STACK_CFLAGS, NOP_STACK_KEY };

/*
 * Loads and validates a manifest.  `path` is a neuronop.yaml file or a directory holding one.
 * On success *out owns the manifest (free with nop_manifest_free).  Every problem is reported
 * with file, line and column, and what to write instead.
 */
int nop_manifest_load(nop_manifest **out, const char *path, nop_error *err);
void nop_manifest_free(nop_manifest *m);

const char *nop_manifest_path(const nop_manifest *m);     /* the manifest file */
const char *nop_manifest_name(const nop_manifest *m);     /* library name */
const char *nop_manifest_build_dir(const nop_manifest *m); /* absolute-or-relative to cwd */
bool nop_manifest_multicore(const nop_manifest *m);
int64_t nop_manifest_stack_size(const nop_manifest *m);
enum nop_stack_from nop_manifest_stack_from(const nop_manifest *m);
int nop_manifest_op_count(const nop_manifest *m);

/* An op's declaration: pointers stay valid as long as the manifest or library they came
 * from. */
typedef struct nop_opinfo {
    const char *name, *kernel, *shape;
    int nargs;
    enum nop_argtype args[NOP_MAX_ARGS];
} nop_opinfo;

/* Fills *out for op i (0-based); -1 when i is out of range. */
int nop_manifest_op(const nop_manifest *m, int i, nop_opinfo *out);

/* The manifest name of an arg type ("tensor", "scalar", "double", "int64"). */
const char *nop_argtype_name(enum nop_argtype t);

/* The candidate closest to word by edit distance, or NULL when none is close enough to
 * suggest ("did you mean"). */
const char *nop_closest(const char *word, const char *const *candidates, size_t n);

/* Default and limits of STACK_SIZE (gpsimd.md). */
#define NOP_STACK_DEFAULT_BYTES 6144
#define NOP_STACK_MAX_BYTES 409600

/* ---- building -------------------------------------------------------------------------- */

typedef struct nop_build_opts {
    const char *share_dir;     /* share/neuronop: holds include/neuronop.h (required) */
    const char *tcc_dir;       /* tcc's lib dir (libtcc1.a, include/); NULL: search */
    bool force;                /* rebuild even when up to date */
    bool memcheck;             /* compile with libtcc's bounds checking (reserved) */
    double lock_timeout;       /* seconds to wait for another build of the same dir; 0: 60 */
    nop_diag_fn *diag;         /* warnings and, with verbose, each compile step; may be NULL */
    void *diag_ctx;
    bool verbose;              /* report each compile step as a NOP_SEV_NOTE */
} nop_build_opts;

typedef struct nop_build_result {
    char lib_path[1024];       /* the built (or up-to-date) library */
    bool up_to_date;           /* nothing was compiled */
    double seconds;            /* wall time of the whole build call */
    int compiled;              /* translation units compiled */
} nop_build_result;

/* Builds the manifest's library, or finds it up to date. */
int nop_build(const nop_manifest *m, const nop_build_opts *opts, nop_build_result *res,
              nop_error *err);

/* Finds tcc's runtime directory (libtcc1.a): NEURONOP_TCC_DIR, then the usual places.
 * Writes it to buf; -1 with an error naming the package to install when absent. */
int nop_find_tcc_dir(char *buf, size_t size, nop_error *err);

/* ---- built libraries ------------------------------------------------------------------- */

typedef struct nop_library nop_library;

/* Loads a built library and checks its descriptor (magic, ABI version). */
int nop_library_open(nop_library **out, const char *path, nop_error *err);
void nop_library_close(nop_library *lib);

/* The library's metadata as a JSON object (malloc'd, caller frees); NULL on no memory. */
char *nop_library_json(const nop_library *lib);

const char *nop_library_name(const nop_library *lib);
const char *nop_library_path(const nop_library *lib);
bool nop_library_multicore(const nop_library *lib);
int64_t nop_library_stack_size(const nop_library *lib);
int nop_library_op_count(const nop_library *lib);
int nop_library_op(const nop_library *lib, int i, nop_opinfo *out);
/* Index of the op called name, or -1. */
int nop_library_find_op(const nop_library *lib, const char *name);

#endif /* LIBNEURONOP_H */
