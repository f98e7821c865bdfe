/*
 * libneuronop.h - the one public header of libneuronop.
 *
 * libneuronop loads manifests, builds op libraries with libtcc, loads built libraries and runs
 * their ops on a virtual GPSIMD core array.  The neuronop command is a thin client of it.
 *
 * Conventions (libtcc and libyaml are the models):
 *   - Public names start with nop_ (internal ones, in lib/base/internal.h, with nopi_).
 *   - Objects are opaque and come in pairs: nop_X_new/nop_X_load/nop_X_open creates,
 *     nop_X_free/nop_X_close destroys; *_free(NULL) is a no-op.
 *   - Functions that can fail return 0 on success and -1 on failure, filling the caller's
 *     nop_error (which may be NULL when the caller does not care).
 *   - The library never prints and never calls exit(): warnings and progress go to a
 *     caller-supplied nop_diag_fn.
 *   - Its state lives in the objects it hands out, so two devices in one process do not
 *     interfere.  What is process-wide by nature, and why it does not break that:
 *       * Signal handlers: a process has one handler per signal, so running a kernel
 *         installs, once, handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGXCPU (and
 *         records the handlers they replace).  They act only on a thread that is running
 *         kernel code for some device, through that thread's own record of its core
 *         (thread-local), and pass every other signal to the handler that was there before,
 *         so a program's own handlers keep working; install yours before the first run if
 *         you want them chained.  With nop_device_opts.isolate the kernels run in a worker
 *         process, which installs them (and SIGSYS, for seccomp) there, not in yours.
 *       * A thread running kernel code has an alternate signal stack of its own while it
 *         does; the one it had is put back after.
 *       * With isolate, each run forks the calling process: every stdio stream is flushed
 *         first (fflush(NULL)), so nothing the program buffered is written twice, and the
 *         worker is reaped by its pid, so SIGCHLD must not be ignored (SIG_IGN; nor while
 *         building, whose compilers are waited for the same way: the tool gives SIGCHLD its
 *         default action, whatever it was started with); a killed
 *         worker's process group is reaped too, of the processes the program adopted (a
 *         PR_SET_CHILD_SUBREAPER program does, as the neuronop tool is: no zombie is left).
 *       * libtcc serialises its compiles with a lock of its own: builds from several
 *         threads are correct but run one at a time.
 */
#ifndef LIBNEURONOP_H
#define LIBNEURONOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NOP_VERSION "0.1.0"

/* ---- errors and diagnostics ------------------------------------------------------------ */

/*
 * What kind of failure an error record describes.  The library says what went wrong; how a
 * program reports it is the program's business (the neuronop command maps each kind to an
 * exit status in one table, cmd/neuronop/report.c).
 */
enum nop_errkind {
    NOP_ERR_NONE = 0,   /* no error (a zeroed record) */
    NOP_ERR_NOMEM,      /* out of memory, or a system resource (a thread, a mapping) */
    NOP_ERR_INPUT,      /* a bad input: argument, manifest, profile, .npy file, generator */
    NOP_ERR_COMPILE,    /* the user's sources did not compile or link */
    NOP_ERR_DEVICE,     /* the op failed on the device: a broken rule, a crash, a timeout */
    NOP_ERR_TEST,       /* a test failed: the values are not the expected ones */
};

enum nop_severity { NOP_SEV_ERROR, NOP_SEV_WARNING, NOP_SEV_NOTE };

/*
 * One message about one place.  `file` (with 1-based `line` and `col`, 0 when unknown) names
 * an input file; `where` names a device context ("relu_forward: core 7"); both may be empty.
 * `detail` holds further lines shown under the message (a source excerpt, a hint).  Every
 * record the library hands out is plain text, whatever file names, sources or user code put
 * in it: valid UTF-8 without control characters (but newline and tab in `detail`),
 * bidirectional controls or line separators (U+2028, U+2029), each other byte shown as
 * '?', so that printing it can hide or fake no line on a terminal or in a log viewer.
 */
typedef struct nop_diag {
    enum nop_severity severity;
    char file[1024];
    int line, col;
    char where[256];
    char msg[1024];
    char detail[2048];
} nop_diag;

/* What ended a failed device call, for a caller that tells failures apart (the Python package
 * raises one exception class per kind) without reading their words: set where the failure is
 * found (a core's end, the seccomp trap, the worker's watcher), carried in the error record. */
