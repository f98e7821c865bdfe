/*
 * manifest.h - the validated manifest, as build.c and gen.c read it (internal).
 *
 * manifest.c owns every field; paths are resolved against the manifest's folder at load time,
 * and positions are kept so later stages (a kernel missing from the sources, a compile
 * problem) can point back into neuronop.yaml.
 */
#ifndef NEURONOP_MANIFEST_H
#define NEURONOP_MANIFEST_H

#include "base/internal.h"

typedef struct nopi_pos { int line, col; } nopi_pos;

typedef struct nopi_src {
    char *path;           /* as written in the manifest */
    char *resolved;       /* joined with the manifest's folder */
    char *real;           /* a source's file as the system resolves it (symlinks, "..", "."):
                           * two entries naming one file have the same */
    dev_t dev;            /* and its identity, which hard links share too */
    ino_t ino;
    nopi_pos pos;
} nopi_src;

/* One extra_cflags entry, classified (flags.c). */
typedef enum nopi_flagkind {
    NOPI_FLAG_DEFINE,     /* -DNAME[=VALUE]: name, value (NULL: "1") */
    NOPI_FLAG_UNDEF,      /* -UNAME: name */
    NOPI_FLAG_INCLUDE,    /* -Ipath: value resolved against the manifest's folder */
    NOPI_FLAG_OPTION,     /* -O*, -g, -w, -W*, -f*, -std=: passed to libtcc as written */
} nopi_flagkind;

typedef struct nopi_flag {
    nopi_flagkind kind;
    char *text;           /* as written */
    char *name, *value;
    nopi_pos pos;
} nopi_flag;

typedef struct nopi_op {
    char *name;
    nopi_pos pos;
    int nargs;
    enum nop_argtype args[NOP_MAX_ARGS];
    char *shape, *kernel;
    nopi_pos shape_pos, kernel_pos;
} nopi_op;

/* One test case (neuronop test): an op, its arguments (each a list of alternatives; every
 * combination is a sub-case, at most NOPI_MAX_SUBCASES), an optional expected output,
 * tolerances and core counts. */
#define NOPI_MAX_SUBCASES 10000
#define NOPI_MAX_TEST_NAME 200
typedef struct nopi_test {
    char *name;
    nopi_pos pos;
    int op;                      /* index into ops; -1 until the registration gives the ops */
    char *opname;                /* as written */
    nopi_pos op_pos;
    int nargs;
    char **alts[NOP_MAX_ARGS];   /* alts[i][k]: the k-th value of argument i */
    int nalts[NOP_MAX_ARGS];
    char *expect;                /* resolved path of a .npy, or NULL */
    char *reference;             /* a reference function (reference_srcs), or NULL */
    nopi_pos reference_pos;
    double rtol, atol;           /* < 0: the dtype's default */
    int cores[16];
    nopi_pos cores_pos[16];
    int ncores;                  /* 0: the profile's count */
} nopi_test;

struct nop_manifest {
    char *path, *dir;
    char *name;
    nopi_pos name_pos;
    nopi_src *compute, *shape, *reference;
    int ncompute, nshape, nreference;
    char *build_dir;
    char *build_dir_text;     /* build_directory as written ("build" when absent) */
    bool build_dir_given;     /* build_directory is in the manifest */
    nopi_pos build_dir_pos;   /* where (1:1 when absent) */
    bool multicore;
    bool verbose;             /* custom_op.load's verbose: show the compile steps (-v) */
    nopi_flag *flags;
    int nflags;
    nopi_src *includes;   /* extra_include_paths */
    int nincludes;
    int64_t stack_size;
    enum nop_stack_from stack_from;
    nopi_pos stack_pos;
    nopi_op ops[NOP_MAX_OPS];
    int nops;
    bool ops_given;              /* false: the NEURON_LIBRARY registration gives the ops */
    nopi_pos ops_pos;
    char *cxx;                   /* cxx: the C++ compiler, or NULL */
    bool compiler_cc;            /* compiler: cc */
    nopi_test *tests;
    int ntests;
};

/* flags.c: classifies one extra_cflags entry; refuses what libtcc would exit on or what has
 * no meaning on the device.  dir resolves -I paths.  Fills f (caller frees with
 * nopi_flag_clear) or returns -1 with a message saying what to write instead. */
int nopi_flag_parse(const char *text, const char *dir, nopi_flag *f, char *why, size_t whysize);
void nopi_flag_clear(nopi_flag *f);

/* Parses a STACK_SIZE value: a whole number of bytes, 1..NOP_STACK_MAX_BYTES.
 * -1 with a message in why otherwise, naming the value as name (as the user wrote it:
 * "STACK_SIZE" in extra_cflags, "'stack_size'" as the key). */
int nopi_stack_size_parse(const char *text, const char *name, int64_t *out, char *why,
                          size_t whysize);

/* The C parameter type of each, as kernel-api.md gives it. */
extern const char *const nopi_argtype_ctypes[4];

/* True when s is a C identifier. */
bool nopi_is_identifier(const char *s);
/* flags.c: true when a function name is one the generated glue defines itself: nt__... and
 * the exported descriptor, neuronop_library (gen.c). */
bool nopi_is_glue_name(const char *s);

/* manifest.c: 0 when the build folder resolves inside the library folder (symlinks
 * resolved), else -1 with err filled at build_directory (NOP_ERR_INPUT): a manifest may not
 * send its outputs elsewhere; only the command line can (nop_build_opts.build_dir). */
int nopi_build_dir_check(const nop_manifest *m, nop_error *err);
/* manifest.c: 0 when every source and include folder resolves inside library_dir (NULL: the
 * manifest's folder; include folders may also be the system's /usr/include), else -1 with
 * err filled at the first that does not (NOP_ERR_INPUT). */
int nopi_manifest_check_paths(const nop_manifest *m, const char *library_dir, nop_error *err);

#endif /* NEURONOP_MANIFEST_H */
