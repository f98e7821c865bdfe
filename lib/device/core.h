/*
 * core.h - what every part of the virtual GPSIMD core array shares (internal to lib/device):
 * a run, its cores, and the few services any part calls on a core.  It is the bottom of the
 * device: it includes only base/ and the leaf headers library.h, profile.h and trace.h, and
 * every other file of the folder builds on it (fiber.h, pool.h, outtrack.h, api_impl.h);
 * device.c, the top, runs ops through them and has no header of its own beyond the public
 * nop_device_* API.
 *
 * Ownership, outermost first:
 *   nop_device   a profile and run options; runs ops one at a time (device.c)
 *   nopi_run     one op execution: inputs, the output, the printf ring, the cores (device.c)
 *   nopi_core    one virtual core of a run: its stack, TCM pool, streams, counters, the
 *                tensors its kernel made, and how it ended (device.c, api.c)
 *   nopi_worker  one host thread executing cores one after another on their own stacks
 *                (fiber.c); a thread-local pointer to it is how the kernel API, which has no
 *                context parameter, finds the core it runs for.
 *
 * Nothing here is process-wide except the fault handlers, which must be (fiber.c): they act
 * only for the thread whose worker is running kernel code and chain to whatever handler was
 * there before otherwise, so two devices in one process do not interfere.
 */
#ifndef NEURONOP_CORE_H
#define NEURONOP_CORE_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <ucontext.h>

#include "library.h"
#include "profile.h"
#include "base/tensor.h"
#include "trace.h"

#define NOPI_MAX_TCM_BLOCKS 128
#define NOPI_MAX_STREAMS 64
#define NOPI_CXX_INPUT_REFS 8   /* C++ references into inputs compared at once (accessors.c) */
#define NOPI_MAX_CORES 64
/* The bytes of memory the device leaves undefined (TCM when a kernel starts, the elements of
 * nt_empty): NaN in every float dtype and -1 in the signed ones, so that a kernel reading
 * them before writing gets an answer that shows, where zeros could pass for right. */
#define NOPI_UNSET_BYTE 0xff

/* A kernel stack: usable bytes above a PROT_NONE guard far larger than any frame, because
 * tcc emits no stack probes (a 64 KB local array would step over one guard page). */
typedef struct nopi_stack {
    unsigned char *map;     /* the whole mapping: guard then stack */
    size_t map_size, guard;
    unsigned char *lo, *hi; /* the usable stack: [lo, hi) */
} nopi_stack;

/* Maps a stack of at least `usable` bytes above its guard into *s; 0, or -1 (s then holds
 * no stack: nopi_stack_free has nothing to unmap). */
int nopi_stack_alloc(nopi_stack *s, size_t usable);
/* Unmaps s's stack and zeroes s; a zeroed s (no stack) is left unwritten. */
void nopi_stack_free(nopi_stack *s);
/* Repaints the top `dirty` bytes (what a run may have written); the rest is still painted. */
void nopi_stack_repaint(nopi_stack *s, size_t dirty);
size_t nopi_stack_high_water(const nopi_stack *s);

typedef nop_counters nopi_counters;   /* what a core did (libneuronop.h) */

typedef struct nopi_tcm_block {
    uint32_t offset, size;      /* size: as allocated (aligned) */
    uint32_t req;               /* as requested: what the kernel may touch */
    int stream;                 /* -1: tcm_malloc; otherwise the stream holding it */
    const void *site;           /* tcm_malloc: where the kernel called it */
} nopi_tcm_block;

/* memcheck (memcheck.c): memory a kernel's pointer may point into. */
typedef enum nopi_mc_kind {
    NOPI_MC_TCM, NOPI_MC_LOCAL, NOPI_MC_ALLOCA, NOPI_MC_GLOBAL,
    NOPI_MC_RUNTIME             /* an array the runtime handed out (nt_sizes) */
} nopi_mc_kind;
typedef struct nopi_mc_region {
    uintptr_t start, size;
    nopi_mc_kind kind;
    const void *site;           /* TCM: tcm_malloc's caller; local, alloca: its function;
                                 * global, runtime: its name (a string), or NULL */
    long frame_off;             /* local: its offset from the frame pointer */
    uintptr_t fp;               /* local, alloca: the frame it lives in */
} nopi_mc_region;

