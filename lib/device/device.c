/*
 * device.c - the virtual GPSIMD core array: runs one op at a time (see device.h).
 *
 * A run: check the arguments against the op's signature (bind.c); run the shape function on
 * the host with shape-only tensors, which gives the output's shape and dtype; run the kernel
 * on each core (one, or all of them for a multicore library) on host threads in the chosen
 * order, with a watchdog for the time limit; then apply the output rules and collect what
 * each core did.  The caller's tensors are never written: kernels see read-only views of them.
 * Warnings and the printf ring are devdiag.c's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_impl.h"
#include "fiber.h"
#include "outtrack.h"
#include "pool.h"
#include "device.h"

/* Room for the runtime's own frames below a kernel's deepest one.  The kernel may use its
 * whole STACK_SIZE; the stack is mapped that much larger, and a kernel whose high-water mark
 * passes STACK_SIZE plus RUNTIME_FRAMES is reported as overflowing it. */
#define STACK_RESERVE (16u << 10)
#ifdef __SANITIZE_ADDRESS__
#define RUNTIME_FRAMES 4096      /* sanitizer builds give runtime calls larger frames */
#else
#define RUNTIME_FRAMES 512
#endif
#define SHAPE_STACK (1u << 20)   /* shape functions are host code: a host-sized stack */

size_t nop_stack_runtime_bytes(void)
{
    return RUNTIME_FRAMES;
}

/* What a device keeps between runs, so a launch reuses rather than allocates. */
typedef struct slot {
    nopi_stack stack;           /* sized for stack_size + STACK_RESERVE */
    /* a getcontext result, reused for every run: allocated with the slot's first use, so
     * that a device of 64 slots is 5 KB rather than 64 (every page of which a new process
     * faults in, and a forked one copies on its first write) */
    ucontext_t *context;
    size_t stack_size;
    size_t dirty;               /* bytes from the top written since it was last painted */
    unsigned char *tcm;
} slot;

struct nop_device {
    const nop_profile *profile;
    nop_device_opts opts;
    pthread_mutex_t running;    /* one run at a time */
    nopi_pool *pool;            /* started by the first run */
    slot slots[NOPI_MAX_CORES];
    nopi_stack shape_stack;
    nopi_stack ref_stack;       /* a reference's (one core): host-sized, never painted */
    char *ring;
    nopi_phase_fn *phase;       /* a worker's device: where its phases go */
    void *phase_ctx;
    nopi_printf_fn *printf_sink;   /* nopi_device_set_printf_sink's */
    void *printf_ctx;
    void *ext;                  /* what a layer above keeps with the device (a zygote) */
    void (*ext_free)(void *);
    pid_t worker;               /* an isolated device's last worker, killed, not yet reaped */
    bool has_timer;             /* nopi_device_own_timer's: timer is timer_thread's own */
    int timer;
    pthread_t timer_thread;
};

/* The cores option's check, as nop_device_new and nopi_device_renew make it. */
static int cores_ok(int cores, nop_error *err)
{
    if (cores < 0 || cores > NOPI_MAX_CORES)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "%d cores: a device has 1 to %d",
                         cores, NOPI_MAX_CORES);
    return 0;
}

int nop_device_new(nop_device **out, const nop_profile *profile, const nop_device_opts *opts,
                   nop_error *err)
{
    *out = NULL;
    nop_device *d = calloc(1, sizeof *d);
    if (!d)
        return nopi_nomem(err);
    d->profile = profile;
    if (opts)
        d->opts = *opts;
    if (cores_ok(d->opts.cores, err) != 0) {
        free(d);
        return -1;
    }
    if (d->opts.threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        d->opts.threads = n > 0 ? (int)n : 1;
    }
    if (d->opts.timeout <= 0)
        d->opts.timeout = profile->timeout;
    pthread_mutex_init(&d->running, NULL);
    *out = d;
    return 0;
}

int nopi_device_renew(nop_device *dev, const nop_device_opts *o, nop_error *err)
{
    if (cores_ok(o->cores, err) != 0)
        return -1;
    nop_device_opts want = *o;
    if (want.threads <= 0)
        want.threads = dev->opts.threads;   /* resolved as nop_device_new does */
    if (want.timeout <= 0)
        want.timeout = dev->profile->timeout;
    if (want.threads != dev->opts.threads || want.timeout != dev->opts.timeout ||
        want.profile != dev->opts.profile || want.trace != dev->opts.trace ||
        want.isolate != dev->opts.isolate)
        return nopi_fault(err, NOP_FAULT_HOST, "a device cannot be renewed with other "
                          "threads, time limit, profiling or isolation");
    dev->opts.cores = o->cores;
    dev->opts.schedule = o->schedule;
    dev->opts.seed = o->seed;
    dev->opts.disabled_checks = o->disabled_checks;
    for (int i = 0; i < NOPI_MAX_CORES; i++)
        if (dev->slots[i].tcm)
            nopi_tcm_fill(dev->slots[i].tcm, (size_t)dev->profile->tcm_bytes);
    return 0;
}