enum nop_fault {
    NOP_FAULT_NONE,      /* not a device failure: err->kind says what it is */
    NOP_FAULT_RULE,      /* the op broke a device rule (bad access, abort, wrong output...) */
    NOP_FAULT_CRASH,     /* user code crashed: a signal in its code or in a runtime call */
    NOP_FAULT_STACK,     /* the kernel overflowed its STACK_SIZE */
    NOP_FAULT_TIMEOUT,   /* user code ran past its time limit and was stopped */
    NOP_FAULT_SYSCALL,   /* user code made a system call the device does not have */
    NOP_FAULT_WORKER,    /* the worker process died, exited or sent a malformed report */
    NOP_FAULT_HOST,      /* neuronop could not run the op (threads, mappings, its worker) */
};
/* The error record filled by a failing call: what kind of failure, and the diagnostic. */
typedef struct nop_error {
    enum nop_errkind kind;
    enum nop_fault fault;   /* with NOP_ERR_DEVICE, what ended the run: read nop_error_fault */
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

/* A test case of the manifest (neuronop test).  Pointers stay valid with the manifest. */
typedef struct nop_testinfo {
    const char *name;
    const char *op;
    int nargs;
    const char *const *alts[NOP_MAX_ARGS];   /* alts[i]: the values argument i takes in turn */
    int nalts[NOP_MAX_ARGS];
    const char *expect;        /* a .npy path, or NULL */
    const char *reference;     /* a reference function (reference_srcs), or NULL */
    double rtol, atol;         /* negative: the expected dtype's default */
    const int *cores;          /* core counts to run on; ncores 0: the profile's */
    int ncores;
    int line;                  /* where the case is in the manifest */
} nop_testinfo;

int nop_manifest_test_count(const nop_manifest *m);
int nop_manifest_test(const nop_manifest *m, int i, nop_testinfo *out);

/* The manifest name of an arg type ("tensor", "scalar", "double", "int64"). */
const char *nop_argtype_name(enum nop_argtype t);
/* An op's signature as neuronop writes it everywhere, "relu_scaled(tensor, double)", cut to
 * fit buf. */
void nop_signature(const nop_opinfo *op, char *buf, size_t size);

/* The candidate closest to word by edit distance, or NULL when none is close enough to
 * suggest ("did you mean"). */
const char *nop_closest(const char *word, const char *const *candidates, size_t n);

/* Default and limits of STACK_SIZE (gpsimd.md). */
#define NOP_STACK_DEFAULT_BYTES 6144
#define NOP_STACK_MAX_BYTES 409600
/* The room the runtime's own calls get below a kernel's deepest frame: a kernel's stack
 * high-water mark (nop_core_report) counts their frames, and stays within its STACK_SIZE
 * up to STACK_SIZE plus this (512 bytes; more in a sanitizer build, whose frames are
 * larger). */
size_t nop_stack_runtime_bytes(void);

/* ---- building -------------------------------------------------------------------------- */

typedef struct nop_build_opts {
    const char *share_dir;     /* share/neuronop: holds include/neuronop.h (required) */
    const char *tcc_dir;       /* tcc's lib dir (libtcc1.a, include/); NULL: search */
    bool force;                /* rebuild even when up to date */
    bool memcheck;             /* instrument kernels for memcheck: builds libNAME.memcheck.so */
    double lock_timeout;       /* seconds to wait for another build of the same dir, or
                                * one making the precompiled header this one needs; 0: 60 */
    nop_diag_fn *diag;         /* warnings and, with verbose, each compile step; may be NULL */
    void *diag_ctx;
    bool verbose;              /* report each compile step as a NOP_SEV_NOTE */
    const char *compiler;      /* "tcc" or "cc": overrides the manifest's compiler; NULL */
    /* Each compile runs in a child process with these limits (0: the defaults, 60 s of CPU
     * and 2048 MB of address space); past one, the build fails "went past N s" (N MB). */
    unsigned compile_seconds, compile_mb;
    const char *build_dir;     /* overrides the manifest's build_directory; NULL */
    const char *library_dir;   /* the folder sources must be in; NULL: the manifest's */
    bool compile_in_process;   /* measurement only (bench): libtcc in this process, unbounded */
} nop_build_opts;

typedef struct nop_build_result {
    char lib_path[1024];       /* the built (or up-to-date) library */
    bool up_to_date;           /* nothing was compiled */
    double seconds;            /* wall time of the whole build call */
    int compiled;              /* translation units compiled */
    int cached;                /* objects taken from the compile cache instead */
} nop_build_result;

/* Builds the manifest's library, or finds it up to date. */
int nop_build(const nop_manifest *m, const nop_build_opts *opts, nop_build_result *res,
              nop_error *err);

/* Finds tcc's runtime directory (libtcc1.a): NEURONOP_TCC_DIR, then the usual places.
 * Writes it to buf; -1 with an error naming the package to install when absent. */
int nop_find_tcc_dir(char *buf, size_t size, nop_error *err);

/* ---- tensors ----------------------------------------------------------------------------- */

/* A host tensor: the kernel API's nt_tensor as libneuronop's callers see it. */
typedef struct nt_tensor nop_tensor;

/* Element types; the same values as the kernel API's nt_dtype. */
enum nop_dtype { NOP_F32, NOP_BF16, NOP_F16, NOP_I32, NOP_I8, NOP_I64, NOP_I16, NOP_U8 };

void nop_tensor_free(nop_tensor *t);
enum nop_dtype nop_tensor_dtype(const nop_tensor *t);
int nop_tensor_ndim(const nop_tensor *t);
const int64_t *nop_tensor_sizes(const nop_tensor *t);
int64_t nop_tensor_numel(const nop_tensor *t);
/* Element i of the flattened tensor, as a double; and of an integer tensor, exactly (an
 * int64 past 2^53 is not a double). */
double nop_tensor_get(const nop_tensor *t, int64_t i);
int64_t nop_tensor_get_int(const nop_tensor *t, int64_t i);
/* "float32", "bfloat16", ...; and "32x4096" (a buffer of at least 96 bytes). */
const char *nop_dtype_name(enum nop_dtype d);
void nop_tensor_shape_str(const nop_tensor *t, char *buf, size_t size);

/* Reads a .npy file: versions 1-3, C or Fortran order, little-endian, the 8 device dtypes
 * (bfloat16 as ml_dtypes saves it: a 2-byte void, '<V2', or 'bfloat16').  Every problem is an
 * input error naming the file. */
int nop_tensor_load_npy(nop_tensor **out, const char *path, nop_error *err);
/* Writes a .npy file (version 1.0, C order) as nop_write_file writes. */
int nop_tensor_save_npy(const nop_tensor *t, const char *path, nop_error *err);
/* The Landlock ABI version with which workers confine what user code may read (its library,
 * the library folder, the system's libraries; neuronop-run(1), TRUST): above 0 where the
 * kernel has Landlock; 0 where it has not (Linux before 5.13, or not enabled), and workers
 * read what the user can; -1 when NEURONOP_LANDLOCK=off turns it off. */
int nop_landlock_abi(void);

/* Writes len bytes to path as neuronop writes every output: a new or regular file, or a
 * symlink to a regular file or to nothing, through a temporary file beside it and rename(2),
 * so a reader never sees half of it and a planted link redirects nothing; a device, FIFO or
 * terminal (directly or through a link) and /dev/stdout in place, as a shell's > would,
 * never replaced.  0, or -1 with err filled (an input error naming path). */
int nop_write_file(const char *path, const void *data, size_t len, nop_error *err);

/* Makes a tensor from a generator spec: KIND:SHAPE[:DTYPE], with KIND randn, rand, zeros,
 * ones or arange (arange:N), or full:SHAPE:VALUE[:DTYPE]; SHAPE like 32x4096; DTYPE a name or
 * suffix, default float32 (int64 for arange of integers is not implied: give :i64).  Random
 * kinds draw from a generator seeded with seed, so a seed repeats a tensor exactly. */
int nop_tensor_generate(nop_tensor **out, const char *spec, uint64_t seed, nop_error *err);
/* True when spec looks like a generator (KIND: with a known KIND) rather than a file name. */
bool nop_is_generator(const char *spec);

/* Summary statistics over finite elements (NaN when there is none); nonfinite counts the
 * others. */
typedef struct nop_tensor_stats {
    double min, max, mean;
    int64_t nonfinite;
} nop_tensor_stats;
void nop_tensor_stats_of(const nop_tensor *t, nop_tensor_stats *st);

/* Compares got with want elementwise as torch.isclose(equal_nan=True) does: finite elements
 * match when |got - want| <= atol + rtol * |want| with the error finite in got's dtype (in
 * float16, 60000 and -60000 differ by an infinity), integers are compared exactly, NaN
 * matches NaN, and an infinity matches only the same infinity.  Fills the number
 * of mismatches and up to `nworst` worst elements (flat indices, largest error first).  Shape
 * or dtype differences are reported in why (and count as a mismatch). */
typedef struct nop_mismatch {
    int64_t index;
    double got, want, error;
} nop_mismatch;
typedef struct nop_compare {
    int64_t mismatches;
    double max_abs_error;
    int nworst;
    nop_mismatch worst[8];
    char why[256];
} nop_compare;
void nop_tensor_compare(const nop_tensor *got, const nop_tensor *want, double rtol, double atol,
                        nop_compare *res);
/* The index of t's element at flat index i, one number a dimension, into buf: "[1, 367]"
 * ("[]" for a 0-dimensional tensor); cut to fit size bytes. */
void nop_tensor_index_str(const nop_tensor *t, int64_t i, char *buf, size_t size);
/* torch.testing's default tolerances for comparing outputs of dtype d (0 and 0, exact, for
 * the integer types). */
void nop_default_tolerances(enum nop_dtype d, double *rtol, double *atol);

/* ---- device profiles --------------------------------------------------------------------- */

typedef struct nop_profile nop_profile;

/* Loads a profile by name (share_dir/devices/NAME.yaml) or path.  Problems are reported at
 * file:line:col like manifest problems. */
int nop_profile_load(nop_profile **out, const char *name, const char *share_dir,
                     nop_error *err);
void nop_profile_free(nop_profile *p);
const char *nop_profile_name(const nop_profile *p);
int nop_profile_cores(const nop_profile *p);

/* ---- the virtual device ------------------------------------------------------------------ */

typedef struct nop_device nop_device;
typedef struct nop_library nop_library;   /* a built op library, below */

/* In which order virtual cores run.  Real cores never synchronise, so every order is legal;
 * all but parallel run one core at a time in a fixed order, so a failing order replays. */
enum nop_schedule {
    NOP_SCHED_PARALLEL,    /* cores spread over the host threads, in any order */
    NOP_SCHED_SEQUENTIAL,  /* core 0, 1, 2, ... */
    NOP_SCHED_REVERSED,    /* the last core first */
    NOP_SCHED_SHUFFLE,     /* an order drawn from the seed */
};

/* Device checks that can be turned off (--no-check).  The others - tensor and TCM bounds,
 * dtypes, shape functions touching data, stacks, crashes, time - are always on: without them
 * a kernel could corrupt neuronop's own memory. */
enum nop_check {
    NOP_CHECK_RACE = 1 << 0,       /* output elements written by two cores (an error) */
    NOP_CHECK_UNWRITTEN = 1 << 1,  /* output elements written by no core (an error) */
    NOP_CHECK_INIT = 1 << 2,       /* output read before it was written (an error) */
    NOP_CHECK_DST = 1 << 3,        /* a multicore kernel never calls get_dst_tensor (error) */
    NOP_CHECK_MULTICORE = 1 << 4,  /* standard or streaming accessors in multicore (error) */
    NOP_CHECK_COHERENCE = 1 << 5,  /* possibly incoherent access, per the tensor's policy */
    NOP_CHECK_READONLY = 1 << 6,   /* writes to an input (an error) */
    NOP_CHECK_LEAK = 1 << 7,       /* TCM still allocated at kernel exit (a warning) */
    NOP_CHECK_STREAMS = 1 << 8,    /* more streams open than are fast (a warning) */
    NOP_CHECK_PRINTF = 1 << 9,     /* printf from a core other than 0 in multicore (warning) */
    NOP_CHECK_ALL = (1 << 10) - 1,
};
/* The check called name ("race", ..., or "all"), or 0 when there is none. */
unsigned nop_check_parse(const char *name);
/* Names of the checks, NULL-terminated, in bit order. */
extern const char *const nop_check_names[];

typedef struct nop_device_opts {
    int threads;              /* host threads for parallel runs; 0: one per host CPU */
    enum nop_schedule schedule;
    uint64_t seed;            /* for NOP_SCHED_SHUFFLE */
    int cores;                /* cores for multicore ops; 0: the profile's count */
    double timeout;           /* seconds a core may run; 0: the profile's */
    unsigned disabled_checks; /* enum nop_check bits turned off; 0: every check on */
    bool profile;             /* time runtime calls by category (for the cost model) */
    bool trace;               /* record each core's timeline (nop_run_result.trace); implies
                               * profile */
    nop_diag_fn *diag;        /* device warnings, as they happen; may be NULL */
    void *diag_ctx;
    bool isolate;             /* run user code (kernels, shape and reference functions) in a
                               * worker process confined with seccomp, so that no kernel can
                               * crash, hang or exit the caller; the caller keeps the verdict
                               * (traced runs too: their recordings come back as records) */
    bool keep_worker;         /* with isolate: one long-lived zygote process per library,
                               * forked from the caller at its first run, serves every run of
                               * the device; its confined child loads the library by its path,
                               * reads the inputs from a memfd sent with the request, and is put
                               * back after each run to the state it had before the first (or
                               * replaced when it cannot be): for callers that make many runs,
                               * a language binding */
} nop_device_opts;

/* The device keeps the profile pointer: free the profile after the device. */
int nop_device_new(nop_device **out, const nop_profile *profile, const nop_device_opts *opts,
                   nop_error *err);
void nop_device_free(nop_device *dev);

/* One op argument. */
typedef struct nop_value {
    enum nop_argtype type;
    const nop_tensor *tensor;  /* NOP_ARG_TENSOR */
    double d;                  /* NOP_ARG_DOUBLE, or NOP_ARG_SCALAR when !is_int */
    int64_t i;                 /* NOP_ARG_INT64, or NOP_ARG_SCALAR when is_int */
    bool is_int;
    bool is_bool;              /* NOP_ARG_SCALAR with is_int: a bool (i is 0 or 1), which
                                * ATen keeps apart from an int (torch.sub(t, True) is
                                * refused) */
} nop_value;

/* What one core did (the cost model's inputs). */
typedef struct nop_counters {
    int64_t std_elems;          /* elements through standard accessors */
    int64_t stream_elems;       /* through streams while at most fast_streams were open */
    int64_t stream_slow_elems;  /* ... while more were open (standard-accessor speed) */
    int64_t tcm_bytes;          /* bytes copied between tensors and TCM */
    int64_t tcm_transfers;
    int64_t streams_opened;
    int64_t tensorlib_calls, tensorlib_elems;
    int64_t printf_calls;
    int64_t tcm_peak;           /* most TCM bytes allocated at once */
} nop_counters;

/* Where a core's host time went, for the cost model: its own code (compute) and each kind of
 * runtime call. */
enum nop_cost_category {
    NOP_COST_COMPUTE,     /* the kernel's own code: the core's time less its runtime calls */
    NOP_COST_STD,         /* standard accessors */
    NOP_COST_STREAM,      /* streaming accessors */
    NOP_COST_TCM,         /* TCM copies, tcm_malloc and tcm_free */
    NOP_COST_TENSORLIB,   /* the tensor library */
    NOP_COST_PRINTF,
    NOP_COST_OTHER,       /* shape queries, get_cpu_id, ... */
    NOP_COST_CATEGORIES
};

typedef struct nop_core_report {
    int id;
    bool failed;
    size_t stack_high_water;    /* bytes of its stack the kernel (and its calls) used */
    double seconds;             /* host time, from start to end */
    nop_counters counters;
    /* with nop_device_opts.profile: host seconds by category, on a CPU (the core's thread
     * CPU time shared out in proportion to wall time, so other work on the machine counts in
     * none; NOP_COST_COMPUTE is what the runtime calls leave); all zero otherwise */
    double category_seconds[NOP_COST_CATEGORIES];
} nop_core_report;

typedef struct nop_trace nop_trace;   /* a traced run's recording: nop_trace_save */

typedef struct nop_run_result {
    nop_tensor *output;         /* NULL when the run failed */
    char *printf_text;          /* kernel printf output, in order; "" when none */
    bool printf_lost;           /* the ring overflowed: the oldest output was overwritten */
    int ncores;                 /* cores that ran: 0 when the run failed before its kernel
                                 * started (its shape function failed) */
    nop_core_report *cores;
    size_t stack_size;          /* the library's STACK_SIZE */
    int threads;                /* host threads that ran the cores */
    double seconds;             /* host time of the whole run */
    nop_trace *trace;           /* with nop_device_opts.trace: the cores' timelines */
} nop_run_result;

/* Runs op (an index into lib's ops) with args on the device.  Arguments that do not match
 * the op's signature are an input error (NOP_ERR_INPUT); a broken device rule, a crash or a
 * timeout fails the run (NOP_ERR_DEVICE) with the op and core in err->diag.where, after
 * reporting any other failing cores through the diag sink.  res is filled either way (printf
 * output and per-core reports are worth showing after a failure); release it with
 * nop_run_result_clear. */
int nop_device_run(nop_device *dev, const nop_library *lib, int op, const nop_value *args,
                   int nargs, nop_run_result *res, nop_error *err);
void nop_run_result_clear(nop_run_result *res);

/*
 * Makes op arguments from strings as the command line and manifest tests write them: a
 * number for scalar, double and int64, read as Python's int() and float() read it (decimal;
 * a scalar is an int64 when it is a whole number, one outside int64 refused, and True or
 * False a bool); a
 * .npy file or a generator spec for a tensor, the i-th generator seeded with seed + i.  On
 * success *op is the index of the op called opname, *vals holds argc values and *tensors
 * the tensors made for them (NULL where an argument is a number); release both with
 * nop_values_free, which is also safe after a failure.  An unknown op (with the closest name
 * and the library's ops), a wrong count or a value that does not parse (each with the op's
 * signature in the detail) is an input error; so is a bad .npy file or generator.
 */
int nop_values_parse(const nop_library *lib, const char *opname, int argc,
                     const char *const *argv, uint64_t seed, int *op, nop_value **vals,
                     nop_tensor ***tensors, nop_error *err);
void nop_values_free(nop_value *vals, nop_tensor **tensors, int n);

/* Runs reference function ref of lib (see nop_library_find_reference) with its op's args:
 * plain host code, on one core, held to no toggleable device rule; its output is the answer
 * the op's kernel is compared with. */
int nop_device_run_reference(nop_device *dev, const nop_library *lib, int ref,
                             const nop_value *args, int nargs, nop_run_result *res,
                             nop_error *err);

/* ---- test cases (neuronop test) --------------------------------------------------------- */

enum nop_test_status { NOP_TEST_PASSED, NOP_TEST_FAILED, NOP_TEST_ERRORED, NOP_TEST_SKIPPED };
#define NOP_TEST_MAX_SHUFFLES 37

/* One sub-case's outcome: a case, or one combination of its arguments' alternatives. */
typedef struct nop_test_result {
    char label[512];            /* the case's name, or name[v1, v2] for a sub-case */
    const char *op;             /* valid with the manifest */
    enum nop_test_status status;
    char message[2048];         /* why it failed, its first line a summary; "" if it passed */
    int executions;             /* executions run (core counts x schedules) */
    double seconds;
} nop_test_result;

typedef struct nop_test_opts {
    const char *filter;         /* run only the sub-cases whose label (nop_test_result's)
                                 * contains it; NULL: all */
    int shard, nshards;         /* run the shard-th (1-based) of nshards slices of the
                                 * sub-cases (sub-case k of the suite, in manifest order, is
                                 * slice k mod nshards + 1's); nshards 0: all */
    int shuffles;               /* shuffled schedules per core count, 0..NOP_TEST_MAX_SHUFFLES,
                                 * besides sequential, reversed and parallel */
    uint64_t seed;              /* for generators and shuffles */
    int threads;                /* as in nop_device_opts */
    double timeout;
    unsigned disabled_checks;
    bool isolate;               /* run user code in worker processes (nop_device_opts) */
    nop_diag_fn *diag;          /* device warnings, and the errors that fail cases, as they
                                 * happen; may be NULL */
    void *diag_ctx;
    /* each sub-case's result, in manifest order, those the filter skipped included (another
     * shard's are not this run's: neither reported nor counted); r is valid during the call
     * only */
    void (*on_result)(void *ctx, const nop_test_result *r);
    void *ctx;
} nop_test_opts;

typedef struct nop_test_summary {
    int passed, failed, errored, skipped;
} nop_test_summary;

/* Whether every core count m's test cases ask for is one profile's device has (a manifest
 * allows up to 64, not knowing the device): 0, or -1 with err at the first count that is
 * not.  nop_test_run checks it too; a caller may check before building. */
int nop_manifest_check_cores(const nop_manifest *m, const nop_profile *profile, nop_error *err);

/*
 * Runs the test cases of manifest m against lib, built from it, on profile's device.  Every
 * sub-case runs on each of its core counts under the sequential, reversed, parallel and
 * `shuffles` shuffled schedules, and passes when no device rule breaks, all executions agree
 * and the output matches its reference function or expect file within the tolerances.
 * Returns 0 when the suite ran, whatever its results (in *sum and through on_result); -1 with
 * err filled when it could not run (bad options, no memory).
 */
int nop_test_run(const nop_manifest *m, const nop_library *lib, const nop_profile *profile,
                 const nop_test_opts *opts, nop_test_summary *sum, nop_error *err);

/* How many CPUs this process may keep busy at once: its CPU affinity's count, or its
 * cgroups' CPU bandwidth limit when that is lower (a container's CPU quota, which the
 * affinity does not show; a fraction, such as 1.5).  With isolate, nop_test_run runs each
 * case's reference in its worker alongside the case's executions when this is at least
 * NOP_TEST_ALONGSIDE_CPUS, and after them otherwise (on one CPU, a reference computing
 * beside an honest kernel would only take its time). */
double nop_cpus_usable(void);
#define NOP_TEST_ALONGSIDE_CPUS 2.0

/* ---- benchmarking ------------------------------------------------------------------------ */

typedef struct nop_bench_opts {
    int warmup;               /* untimed runs first */
    int iters;                /* timed runs; 0: run until `seconds` have passed */
    double seconds;           /* with iters 0: how long to keep running */
    /* called after each timed run with how many are done and the total (0: open-ended) */
    void (*progress)(void *ctx, int done, int total, double elapsed);
    void *progress_ctx;
} nop_bench_opts;

typedef struct nop_bench_result {
    int runs;                 /* timed runs */
    double *seconds;          /* each timed run's host time, in order (malloc'd) */
    double mean, sd, median, min, max, p90, p99;   /* over the timed runs, seconds */
    double total;             /* sum of the timed runs */
    nop_run_result fastest;   /* the fastest timed run's result: its cores, counters and
                               * host times, the least disturbed by other work on the host,
                               * so the cost model's compute term is scaled from it */
} nop_bench_result;

/* Runs op `warmup` times untimed, then times `iters` runs (or runs for `seconds`).  A timed
 * run is one nop_device_run: binding the arguments, the shape function, the kernel on every
 * core and the output checks; not making the inputs (done once by the caller) nor freeing
 * the output.  Any failing run stops the benchmark with its error, res left empty. */
int nop_bench(nop_device *dev, const nop_library *lib, int op, const nop_value *args,
              int nargs, const nop_bench_opts *opts, nop_bench_result *res, nop_error *err);
void nop_bench_result_clear(nop_bench_result *res);

/* The cost model: a run's per-core counters and host times, turned into device cycles by
 * the profile's costs (neuronop-bench(1) gives the formula).  Per core:
 *   compute cycles (host compute time * reference_loop_cycles / host ns per reference
 *   element, * slow_stack_factor when STACK_SIZE is over the profile's default)
 *   + std_elems * std_access_cycles
 *   + stream_elems * stream_access_cycles + stream_slow_elems * std_access_cycles
 *   + tcm_transfers * tcm_transfer_cycles + tcm_bytes / tcm_bytes_per_cycle
 *   + tensorlib_elems * tensorlib_elem_cycles + printf_calls * printf_cycles;
 * the op: launch_cycles + the slowest core. */
enum { NOP_MODEL_LAUNCH = NOP_COST_CATEGORIES };   /* the extra row of category_cycles */
typedef struct nop_model {
    int ncores;
    double core_cycles[64];
    double category_cycles[NOP_COST_CATEGORIES + 1];   /* summed over cores, and launch */
    int slowest;                 /* the core that sets the op's time */
    double cycles;               /* launch + slowest core */
    double seconds, throughput;  /* at the profile's clock */
    double cycles_per_host_ns;   /* the host-speed factor applied to compute */
} nop_model;
/* Needs a run made with nop_device_opts.profile. */
void nop_model_run(const nop_profile *p, const nop_run_result *r, double host_ns_per_element,
                   nop_model *m);

/* ---- traces (neuronop bench --trace) ------------------------------------------------------ */

enum nop_trace_clock { NOP_TRACE_MODELED, NOP_TRACE_HOST };

typedef struct nop_trace_info {
    int64_t spans;              /* spans the cores made */
    int64_t drawn;              /* of them, written as events (each core keeps its first 2000) */
} nop_trace_info;

/* Writes r's trace (a run with nop_device_opts.trace) to path as Chrome trace-event JSON,
 * which Perfetto and chrome://tracing load: one track per core with its kernel run, TCM
 * copies, tensor-library calls, printf calls and stream lifetimes, on the device clock of
 * model m (made from r by nop_model_run) or on the host clock.  Spans past each core's limit
 * are counted in its kernel span's args.  The file appears whole or not at all.  Returns 0
 * with *info filled, or -1 with err filled (NOP_ERR_INPUT: cannot write). */
int nop_trace_save(const nop_run_result *r, const nop_profile *p, const nop_model *m,
                   enum nop_trace_clock clock, const char *opname, const char *path,
                   nop_trace_info *info, nop_error *err);

/* An earlier `neuronop bench --json` report, as a baseline: its throughputs, and what it
 * measured, so a comparison with another op, device, input or core count is refused.  The
 * strings are "" (and cores 0) when the report predates them. */
typedef struct nop_baseline {
    double host_throughput, modeled_throughput;
    char library[128];          /* the library's name (its manifest's); "" in an older report */
    char op[128], device[128];
    char inputs[2048];          /* the op's arguments as given, space-separated */
    int cores;
    int memcheck;               /* 1 or 0: a --memcheck run or not; -1: the report does not say */
} nop_baseline;

/* Reads the report at path into *b.  Returns 0, or -1 with err filled (NOP_ERR_INPUT: not
 * readable, not JSON, or not a bench report, at its line and column where known). */
int nop_bench_baseline_load(const char *path, nop_baseline *b, nop_error *err);

/* What nop_tensor_hugepages did. */
enum nop_hugepages { NOP_HUGEPAGES_SMALL, NOP_HUGEPAGES_REFUSED, NOP_HUGEPAGES_GRANTED };
/* Moves a tensor's data, when 2 MiB or more and not in huge pages already, to memory
 * advised for transparent huge pages.
 * *state says whether the tensor was too small, or whether the kernel gave any huge page
 * (madvise is only a request).  Returns 0, or -1 (out of memory) with err filled. */
int nop_tensor_hugepages(nop_tensor *t, enum nop_hugepages *state, nop_error *err);

/* The host's speed at kernel code: nanoseconds of CPU time per element of a fixed relu loop
 * compiled by libtcc (the cost model's reference loop).  tcc_dir may be NULL (searched). */
int nop_host_speed(const char *tcc_dir, double *ns_per_element, nop_error *err);

/* ---- built libraries ------------------------------------------------------------------- */

/* Loads a built library and checks its descriptor (magic, ABI version).  Loading runs the
 * library's constructors, if it has any (neuronop refuses them in what it builds): open only
 * what is about to be run. */
int nop_library_open(nop_library **out, const char *path, nop_error *err);
/* Reads a built library's self-description from its file without loading it, so no code of
 * it runs: its metadata (name, ops, JSON, ...) is there, its code is not, and running an
 * op of it is an input error.  Close it with nop_library_close. */
int nop_library_describe(nop_library **out, const char *path, nop_error *err);
void nop_library_close(nop_library *lib);

/* The library's metadata as a JSON object (malloc'd, caller frees); NULL on no memory. */
char *nop_library_json(const nop_library *lib);

const char *nop_library_name(const nop_library *lib);
/* The namespace of a C++ library's NEURON_LIBRARY(ns, m), or NULL. */
const char *nop_library_namespace(const nop_library *lib);
const char *nop_library_path(const nop_library *lib);
/* Whether the file at lib's path is not (or no longer) the one lib was opened or described
 * from: rebuilt, replaced or gone since, as far as stat tells.  A long-lived caller (a
 * language binding's supervisor) opens it again then, to run the new code. */
bool nop_library_changed(const nop_library *lib);
bool nop_library_multicore(const nop_library *lib);
/* Built with --memcheck: its kernels report their own out-of-bounds accesses when run. */
bool nop_library_memcheck(const nop_library *lib);
int64_t nop_library_stack_size(const nop_library *lib);
int nop_library_op_count(const nop_library *lib);
int nop_library_op(const nop_library *lib, int i, nop_opinfo *out);
/* Index of the op called name, or -1. */
int nop_library_find_op(const nop_library *lib, const char *name);
/* Index of the reference function called name, or -1. */
int nop_library_find_reference(const nop_library *lib, const char *name);

/* ---- for bindings: tensors in the caller's memory (the Python bridge) ------------------- */

/* Makes *out a tensor of dtype and shape over size bytes of the caller's memory at data, in C
 * order, without a copy: the device reads it (kernels see read-only views) and never writes
 * it.  The memory must outlive the tensor.  -1 with an input error when the shape is not a
 * device shape or needs more than size bytes.  Release it with nop_tensor_unwrap, which frees
 * the record and leaves the memory alone (never nop_tensor_free). */
int nop_tensor_wrap(nop_tensor **out, enum nop_dtype dtype, int ndim, const int64_t *sizes,
                    const void *data, size_t size, nop_error *err);
void nop_tensor_unwrap(nop_tensor *t);
/* A tensor's elements, in C order, and how many bytes they take (an output's, to copy it
 * out whole). */
const void *nop_tensor_data(const nop_tensor *t);
size_t nop_tensor_nbytes(const nop_tensor *t);
/* The name of parameter k of op as the source that defines its kernel (else its shape
 * function) spells it, for keyword calls, copied into buf; false when the library does not
 * record it (built by an older neuronop, or a parameter both leave unnamed or name other
 * than plainly) or it does not fit.  `neuronop inspect` shows them as each op's "argnames". */
bool nop_library_op_argname(const nop_library *lib, int op, int k, char *buf, size_t size);

/* ---- for bindings: what kind of failure an error is ------------------------------------- */

/* The kind of a failure nop_device_run (or a call that runs user code) reported in err (its
 * `fault`): NOP_FAULT_NONE unless err->kind is NOP_ERR_DEVICE, and NOP_FAULT_RULE for a device
 * failure whose record names no other kind (or one out of range: a worker's record is its
 * own account). */
enum nop_fault nop_error_fault(const nop_error *err);

#endif /* LIBNEURONOP_H */