/* A core's memcheck state: its kernel's live locals, innermost frame last. */
typedef struct nopi_memcheck {
    nopi_mc_region *locals;
    size_t nlocals, cap;
    nopi_mc_region arrays[16];  /* arrays the runtime handed out, the most recent 16 */
    size_t narrays;
} nopi_memcheck;

typedef struct nopi_stream {
    const nt_tensor *t;
    int64_t pos;
    bool write, open;
    int block;                  /* its 4 KB of TCM, or -1 when the pool had none */
    nopi_trace_point opened;    /* traced runs: where its lifetime span starts */
} nopi_stream;

/* Per tensor, per run: which accessors touched it (for the coherence rules). */
typedef struct nopi_track {
    int std_uses, read_streams, write_streams;
    bool warned;
} nopi_track;

/* Output elements [begin, end) a core wrote. */
typedef struct nopi_range {
    int64_t begin, end;
    int core;
} nopi_range;

typedef struct nopi_ranges {
    nopi_range *v;
    size_t n, cap;
} nopi_ranges;

typedef enum nopi_end {
    NOPI_END_OK, NOPI_END_ERROR, NOPI_END_CRASH, NOPI_END_STACK, NOPI_END_TIMEOUT
} nopi_end;

typedef struct nopi_run nopi_run;

typedef struct nopi_core {
    nopi_run *run;
    uint32_t id, count;
    bool shape_mode;            /* running a shape function on the host */
    bool host_stack;            /* a reference: host code on a host-sized stack, which has
                                 * no STACK_SIZE to keep (no paint, no high-water mark) */
    nopi_stack stack;
    ucontext_t fiber;
    bool fiber_ready;           /* fiber already holds a getcontext result to reuse */
    unsigned char *tcm;         /* the pool: run->profile->tcm_bytes */
    nopi_tcm_block blocks[NOPI_MAX_TCM_BLOCKS];
    int nblocks;
    int64_t tcm_used;
    size_t tcm_reach;           /* the end of the furthest block this run allocated, and
                                 * the bytes tcm.c looks at past it: what it checks, and
                                 * fills again, of the pool */
    nopi_stream streams[NOPI_MAX_STREAMS];
    int nstreams, open_streams;
    nopi_counters n;
    double api_seconds[NOP_COST_CATEGORIES];   /* host time in runtime calls (profiled runs) */
    int api_depth;              /* kernel API calls under way (one calls another) */
    const void *call_pc;        /* where the kernel called the one under way: the address
                                 * its call returns to; NULL between calls */
    nt_tensor *owned;           /* tensors the kernel made */
    nt_tensor *returned;        /* what the kernel returned */
    bool dst_called;
    bool whole_run;             /* its failure is the run's, not the core's: the op names it */
    nopi_ranges written;        /* the output elements it wrote (outtrack.c) */
    bool finished;              /* under run->diag_lock: its writes are final */
    bool warned_streams;
    /* The last C++ element reference taken through a writable accessor into anything but
     * an input (accessors.c, nt__cxx_ref): where it points, the element's flat index and
     * its bytes then, whether they were a never-written element's (zero, or the output's
     * pattern) and whether it follows a reference to the same element that wrote nothing
     * (the write of a read and a write).  Compared at the next reference and the kernel's
     * end: an output holding a value made from its pattern was read before it was written,
     * and a changed element that held a value was read and written. */
    struct {
        unsigned char *p;
        const nt_tensor *t;
        int64_t i;
        uint64_t old;           /* its itemsize bytes (accessors.c, elem_bits) */
        uint64_t seen;          /* ... when last looked at */
        bool fresh, paired;
    } cxx_ref;
    /* The last NOPI_CXX_INPUT_REFS such references into inputs, with their bytes: a change
     * seen at the next reference or the kernel's end is a write to an input. */
    struct { unsigned char *p; const nt_tensor *t; unsigned char old[8]; }
        cxx_in[NOPI_CXX_INPUT_REFS];
    int ncxx_in;                /* references made into inputs: the newest is at
                                 * (ncxx_in - 1) % NOPI_CXX_INPUT_REFS */
    bool out_pattern;           /* the output's never-written elements hold their pattern
                                 * (outtrack.c, nopi_out_pattern) */
    size_t tcm_null;            /* the first tcm_malloc request that got NULL, 0 if none */
    const void *tcm_null_site;  /* where the kernel made it */
    size_t stack_high_water;
    double started;             /* nopi_now() when the kernel began on it */
    double seconds;             /* from start to end, wall clock */
    double cpu_seconds;         /* of those, on a CPU (profiled runs; else = seconds) */
    nopi_trace trace;           /* traced runs: its spans */
    nopi_memcheck mc;           /* memcheck libraries */
    /* a service the kernel asked for, run on the host stack (printf formatting); a call
     * (nopi_runtime_call) is one whose faults and refusals are the kernel's */
    void (*service)(struct nopi_core *c, void *arg);
    void *service_arg;
    bool service_is_call;
    /* how it ended */
    nopi_end end;
    enum nop_fault fault;       /* the kind of a failed end, set with its diag; NONE: a rule */
    nop_diag diag;
} nopi_core;