nop_device_opts nopi_device_opts(const nop_device *dev)
{
    return dev->opts;
}

int nopi_device_cores(const nop_device *dev, const nop_library *lib)
{
    return lib->desc->multicore ? (dev->opts.cores ? dev->opts.cores : dev->profile->cores) : 1;
}

int nopi_device_max_cores(const nop_device *dev)
{
    return dev->opts.cores ? dev->opts.cores : dev->profile->cores;
}

const nop_profile *nopi_device_profile(const nop_device *dev)
{
    return dev->profile;
}

void *nopi_device_ext(const nop_device *dev)
{
    return dev->ext;
}

void nopi_device_set_ext(nop_device *dev, void *ext, void (*ext_free)(void *))
{
    dev->ext = ext;
    dev->ext_free = ext_free;
}

void nopi_device_set_sink(nop_device *dev, void (*diag)(void *, const nop_diag *),
                          void *diag_ctx, nopi_phase_fn *phase, void *phase_ctx)
{
    dev->opts.isolate = false;
    dev->opts.diag = diag;
    dev->opts.diag_ctx = diag_ctx;
    dev->phase = phase;
    dev->phase_ctx = phase_ctx;
}

void nopi_device_set_printf_sink(nop_device *dev, nopi_printf_fn *fn, void *ctx)
{
    dev->printf_sink = fn;
    dev->printf_ctx = ctx;
}

void nopi_device_reap(nop_device *dev, pid_t pid)
{
    if (dev->worker > 0)
        nopi_reap_group(dev->worker);
    dev->worker = pid;
}

/* Announces a phase, when someone listens (a worker's parent). */
static void phase(nop_device *dev, int kind, int ncores, const char *what)
{
    if (dev->phase)
        dev->phase(dev->phase_ctx, kind, ncores, what);
}

void nop_device_free(nop_device *dev)
{
    if (!dev)
        return;
    if (dev->ext_free)
        dev->ext_free(dev->ext);   /* before the reaping: it may leave a process to reap */
    nopi_device_reap(dev, 0);
    nopi_pool_free(dev->pool);
    if (dev->has_timer)
        nopi_thread_timer_free(dev->timer);
    for (int i = 0; i < NOPI_MAX_CORES; i++) {
        nopi_stack_free(&dev->slots[i].stack);
        nopi_tcm_free_pool(dev->slots[i].tcm);
        free(dev->slots[i].context);
    }
    nopi_stack_free(&dev->shape_stack);
    nopi_stack_free(&dev->ref_stack);
    free(dev->ring);
    pthread_mutex_destroy(&dev->running);
    free(dev);
}

/* ---- cores ------------------------------------------------------------------------------ */

/* Makes slot id ready for kernels of stack_size bytes: its stack (reallocated, and dirty all
 * over, when the size changed; none for 0, a reference's run), TCM and context; 0, or -1 on
 * no memory. */
static int slot_ready(nop_device *dev, uint32_t id, size_t stack_size)
{
    slot *s = &dev->slots[id];
    if (stack_size && (!s->stack.map || s->stack_size != stack_size)) {
        nopi_stack_free(&s->stack);
        if (nopi_stack_alloc(&s->stack, stack_size + STACK_RESERVE) != 0)
            return -1;
        s->stack_size = stack_size;
        s->dirty = (size_t)(s->stack.hi - s->stack.lo);
    }
    if (!s->tcm) {
        if (!(s->tcm = nopi_tcm_new_pool((size_t)dev->profile->tcm_bytes)))
            return -1;
        nopi_tcm_fill(s->tcm, (size_t)dev->profile->tcm_bytes);
    }
    if (!s->context) {
        if (!(s->context = malloc(sizeof *s->context)))
            return -1;
        getcontext(s->context);
    }
    return 0;
}

int nopi_device_start(nop_device *dev)
{
    return dev->pool || (dev->pool = nopi_pool_new(dev->opts.threads)) ? 0 : -1;
}

int nopi_device_start_resident(nop_device *dev)
{
    if (dev->pool || !(dev->pool = nopi_pool_new_resident(dev->opts.threads)))
        return -1;
    return 0;
}

void nopi_device_end_threads(nop_device *dev)
{
    if (dev->pool)
        nopi_pool_end_threads(dev->pool);
    if (dev->has_timer)   /* as a core leaves it; a helper could have set it since */
        nopi_thread_timer_set(dev->timer, 0);
}

int nopi_device_own_timer(nop_device *dev)
{
    if (!dev->has_timer) {
        dev->timer = nopi_thread_timer_new();
        dev->has_timer = dev->timer >= 0;
        dev->timer_thread = pthread_self();
    }
    return dev->has_timer ? dev->timer : -1;
}