/* One op execution. */
struct nopi_run {
    const nop_profile *profile;
    const nop_library *lib;
    const nt__op_desc *op;
    nt__call_fn kernel;         /* what the cores run: the op's kernel, or a reference */
    const char *ref_name;       /* the reference function's name when it is one, or NULL */
    const nt__arg *args;
    nt_tensor *dst;             /* the output the shape function described */
    nopi_core *cores;
    int ncores;
    int threads;                /* host threads used */
    bool multicore;
    size_t stack_size;          /* the library's STACK_SIZE */
    double timeout;
    unsigned checks;            /* enum nop_check bits on */
    bool memcheck;              /* the library is a memcheck build: its kernels are checked */
    bool profiled;              /* time runtime calls per category */
    bool traced;                /* record spans (nopi_core.trace); implies profiled */
    double t0;                  /* nopi_now() when the run began: the host trace's zero */
    /* printf ring */
    char *ring;
    size_t ring_size, ring_head;
    uint64_t ring_total;        /* bytes ever written; > ring_size: the oldest were lost */
    pthread_mutex_t ring_lock;
    void (*printf_sink)(void *, const char *, size_t);   /* the device's, or NULL */
    void *printf_ctx;
    bool warned_printf;
    nop_diag_fn *diag;
    void *diag_ctx;
    pthread_mutex_t diag_lock;
};

/* The cost model's count of a tensor-library call that writes t's elements (each of a
 * factory's too: the device writes its zeros or ones). */
static inline void nopi_count_tensorlib(nopi_core *c, const nt_tensor *t)
{
    c->n.tensorlib_calls++;
    c->n.tensorlib_elems += t->numel;
}

/* fiber.c: runs cores on host threads. */
typedef struct nopi_worker nopi_worker;
/* The core the calling thread is running a kernel (or shape function) for; NULL outside. */
nopi_core *nopi_current(void);
/* Runs one core to its end on the calling thread (a kernel or a shape function). */
void nopi_run_core(nopi_core *c, nt__call_fn fn);
/* Ends the current core with an error: records it and leaves the kernel (does not return). */
_Noreturn void nopi_core_fail(nopi_core *c, const char *fmt, ...) NOPI_PRINTF(2, 3);
/* The same, for an error already written into c->diag's msg (and detail). */
_Noreturn void nopi_core_fail_diag(nopi_core *c);
/* Ends the core with a stack overflow at once: its stack pointer has left its stack (a frame
 * that skipped the guard below it without touching it). */
_Noreturn void nopi_core_fail_stack(nopi_core *c);
/* Runs fn on the host thread's own stack (for calls, like formatting, that need more stack
 * than a kernel has); returns when fn has.  Called on that stack already (from a service),
 * runs fn where it is. */