int nopi_device_warm(nop_device *dev, size_t stack_size, int ncores)
{
    for (int i = 0; i < ncores && i < NOPI_MAX_CORES; i++) {
        if (slot_ready(dev, (uint32_t)i, stack_size) != 0)
            return -1;
        if (dev->slots[i].stack.map)
            nopi_stack_repaint(&dev->slots[i].stack, dev->slots[i].dirty);
        dev->slots[i].dirty = 0;
    }
    size_t ring = (size_t)dev->profile->printf_buffer;
    if ((!dev->ring && !(dev->ring = calloc(1, ring ? ring : 1))) ||
        (!dev->shape_stack.map && nopi_stack_alloc(&dev->shape_stack, SHAPE_STACK) != 0) ||
        (!dev->ref_stack.map && nopi_stack_alloc(&dev->ref_stack, SHAPE_STACK) != 0))
        return -1;
    return 0;
}

/* Prepares core id of a run on the device's cached stack and TCM (allocated on first use,
 * reallocated when the library's stack size changes).  The stack is repainted only where the
 * last run wrote, which keeps a launch cheap.  A reference runs on a stack of its own, host
 * code with no STACK_SIZE to check: painting its megabyte would cost more than the run (and
 * in a fresh worker, a page fault for every page of it). */
static int core_init(nop_device *dev, nopi_core *c, nopi_run *run, uint32_t id,
                     uint32_t count)
{
    memset(c, 0, sizeof *c);
    c->run = run;
    c->id = id;
    c->count = count;
    slot *s = &dev->slots[id];
    c->host_stack = run->ref_name != NULL;
    if (c->host_stack && !dev->ref_stack.map &&
        nopi_stack_alloc(&dev->ref_stack, run->stack_size) != 0)
        return -1;
    if (slot_ready(dev, id, c->host_stack ? 0 : run->stack_size) != 0)
        return -1;
    if (!c->host_stack)
        nopi_stack_repaint(&s->stack, s->dirty);
    c->stack = c->host_stack ? dev->ref_stack : s->stack;
    c->tcm = s->tcm;
    nopi_tcm_fill_guards(c);
    c->fiber = *s->context;
    c->fiber_ready = true;
    return run->memcheck ? nopi_memcheck_start(c) : 0;
}

static int shape_core_init(nop_device *dev, nopi_core *c, nopi_run *run)
{
    memset(c, 0, sizeof *c);
    c->run = run;
    c->count = 1;
    c->shape_mode = true;
    if (!dev->shape_stack.map && nopi_stack_alloc(&dev->shape_stack, SHAPE_STACK) != 0)
        return -1;
    c->stack = dev->shape_stack;
    return 0;
}

/* Frees what the kernel made; the stack and TCM stay with the device. */
static void core_release(nop_device *dev, nopi_core *c)
{
    for (nt_tensor *t = c->owned, *next; t; t = next) {
        next = t->next;
        nopi_tensor_free(t);
    }
    c->owned = NULL;
    free(c->written.v);
    c->written = (nopi_ranges){ 0 };
    free(c->trace.spans);   /* NULL once take_traces has moved them */
    c->trace.spans = NULL;
    nopi_memcheck_end(c);
    if (!c->shape_mode && !c->host_stack)
        dev->slots[c->id].dirty = c->stack_high_water;
}

/* Rules checked when a kernel has ended (on the worker that ran it). */
static void after_kernel(nopi_core *c)
{
    pthread_mutex_lock(&c->run->diag_lock);
    c->finished = true;   /* other cores may now read what it wrote (initcheck) */
    pthread_mutex_unlock(&c->run->diag_lock);
    if (c->end != NOPI_END_OK)
        return;
    if (c->stack_high_water > c->run->stack_size + RUNTIME_FRAMES) {
        nopi_stack_overflow(c, c->stack_high_water);
        return;
    }
    nopi_streams_check_closed(c);
    if (c->end != NOPI_END_OK)
        return;
    int block;
    long at;
    if (nopi_tcm_stray(c, &at, &block)) {   /* tcm.c: a store past a buffer, which no call
                                              * of the kernel's made */
        c->end = NOPI_END_ERROR;
        c->diag.severity = NOP_SEV_ERROR;
        const nopi_tcm_block *b = block >= 0 ? &c->blocks[block] : NULL;
        long base = at < 0 || !b ? 0 : (long)b->offset;
        char bytes[64];
        nopi_tcm_bytes_str(at - base, nopi_tcm_changed_upto(c, at) - base, bytes, sizeof bytes);
        long pool = (long)c->run->profile->tcm_bytes;
        if (at < 0)
            snprintf(c->diag.msg, sizeof c->diag.msg, "a store before the start of the "
                     "core's TCM pool changed its %s, found when the kernel returned", bytes);
        else if (!b && at >= pool)
            snprintf(c->diag.msg, sizeof c->diag.msg, "a store past the end of the core's "
                     "%ld-byte TCM pool changed its %s, found when the kernel returned", pool,
                     bytes);
        else if (b)
            snprintf(c->diag.msg, sizeof c->diag.msg, "a store past the end of the %u-byte TCM "
                     "buffer from tcm_malloc changed %s of it, found when the kernel returned "
                     "(only bytes [0, %u) are the buffer's)", b->req, bytes, b->req);
        else
            snprintf(c->diag.msg, sizeof c->diag.msg, "a store into TCM that no tcm_malloc "
                     "buffer holds changed %s of the core's pool, found when the kernel "
                     "returned", bytes);
        snprintf(c->diag.detail, sizeof c->diag.detail, "%s?%s",
                 at < 0 ? "an index below 0 of the first buffer"
                        : "an index past a buffer's end, or a store into a buffer after its "
                          "tcm_free",
                 c->run->memcheck ? "" : "  --memcheck finds the line");
        return;
    }
    int64_t leaked = 0;
    for (int b = 0; b < c->nblocks; b++)
        if (c->blocks[b].stream < 0)
            leaked += c->blocks[b].req;
    if (leaked && (c->run->checks & NOP_CHECK_LEAK))
        nopi_core_warn(c, "%lld bytes of TCM still allocated when the kernel returned "
                       "(tcm_free every tcm_malloc)", (long long)leaked);
}

/* ---- running the cores ------------------------------------------------------------------ */

static void make_order(int *order, int n, enum nop_schedule s, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        order[i] = s == NOP_SCHED_REVERSED ? n - 1 - i : i;
    if (s == NOP_SCHED_SHUFFLE) {   /* Fisher-Yates with a private erand48 stream */
        unsigned short st[3] = { (unsigned short)seed, (unsigned short)(seed >> 16),
                                 (unsigned short)(seed >> 32) };
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(erand48(st) * (i + 1));
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
}

static int run_cores(nop_device *dev, const nop_library *lib, nopi_worker *self, nopi_run *run,
                     nop_error *err)
{
    if (!dev->pool && !(dev->pool = nopi_pool_new(dev->opts.threads)))
        return nopi_fault(err, NOP_FAULT_HOST, "cannot start the device's host threads: out "
                          "of memory");
    int threads = dev->opts.schedule == NOP_SCHED_PARALLEL ? nopi_pool_threads(dev->pool) : 1;
    if (threads > run->ncores)
        threads = run->ncores;
    run->threads = threads;
    int order[NOPI_MAX_CORES];
    make_order(order, run->ncores, dev->opts.schedule, dev->opts.seed);
    nopi_pool_run(dev->pool, self, run, order, threads, lib->text_lo, lib->text_hi,
                  after_kernel);
    return 0;
}

/* ---- the shape function ----------------------------------------------------------------- */

static int run_shape(nop_device *dev, nopi_run *run, const nt__arg *sargs, nop_error *err)
{
    nopi_core sc;
    char what[256];
    if (shape_core_init(dev, &sc, run) != 0)
        return nopi_nomem(err);
    const nt__arg *kargs = run->args;
    run->args = sargs;
    int rc = 0;
    nopi_run_core(&sc, run->op->call_shape);
    const nt_tensor *r = sc.returned;
    if (sc.end == NOPI_END_OK && !r) {
        sc.end = NOPI_END_ERROR;
        snprintf(sc.diag.msg, sizeof sc.diag.msg, "the shape function returned NULL; it must "
                 "return a tensor with the output's shape and dtype");
    } else if (sc.end == NOPI_END_OK && r->magic != NOPI_TENSOR_MAGIC) {
        sc.end = NOPI_END_ERROR;
        snprintf(sc.diag.msg, sizeof sc.diag.msg, "the shape function returned %p, which is "
                 "not a tensor", (const void *)r);
    }
    if (sc.end != NOPI_END_OK) {
        nopi_fault(err, sc.fault, "%s", sc.diag.msg);   /* NONE: a rule (nop_error_fault) */
        nopi_core_where(&sc, err->diag.where, sizeof err->diag.where);
        nopi_strlcpy(err->diag.detail, sc.diag.detail, sizeof err->diag.detail);
        nopi_core_diag_words(&sc, &err->diag);
        nopi_core_call_site(&sc, &err->diag);
        nopi_diag_clean(&err->diag);   /* its detail, as report_failures' (no worker may) */
        rc = -1;
        goto out;
    }
    /* The shape function's time ends with it: making a large output (gigabytes take
     * seconds to map and zero) is the runtime's, not to be reported as the user's loop. */
    char op[192];
    nopi_run_op_name(run, op, sizeof op);
    snprintf(what, sizeof what, "%s: making the output", op);
    phase(dev, NOPI_PHASE_OTHER, 0, what);
    /* its elements unset, as nt_empty's: on the device the output holds whatever was in
     * memory, and a kernel that accumulates into it uncleared (out[i] += x) must not pass
     * by reading zeros (a tester's find: C++ element references of a bfloat16, half or
     * integer output, which the initcheck cannot see, did) */
    run->dst = nopi_tensor_alloc_filled(r->dtype, r->ndim, r->sizes, NOPI_UNSET_BYTE);
    if (!run->dst)
        rc = nopi_fault(err, NOP_FAULT_HOST, "the output (%d dimensions) is too large for "
                        "this machine's memory", r->ndim);
out:
    run->args = kargs;
    core_release(dev, &sc);
    return rc;
}

/* ---- the output ------------------------------------------------------------------------- */

/* Applies the output rules to a finished run; on success run->dst holds the output. */
static void output_rules(nopi_run *run)
{
    nopi_core *c0 = &run->cores[0];
    if (run->multicore) {
        bool any = false;
        for (int i = 0; i < run->ncores; i++)
            any |= run->cores[i].dst_called;
        if (!any && c0->end == NOPI_END_OK && (run->checks & NOP_CHECK_DST)) {
            c0->end = NOPI_END_ERROR;
            c0->whole_run = true;   /* (no core's doing: a new user's find, "core 0") */
            snprintf(c0->diag.msg, sizeof c0->diag.msg, "no core called get_dst_tensor: a "
                     "multicore kernel must write its output through get_dst_tensor() (its "
                     "return value is ignored)");
        }
        return;
    }
    if (c0->end != NOPI_END_OK)
        return;
    const nt_tensor *r = c0->returned;
    if ((r && r == run->dst) || (!r && c0->dst_called))
        return;
    if (!r) {
        c0->end = NOPI_END_ERROR;
        snprintf(c0->diag.msg, sizeof c0->diag.msg, "the kernel returned NULL; return the "
                 "output tensor, or write it through get_dst_tensor()");
        return;
    }
    if (r->magic != NOPI_TENSOR_MAGIC) {
        c0->end = NOPI_END_ERROR;
        snprintf(c0->diag.msg, sizeof c0->diag.msg, "the kernel returned %p, which is not a "
                 "tensor", (const void *)r);
        return;
    }
    if (!run->dst && !(run->dst = nopi_tensor_alloc(r->dtype, r->ndim, r->sizes, false))) {
        c0->end = NOPI_END_ERROR;   /* a reference's: no shape function declared one */
        snprintf(c0->diag.msg, sizeof c0->diag.msg, "no memory for the output (%d dimensions)",
                 r->ndim);
        return;
    }
    if (!nopi_same_shape(r, run->dst) || r->dtype != run->dst->dtype) {
        char a[96], b[96];
        nopi_shape_str(r, a, sizeof a);
        nopi_shape_str(run->dst, b, sizeof b);
        c0->end = NOPI_END_ERROR;
        snprintf(c0->diag.msg, sizeof c0->diag.msg, "the kernel returned %s %s tensor of shape "
                 "%s, but the shape function '%s' declared %s of shape %s",
                 nopi_dtype_article(r->dtype), nopi_dtype_name(r->dtype), a, run->op->shape,
                 nopi_dtype_name(run->dst->dtype), b);
        return;
    }
    memcpy(run->dst->data, r->data, (size_t)r->numel * r->itemsize);
}

/* A malloc'd copy of the library's global and static data as it is now, or NULL (none, or
 * no memory). */
static unsigned char *data_copy_of(const nop_library *lib)
{
    size_t len = lib->data_hi - lib->data_lo;
    unsigned char *copy = len ? malloc(len) : NULL;
    if (copy)
        memcpy(copy, (const void *)lib->data_lo, len);
    return copy;
}

/* The library's global and static data as the cores of a multicore run found it, in
 * *copy (malloc'd; NULL when the check does not apply: one core, the check off, no data).
 * A copy taken before the shape function (shape_data_rule's) is kept: what that function
 * wrote has been put back, so it is the data the cores find.  Every core here is a thread
 * of one process and shares one copy of it, and cores have no synchronisation on the
 * device: a kernel that keeps scratch in a static array gave a silently wrong answer (an
 * audit of gpsimd.md's rules). */
static void shared_data_before(const nopi_run *run, const nop_library *lib,
                               unsigned char **copy)
{
    if (!run->multicore || run->ncores < 2 || !(run->checks & NOP_CHECK_RACE)) {
        free(*copy);
        *copy = NULL;
    } else if (!*copy) {
        *copy = data_copy_of(lib);
    }
}

/* Names the variable of lib's data segment at byte `at` into what (size bytes): the
 * exported variable it is in, else its place in the segment. */
static void data_name(const nop_library *lib, size_t at, char *what, size_t size)
{
    const unsigned char *p = (const unsigned char *)lib->data_lo + at;
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname && sym &&
        (uintptr_t)p < (uintptr_t)info.dli_saddr + sym->st_size)
        snprintf(what, size, "the library's variable '%.300s'", info.dli_sname);
    else
        snprintf(what, size, "the library's global or static data (byte %zu of its data "
                 "segment)", at);
}