void nopi_on_host_stack(nopi_core *c, void (*fn)(nopi_core *, void *), void *arg);
/* Runs fn(c, arg), a runtime call the kernel made, on the host thread's own stack: for calls
 * whose frames are deep (the tensor library's checks, element loops and Sleef take over a
 * kilobyte), which the kernel's STACK_SIZE must not pay for, as the device's own library
 * does not cost what ours does.  A fault in fn, or its nopi_core_fail, ends the kernel as it
 * would on the kernel's stack.  A shape function or a reference (host code, whose stack is
 * not measured) runs fn where it is, as does a call made on the host stack already. */
void nopi_runtime_call(nopi_core *c, void (*fn)(nopi_core *, void *), void *arg);
/* Ends c as a stack overflow (fiber.c): the one message for a guard-page fault and for a
 * high-water mark past STACK_SIZE (used: the bytes used, 0 when unknown). */
void nopi_stack_overflow(nopi_core *c, size_t used);
/* A warning from the device, with op and core. */
void nopi_core_warn(nopi_core *c, const char *fmt, ...) NOPI_PRINTF(2, 3);

/* memcheck.c: a core's memcheck state, made before its kernel runs (0, or -1 on no memory)
 * and freed after (end is safe on a core that never started one). */
int nopi_memcheck_start(nopi_core *c);
void nopi_memcheck_end(nopi_core *c);
/* memcheck.c: the runtime handed the kernel an array of n bytes at p from api (a name like
 * "nt_sizes"): accesses through it are checked like the kernel's own arrays. */
void nopi_memcheck_array(nopi_core *c, const void *p, size_t n, const char *api);

/* devdiag.c: where a core is, as diagnostics name it ("relu: core 3", or "relu: shape
 * function 'relu_shape'" for a shape function). */
void nopi_core_where(const nopi_core *c, char *buf, size_t size);
/* The op as messages name it, "my_ops::relu" (a C++ library's, in its namespace), into buf. */
void nopi_run_op_name(const nopi_run *run, char *buf, size_t size);
/* devdiag.c: what user code a core runs: a shape function and a reference run on a core of
 * their own too, and a report about "the kernel" there would send the reader to the wrong
 * function.  nopi_role_name gives the words ("kernel", "shape function", "reference
 * function"), and "user code" for any other number (none, or one a worker made up). */
enum nopi_role { NOPI_ROLE_NONE, NOPI_ROLE_KERNEL, NOPI_ROLE_SHAPE, NOPI_ROLE_REFERENCE };
enum nopi_role nopi_core_role(const nopi_core *c);
const char *nopi_role_name(int role);
/* devdiag.c: when c failed inside a kernel API call and the library has source lines (a
 * --memcheck build of C kernels: libtcc's stabs), puts "called at k.c:17 in 'relu'" and that
 * source line in front of d's detail.  Not for C++ code: its calls are in torch/torch.h's
 * inline functions, whose lines are the header's, not the user's.  (Plain builds carry no
 * lines: libtcc's -g costs a third of a build and leaks in libtcc.) */
void nopi_core_call_site(const nopi_core *c, nop_diag *d);
/* cxxnames.c: when the code a core runs is C++ (the library's sources of its role), every
 * C API name in d's message and detail becomes the C++ call it stands for
 * ("nt_tensor_to_tcm" -> "tensor_to_tcm"); nopi_cxx_words rewrites one string. */
void nopi_core_diag_words(const nopi_core *c, nop_diag *d);
bool nopi_core_is_cxx(const nopi_core *c);   /* the code c runs is C++ */
void nopi_cxx_words(char *msg, size_t size);
/* devdiag.c: appends kernel printf output to the run's ring (the oldest is overwritten when
 * it is full), and the ring's text in order (malloc'd; *lost when output was overwritten;
 * NULL on no memory). */
void nopi_ring_write(nopi_run *run, const char *s, size_t n);
char *nopi_ring_text(const nopi_run *run, bool *lost);

/* bind.c: fills the kernel's and the shape function's argument arrays from the caller's
 * values (tensor views: release them with nopi_free_views); -1 with an input error when they
 * do not fit the op's signature. */
int nopi_bind_args(const nt__op_desc *op, const nop_value *args, int nargs, nt__arg *kargs,
                   nt__arg *sargs, nop_error *err);
void nopi_free_views(nt__arg *args, const nt__op_desc *op);

#endif /* NEURONOP_CORE_H */