/* After the shape function: what it wrote of the library's global and static data is put
 * back as it was, with a warning naming it.  On the device the shape function runs on the
 * host when the op is compiled, apart from the kernels, which never see its writes (a
 * device-rules tester passed a global from it to the kernel: the answer differed from the
 * device's, silently).  copy: the data as it was before, or NULL. */
static void shape_data_rule(const nopi_run *run, const nop_library *lib,
                            const unsigned char *copy)
{
    size_t len = lib->data_hi - lib->data_lo, at = 0;
    unsigned char *now = (unsigned char *)lib->data_lo;
    if (!copy || memcmp(now, copy, len) == 0)   /* (the common case, at memcmp's speed) */
        return;
    while (at < len && now[at] == copy[at])
        at++;
    nop_diag d;
    memset(&d, 0, sizeof d);
    d.severity = NOP_SEV_WARNING;
    char what[400];
    data_name(lib, at, what, sizeof what);
    nopi_run_op_name(run, d.where, sizeof d.where);
    size_t used = strlen(d.where);
    snprintf(d.where + used, sizeof d.where - used, ": shape function '%s'", run->op->shape);
    snprintf(d.msg, sizeof d.msg, "the shape function wrote %s; on the device it runs on the "
             "host when the op is compiled, so the kernel sees the value from before it, as "
             "here", what);
    snprintf(d.detail, sizeof d.detail, "pass what the kernel needs as an argument of the op");
    /* only the bytes that differ: the segment begins with what the loader made read-only
     * (RELRO: the GOT, .dynamic), which no shape function could have written, and a copy
     * over it would fault (a reviewer's find, with any system-linked library) */
    for (size_t i = at; i < len; i++)
        if (now[i] != copy[i])
            now[i] = copy[i];
    if (run->diag)
        run->diag(run->diag_ctx, &d);
}

/* The shared-data rule: a core that wrote the library's global or static data is an error
 * (racecheck), named by the variable when the library exports it: 0, or -1 with err filled
 * as the output's racecheck fills it (the op, no core: any may have). */
static int shared_data_rule(const nopi_run *run, const nop_library *lib,
                            const unsigned char *copy, nop_error *err)
{
    size_t len = lib->data_hi - lib->data_lo, at = 0;
    const unsigned char *now = (const unsigned char *)lib->data_lo;
    while (at < len && now[at] == copy[at])
        at++;
    if (at == len)
        return 0;
    char what[400];
    data_name(lib, at, what, sizeof what);
    nopi_fault(err, NOP_FAULT_RULE, "a core wrote %s, which every core shares (racecheck)",
               what);
    nopi_run_op_name(run, err->diag.where, sizeof err->diag.where);
    nopi_detail(err, "cores have no synchronisation: keep a core's own data in TCM "
                "(tcm_malloc) or on its stack, and write the output only through "
                "get_dst_tensor()");
    return -1;
}

/* Whether the output is the tensor the cores wrote through get_dst_tensor (and so its
 * coverage is checked), rather than one a single-core kernel made and returned. */
static bool output_tracked(const nopi_run *run)
{
    if (run->multicore)
        return true;
    const nopi_core *c0 = &run->cores[0];
    return c0->returned == run->dst || (!c0->returned && c0->dst_called);
}

/* Reports failing cores: the first in err, the others through the sink. */
static int report_failures(nopi_run *run, nop_error *err)
{
    int failed = 0;
    for (int i = 0; i < run->ncores; i++) {
        nopi_core *c = &run->cores[i];
        if (c->end == NOPI_END_OK)
            continue;
        nop_diag d = c->diag;
        d.severity = NOP_SEV_ERROR;
        if (c->whole_run)
            nopi_run_op_name(run, d.where, sizeof d.where);
        else
            nopi_core_where(c, d.where, sizeof d.where);
        nopi_core_diag_words(c, &d);
        nopi_core_call_site(c, &d);
        nopi_diag_clean(&d);   /* the kernel's own words, when no worker cleaned them */
        if (failed++ == 0) {
            err->kind = NOP_ERR_DEVICE;
            err->fault = c->fault;   /* NONE: a rule, as nop_error_fault reads it */
            err->diag = d;
        } else if (run->diag) {
            run->diag(run->diag_ctx, &d);
        }
    }
    return failed ? -1 : 0;
}

/* ---- a run ------------------------------------------------------------------------------ */

/* The share of core c's wall time it had a CPU for.  Its host time by category is scaled
 * by it, so time the host gave other work (other processes, or the other cores' threads
 * when there are more cores than CPUs) counts in no category: the modeled compute term
 * would otherwise grow with the machine's load.  The host cannot say which category it
 * interrupted, so each loses its part. */
static double on_cpu_share(const nopi_core *c)
{
    return c->seconds > 0 && c->cpu_seconds > 0 && c->cpu_seconds < c->seconds
               ? c->cpu_seconds / c->seconds : 1;
}

/* Moves the cores' recordings of a traced run into a nop_trace; NULL on no memory. */
static nop_trace *take_traces(nopi_run *run, const nop_run_result *res)
{
    nop_trace *t = calloc(1, sizeof *t);
    if (t && !(t->cores = calloc((size_t)run->ncores, sizeof *t->cores))) {
        free(t);
        t = NULL;
    }
    for (int i = 0; t && i < run->ncores; i++) {
        nopi_core *c = &run->cores[i];
        nopi_trace_finish(c, res->cores[i].category_seconds[NOP_COST_COMPUTE],
                          on_cpu_share(c));
        t->cores[i] = c->trace;
        c->trace.spans = NULL;
        t->ncores = i + 1;
    }
    return t;
}

/* Runs op opi, or (ref >= 0) the reference function ref of it: a reference is host code
 * held to no device rule, so it runs on one core with the toggleable checks off and a
 * host-sized stack, and without the op's shape function: its output is the tensor it
 * returns. */
static int run_op(nop_device *dev, const nop_library *lib, int opi, int ref,
                  const nop_value *args, int nargs, nop_run_result *res, nop_error *err)
{
    nop_error scratch;
    if (!err)
        err = &scratch;
    memset(res, 0, sizeof *res);
    double t0 = nopi_now();
    const nt__lib_desc *desc = lib->desc;
    if (opi < 0 || opi >= desc->nops)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no op %d in '%s'", opi, desc->name);
    if (!lib->handle)   /* read for its description only: the callers below load it first */
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' was read for its description "
                         "only (nop_library_describe): open it to run it", lib->path);
    const nt__op_desc *op = &desc->ops[opi];
    nopi_run run;
    memset(&run, 0, sizeof run);
    run.profile = dev->profile;
    run.lib = lib;
    run.op = op;
    run.kernel = ref >= 0 ? desc->refs[ref].call : op->call_kernel;
    run.ref_name = ref >= 0 ? desc->refs[ref].name : NULL;
    run.multicore = ref < 0 && desc->multicore != 0;
    run.ncores = run.multicore ? nopi_device_cores(dev, lib) : 1;   /* a reference: one */
    run.stack_size = ref >= 0 ? SHAPE_STACK : (size_t)desc->stack_size;
    run.timeout = dev->opts.timeout;
    run.checks = ref >= 0 ? 0 : NOP_CHECK_ALL & ~dev->opts.disabled_checks;
    run.memcheck = ref < 0 && desc->memcheck != 0;   /* references are not instrumented */
    run.traced = dev->opts.trace && ref < 0;
    run.profiled = dev->opts.profile || run.traced;
    run.t0 = t0;
    run.ring_size = (size_t)dev->profile->printf_buffer;
    run.printf_sink = dev->printf_sink;
    run.printf_ctx = dev->printf_ctx;
    if (run.printf_sink)
        run.printf_sink(run.printf_ctx, NULL, 0);
    run.diag = dev->opts.diag;
    run.diag_ctx = dev->opts.diag_ctx;
    pthread_mutex_init(&run.ring_lock, NULL);
    pthread_mutex_init(&run.diag_lock, NULL);
    res->stack_size = run.stack_size;
    res->threads = 1;

    int rc = -1;
    bool cores_ran = false;   /* a run that failed before (its shape function) reports none */
    unsigned char *data_copy = NULL;   /* the library's data before the shape function */
    pthread_mutex_lock(&dev->running);
    nopi_worker self;
    bool worker = nopi_worker_enter(&self, lib->text_lo, lib->text_hi) == 0;
    if (worker && dev->has_timer && pthread_equal(dev->timer_thread, pthread_self())) {
        self.has_timer = true;
        self.timer = dev->timer;
    }
    nt__arg *kargs = calloc((size_t)(op->nargs ? op->nargs : 1), sizeof *kargs);
    nt__arg *sargs = calloc((size_t)(op->nargs ? op->nargs : 1), sizeof *sargs);
    run.cores = calloc((size_t)run.ncores, sizeof *run.cores);
    if (!dev->ring)
        dev->ring = calloc(1, run.ring_size ? run.ring_size : 1);
    run.ring = dev->ring;
    if (!worker || !kargs || !sargs || !run.cores || !run.ring) {
        nopi_nomem(err);
        goto out;
    }
    if (ref < 0 && desc->stack_size > dev->profile->stack_max) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' declares a %lld-byte stack; device "
                  "'%s' allows at most %lld", desc->name, (long long)desc->stack_size,
                  dev->profile->name, (long long)dev->profile->stack_max);
        goto out;
    }
    if (nopi_bind_args(op, args, nargs, kargs, sargs, err) != 0)
        goto out;
    run.args = kargs;
    char what[512], name[256];
    nopi_run_op_name(&run, name, sizeof name);   /* as the cores name it: my_ops::relu */
    /* A reference makes its own output: it runs no code of the op it judges (the shape
     * function is the op's code, and would run in the reference's worker). */
    if (ref < 0) {
        snprintf(what, sizeof what, "%s: shape function '%s'", name, op->shape);
        phase(dev, NOPI_PHASE_SHAPE, 0, what);
        data_copy = data_copy_of(lib);
        if (run_shape(dev, &run, sargs, err) != 0)
            goto out;
        shape_data_rule(&run, lib, data_copy);
    }
    for (int i = 0; i < run.ncores; i++) {
        if (core_init(dev, &run.cores[i], &run, (uint32_t)i, (uint32_t)run.ncores) != 0) {
            nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "out of memory for core %d's stack and "
                      "TCM", i);
            goto out;
        }
    }
    if (ref >= 0)
        snprintf(what, sizeof what, "%s: reference function '%s'", name,
                 desc->refs[ref].name);
    else if (run.ncores == 1)   /* where a worker that dies now died, as cores say it */
        snprintf(what, sizeof what, "%s: core 0", name);
    else
        snprintf(what, sizeof what, "%s", name);
    phase(dev, NOPI_PHASE_CORES, run.ncores, what);
    cores_ran = true;
    shared_data_before(&run, lib, &data_copy);
    if (run_cores(dev, lib, &self, &run, err) != 0)
        goto out;
    phase(dev, NOPI_PHASE_OTHER, 0, op->name);
    res->threads = run.threads;
    output_rules(&run);
    rc = report_failures(&run, err);
    if (rc == 0 && data_copy)
        rc = shared_data_rule(&run, lib, data_copy, err);
    if (rc == 0 && output_tracked(&run) && nopi_out_finish(&run, &err->diag) != 0) {
        err->kind = NOP_ERR_DEVICE;
        err->fault = NOP_FAULT_RULE;
        err->diag.severity = NOP_SEV_ERROR;
        err->diag.file[0] = err->diag.detail[0] = '\0';
        nopi_run_op_name(&run, err->diag.where, sizeof err->diag.where);
        rc = -1;
    }
    if (rc == 0) {
        res->output = run.dst;
        run.dst = NULL;
        free(res->output->track);
        res->output->track = NULL;
        res->output->readonly = false;
    }
out:
    res->printf_text = nopi_ring_text(&run, &res->printf_lost);
    if (cores_ran && (res->cores = calloc((size_t)run.ncores, sizeof *res->cores))) {
        res->ncores = run.ncores;
        for (int i = 0; i < run.ncores; i++) {
            nopi_core *c = &run.cores[i];
            res->cores[i] = (nop_core_report){ i, c->end != NOPI_END_OK, c->stack_high_water,
                                               c->seconds, c->n, { 0 } };
            if (run.profiled) {
                double api = 0, share = on_cpu_share(c);
                for (int k = 1; k < NOP_COST_CATEGORIES; k++) {
                    res->cores[i].category_seconds[k] = c->api_seconds[k] * share;
                    api += c->api_seconds[k];
                }
                res->cores[i].category_seconds[NOP_COST_COMPUTE] =
                    c->seconds > api ? (c->seconds - api) * share : 0;
            }
        }
        if (run.traced)
            res->trace = take_traces(&run, res);
    }
    for (int i = 0; run.cores && i < run.ncores; i++)
        if (run.cores[i].run)
            core_release(dev, &run.cores[i]);
    free(run.cores);
    if (kargs)
        nopi_free_views(kargs, op);
    if (sargs)
        nopi_free_views(sargs, op);
    free(kargs);
    free(sargs);
    free(data_copy);
    nopi_tensor_free(run.dst);
    pthread_mutex_destroy(&run.ring_lock);
    pthread_mutex_destroy(&run.diag_lock);
    if (worker)
        nopi_worker_leave(&self);
    pthread_mutex_unlock(&dev->running);
    res->seconds = nopi_now() - t0;
    return rc;
}

/* An in-process run (of a library read for its description only: loaded for the run). */
int nopi_device_run_here(nop_device *dev, const nop_library *lib, int op, int ref,
                         const nop_value *args, int nargs, nop_run_result *res,
                         nop_error *err)
{
    nop_library *opened;
    if (!lib->handle)   /* its constructors may hang: bounded as a shape function is */
        phase(dev, NOPI_PHASE_LOAD, 0, "");
    const nop_library *use = nopi_library_runnable(lib, &opened, err);
    /* loaded from its file just now, which may have been rebuilt since lib was read: the
     * op is the one lib names, wherever the rebuild put it */
    if (use && use != lib && ref < 0 && op >= 0 && op < lib->desc->nops)
        op = nopi_library_same_op(use, op, lib->desc->ops[op].name, err);
    int rc = use && op >= 0 ? run_op(dev, use, op, ref, args, nargs, res, err) : -1;
    if (!use || op < 0)
        memset(res, 0, sizeof *res);
    nop_library_close(opened);
    return rc;
}

void nop_run_result_clear(nop_run_result *res)
{
    nopi_tensor_free(res->output);
    nopi_trace_free(res->trace);
    free(res->printf_text);
    free(res->cores);
    memset(res, 0, sizeof *res);
}
