/*
 * run.c - nop_device_run and nop_device_run_reference: in this process, or (an isolating
 * device) in a worker process, whose result comes back as records and is checked here.
 *
 * An isolating device forks a one-shot worker per run, which inherits the library and the
 * inputs copy-on-write; one made with keep_worker keeps a zygote instead (forked at its first
 * run), and sends each run as a request: the library's path, the op, the scalars, and the
 * tensors' bytes in a memfd that goes with the request, which the zygote's child (put back
 * between runs) reads and closes before any user code of the run.  The entry points live
 * above device/ so that the device knows nothing of worker processes: a worker's device is an
 * in-process one whose diagnostics and phases go to its wire (nopi_device_attach).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox.h"

static void wire_phase(void *w, int kind, int ncores, const char *what)
{
    nopi_wire_phase(w, kind, ncores, what);
}

void nopi_device_attach(nop_device *dev, nopi_wire *w)
{
    nopi_device_set_sink(dev, nopi_wire_diag, w, wire_phase, w);   /* to the parent, as
                                                                     * they happen */
    nopi_device_set_printf_sink(dev, nopi_wire_printf, w);
}

nop_device *nopi_device_for_worker(const nop_device *dev, nopi_wire *w)
{
    nop_device *d;
    nop_device_opts o = nopi_device_opts(dev);
    if (nop_device_new(&d, nopi_device_profile(dev), &o, NULL) != 0)
        return NULL;
    nopi_device_attach(d, w);
    return d;
}

/* ---- in a worker process ---------------------------------------------------------------- */

typedef struct run_work {
    const nop_library *lib;
    int op, ref;
    const nop_value *args;
    int nargs;
} run_work;

static int run_in_worker(nop_device *cdev, void *ctx, nopi_wire *w, nop_error *err)
{
    const run_work *rw = ctx;
    nop_run_result r;
    int rc = nopi_device_run_here(cdev, rw->lib, rw->op, rw->ref, rw->args, rw->nargs, &r,
                                  err);
    if (nopi_wire_put_run(w, &r) != 0 && rc == 0)
        rc = nopi_fault(err, NOP_FAULT_HOST, "cannot send the result");
    return rc;   /* r is freed with the process (its output went by page reference) */
}

static int take_run(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    return nopi_run_take(ctx, type, data, len, own) == 0 ? 0 : -1;
}

/* The cores a run of op (or of reference ref, >= 0) uses, whose time limits its worker's
 * deadline adds up: one, but for a multicore op's kernel (a red team's find: a single-core
 * kernel that said it was in another phase had eight cores' time). */
static int run_cores(const nop_device *dev, const nop_library *lib, int ref)
{
    return ref >= 0 ? 1 : nopi_device_cores(dev, lib);
}

/* Runs op (or reference ref, of a valid op) in a one-shot worker process. */
static int run_isolated(nop_device *dev, const nop_library *lib, int op, int ref,
                        const nop_value *args, int nargs, nop_run_result *res, nop_error *err)
{
    run_work rw = { lib, op, ref, args, nargs };
    /* loading the library, binding and the output rules: seconds at most, even for huge
     * tensors; the run's phases come on top (nopi_watch_read) */
    double budget = 5.0;
    char name[256];   /* as the worker's phases name it (watch.c believes no other) */
    nopi_op_qualname(lib, lib->desc->ops[op].name, name, sizeof name);
    int rc = nopi_sandbox_call(dev, name, lib->path, budget, 1, run_cores(dev, lib, ref),
                               run_in_worker, &rw, take_run, res, err);
    if (rc != 0) {
        nopi_tensor_free(res->output);
        res->output = NULL;
    }
    return rc;
}

/* ---- a kept zygote: requests with their inputs in a memfd --------------------------------- */

/* A request: this, then nargs kept_arg, then the op's name (name_len bytes), then the
 * library's path (path_len bytes). */
struct kept_req {
    int32_t op, ref, nargs;
    uint32_t path_len;
    uint64_t map_bytes;         /* the memfd's size */
    uint32_t name_len;          /* the op as the caller's description of the file names it:
                                 * a rebuild may have put it at another index */
    uint32_t pad_;
};

struct kept_arg {
    int32_t type, is_int, dtype, ndim;   /* is_int 2: a bool Scalar */
    double d;
    int64_t i;
    int64_t sizes[NOPI_MAX_DIMS];
    uint64_t offset;            /* of a tensor's bytes in the memfd */
};

#define ALIGN 64u   /* each tensor's bytes start on a cache line */

/* The memfd a library's runs' inputs go in, mapped here and kept from run to run (a new one
 * each run cost more than the copy). */
typedef struct arena {
    int fd;                     /* -1: none yet */
    unsigned char *map;
    size_t cap;
    unsigned small_runs;        /* runs in a row whose inputs took at most a quarter of it */
    size_t small_need;          /* the most one of them took */
} arena;

/* A library a kept device runs, with a zygote of its own whose children load it before
 * their requests come (so no child ever has another library's code or state), and an arena
 * of its own: a child is given the memfd with each request, and user code that outlived its
 * child's restore (a thread, say: snapshot.h) could keep it and write the inputs of the
 * runs after, which must never be another library's (a red team's thread did so). */
typedef struct kept_lib {
    char *path;                 /* its absolute path; NULL: a free slot */
    struct stat st;             /* the file as it was when the zygote started */
    nopi_server *srv;
    nop_library *loaded;        /* in such a child: the library, once it is loaded */
    unsigned used;              /* when it last ran, to replace the least used */
    arena in;
} kept_lib;

#define KEPT_LIBS 4             /* libraries a kept device keeps a zygote for at once */

/* In a kept zygote's child, before its request comes: loads its library. */
static int prepare_kept(void *ctx, nopi_wire *w, nop_error *err)
{
    kept_lib *kl = ctx;
    nopi_wire_phase(w, NOPI_PHASE_LOAD, 0, "");   /* constructors: bounded from now */
    if (nop_library_open(&kl->loaded, kl->path, err) != 0)
        return -1;
    struct stat now;   /* rebuilt since its zygote started: this child must not serve it */
    if (stat(kl->path, &now) != 0 || !nopi_same_file(&now, &kl->st))
        return nopi_fault(err, NOP_FAULT_HOST, "'%s' changed while it was being loaded; run "
                          "the op again", kl->path);
    return 0;
}

/* Reads len bytes of the inputs' memfd from its start into buf; false on failure (errno). */
static bool read_inputs(int fd, unsigned char *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;   /* the memfd is shorter than the request says */
            return false;
        }
        got += (size_t)n;
    }
    return true;
}

static int serve_kept(nop_device *cdev, void *ctx, const void *data, size_t len, nopi_wire *w,
                      nop_error *err)
{
    const kept_lib *kl = ctx;
    struct kept_req h;
    const char *p = data;
    if (len < sizeof h)
        return nopi_fault(err, NOP_FAULT_HOST, "a malformed request");
    memcpy(&h, p, sizeof h);
    if (h.nargs < 0 || h.nargs > NOP_MAX_ARGS || h.path_len >= PATH_MAX ||
        h.name_len >= PATH_MAX ||
        len != sizeof h + (size_t)h.nargs * sizeof(struct kept_arg) + h.name_len + h.path_len)
        return nopi_fault(err, NOP_FAULT_HOST, "a malformed request");
    /* the inputs are read, not mapped: the child of a server that reuses it would unmap
     * them when it puts itself back, a TLB shootdown across its threads that cost more than
     * the copy (snapshot.c keeps room on the heap for them, up to 8 MiB) */
    unsigned char *map = NULL;
    const char *why = NULL;
    if (h.map_bytes) {
        if (w->in_fd < 0)
            why = "no memfd came with the request";
        else if (h.map_bytes > SIZE_MAX / 2 || !(map = malloc((size_t)h.map_bytes)))
            why = "out of memory";
        else if (!read_inputs(w->in_fd, map, (size_t)h.map_bytes))
            why = strerror(errno);
    }
    /* the memfd is the parent's, writable: no user code of this run (a shape function that
     * maps it, a thread left running) may write the inputs of a later one, of any library */
    if (w->in_fd >= 0)
        close(w->in_fd);
    w->in_fd = -1;
    if (why)
        return nopi_fault(err, NOP_FAULT_HOST, "cannot read the run's inputs: %s", why);
    nop_value vals[NOP_MAX_ARGS];
    memset(vals, 0, sizeof vals);
    for (int a = 0; a < h.nargs; a++) {
        struct kept_arg ka;
        memcpy(&ka, p + sizeof h + (size_t)a * sizeof ka, sizeof ka);
        vals[a] = (nop_value){ (enum nop_argtype)ka.type, NULL, ka.d, ka.i, ka.is_int != 0,
                               ka.is_int == 2 };
        if (ka.type != NOP_ARG_TENSOR)
            continue;
        nt_tensor *t = nopi_tensor_alloc((nt_dtype)ka.dtype, ka.ndim, ka.sizes, true);
        if (!t || ka.offset > h.map_bytes ||
            (uint64_t)t->numel * t->itemsize > h.map_bytes - ka.offset)
            return nopi_fault(err, NOP_FAULT_HOST, "a malformed request");
        t->shape_only = false;   /* its bytes are the copy's; it ends with the request */
        t->data = map ? map + ka.offset : NULL;   /* NULL: every tensor is empty */
        vals[a].tensor = t;
    }
    if (h.path_len != strlen(kl->path) || memcmp(p + len - h.path_len, kl->path, h.path_len))
        return nopi_fault(err, NOP_FAULT_HOST, "a malformed request");
    char *name = strndup(p + len - h.path_len - h.name_len, h.name_len);
    if (!name)
        return nopi_nomem(err);
    int op = h.ref < 0 ? nopi_library_same_op(kl->loaded, h.op, name, err) : h.op;
    free(name);
    if (op < 0)
        return -1;
    nop_run_result r;
    int rc = nopi_device_run_here(cdev, kl->loaded, op, h.ref, vals, h.nargs, &r, err);
    if (nopi_wire_put_run(w, &r) != 0 && rc == 0)
        rc = nopi_fault(err, NOP_FAULT_HOST, "cannot send the result");
    return rc;   /* everything here ends with the request: the child is put back or ends */
}

/* What a device made with keep_worker keeps: a zygote and an arena for each library it
 * runs (up to KEPT_LIBS). */
typedef struct kept {
    kept_lib libs[KEPT_LIBS];
    unsigned clock;
} kept;

/* Ends kl's zygote and frees its arena: the slot is free again. */
static void free_kept_lib(kept_lib *kl)
{
    nopi_server_free(kl->srv);
    free(kl->path);
    if (kl->in.map)
        munmap(kl->in.map, kl->in.cap);
    if (kl->in.fd >= 0)
        close(kl->in.fd);
    *kl = (kept_lib){ .in.fd = -1 };
}

static void free_kept(void *p)
{
    kept *k = p;
    for (int i = 0; i < KEPT_LIBS; i++)
        free_kept_lib(&k->libs[i]);
    free(k);
}

/* The zygote of library path (an absolute path) on dev, started if need be in the least used
 * slot, or started again if the file has changed since (a rebuild: its children have the
 * old one loaded); NULL with err filled. */
static kept_lib *kept_for(nop_device *dev, kept *k, const char *path, nop_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot find '%s': %s", path,
                  strerror(errno));
        return NULL;
    }
    kept_lib *kl = &k->libs[0];
    for (int i = 0; i < KEPT_LIBS; i++) {
        if (k->libs[i].path && strcmp(k->libs[i].path, path) == 0) {
            kl = &k->libs[i];
            if (!nopi_same_file(&st, &kl->st))
                break;
            kl->used = ++k->clock;
            return kl;
        }
        if (k->libs[i].used < kl->used)
            kl = &k->libs[i];
    }
    free_kept_lib(kl);   /* a new zygote gets a new arena, which no child has had yet */
    *kl = (kept_lib){ strdup(path), st, NULL, NULL, ++k->clock, { .fd = -1 } };
    int rc = kl->path ? nopi_server_new(&kl->srv, dev, serve_kept, kl, err) : nopi_nomem(err);
    if (rc == 0)
        rc = nopi_server_library(kl->srv, path, err);
    if (rc != 0) {
        free_kept_lib(kl);
        return NULL;
    }
    nopi_server_prepare(kl->srv, prepare_kept);
    nopi_server_reuse(kl->srv);   /* the calls of one session trust each other */
    /* most libraries keep the default stack; a child whose library does not sizes its own */
    nopi_server_warm(kl->srv, NOP_STACK_DEFAULT_BYTES, nopi_device_max_cores(dev));
    return kl;
}

/* The arena grows for a run's inputs, and would keep a very large call's size for the
 * session: one above ARENA_SHRINK_ABOVE bytes is made smaller, after ARENA_SHRINK_RUNS runs
 * in a row whose inputs each took at most a quarter of it, twice the most they took (at least
 * ARENA_MIN), its pages going back to the host (the Python package's own arena does the same,
 * python/neuronop/_client.py).  A loop that makes one large call among fewer small ones keeps
 * it. */
#define ARENA_SHRINK_ABOVE ((size_t)8 << 20)
#define ARENA_SHRINK_RUNS 64
#define ARENA_MIN ((size_t)1 << 20)

static int map_arena(arena *a, size_t cap, nop_error *err);

/* Makes arena a hold at least bytes; 0, or -1 with err filled. */
static int arena_fit(arena *a, size_t bytes, nop_error *err)
{
    if (bytes <= a->cap) {
        if (a->cap <= ARENA_SHRINK_ABOVE || bytes > a->cap / 4) {
            a->small_runs = 0;
            a->small_need = 0;
            return 0;
        }
        if (bytes > a->small_need)
            a->small_need = bytes;
        if (++a->small_runs < ARENA_SHRINK_RUNS)
            return 0;
        size_t cap = 2 * a->small_need > ARENA_MIN ? 2 * a->small_need : ARENA_MIN;
        return map_arena(a, cap, err);   /* ftruncate gives the pages past cap back */
    }
    return map_arena(a, bytes > 2 * a->cap ? bytes : 2 * a->cap, err);
}

/* Maps arena a (made now, or the one it has, resized) with cap bytes; 0, or -1 with err
 * filled.  Only the last run's child ever mapped it, and has let go of it since. */
static int map_arena(arena *a, size_t cap, nop_error *err)
{
    if (a->map)
        munmap(a->map, a->cap);
    a->map = NULL;
    a->cap = 0;
    a->small_runs = 0;
    a->small_need = 0;
    if ((a->fd < 0 && (a->fd = memfd_create("neuronop-inputs", MFD_CLOEXEC)) < 0) ||
        ftruncate(a->fd, (off_t)cap) != 0 ||
        (a->map = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0)) ==
            MAP_FAILED) {
        a->map = NULL;
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot share the inputs with the "
                         "device process: %s", strerror(errno));
    }
    /* not inherited by the zygotes forked after it, nor so by the user code of their
     * children, which could write the inputs of another library's runs through it */
    madvise(a->map, cap, MADV_DONTFORK);
    a->cap = cap;
    return 0;
}

/* Copies the tensors of args into arena in and describes every argument in a request (*req,
 * *len; caller frees), the tensors' bytes in the arena at *inputs; 0, or -1 with err filled.
 * The arena is rewritten only once the last run has answered: its child read it and closed
 * the memfd before its user code ran. */
static int make_request(arena *in, const char *path, const char *name, int op, int ref,
                        const nop_value *args, int nargs, char **req, size_t *len,
                        size_t *inputs, nop_error *err)
{
    *req = NULL;
    if (nargs < 0 || nargs > NOP_MAX_ARGS)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "%d arguments: an op takes at most "
                         "%d", nargs, NOP_MAX_ARGS);
    size_t name_len = strlen(name);
    struct kept_req h = { op, ref, nargs, (uint32_t)strlen(path), 0, (uint32_t)name_len, 0 };
    struct kept_arg ka[NOP_MAX_ARGS];
    memset(ka, 0, sizeof ka);
    for (int a = 0; a < nargs; a++) {
        const nop_value *v = &args[a];
        ka[a] = (struct kept_arg){ v->type, v->is_int ? 1 + v->is_bool : 0, 0, 0, v->d, v->i,
                                   { 0 }, 0 };
        const nt_tensor *t = v->type == NOP_ARG_TENSOR ? v->tensor : NULL;
        if (!t)
            continue;
        ka[a].dtype = t->dtype;
        ka[a].ndim = t->ndim;
        memcpy(ka[a].sizes, t->sizes, sizeof ka[a].sizes);
        ka[a].offset = h.map_bytes;
        h.map_bytes += ((uint64_t)t->numel * t->itemsize + ALIGN - 1) / ALIGN * ALIGN;
    }
    *len = sizeof h + (size_t)nargs * sizeof *ka + name_len + h.path_len;
    *inputs = (size_t)h.map_bytes;
    int rc = h.map_bytes > SIZE_MAX / 2 ? nopi_nomem(err)
                                        : arena_fit(in, (size_t)h.map_bytes, err);
    if (rc == 0 && !(*req = malloc(*len)))
        rc = nopi_nomem(err);
    if (rc != 0)
        return -1;
    memcpy(*req, &h, sizeof h);
    memcpy(*req + sizeof h, ka, (size_t)nargs * sizeof *ka);
    memcpy(*req + sizeof h + (size_t)nargs * sizeof *ka, name, name_len);
    memcpy(*req + sizeof h + (size_t)nargs * sizeof *ka + name_len, path, h.path_len);
    /* an empty tensor has no byte to copy, and the arena no map until a run has one */
    for (int a = 0; a < nargs; a++)
        if (args[a].type == NOP_ARG_TENSOR && args[a].tensor && args[a].tensor->numel)
            memcpy(in->map + ka[a].offset, args[a].tensor->data,
                   (size_t)args[a].tensor->numel * args[a].tensor->itemsize);
    return 0;
}

/* Runs op (or reference ref, of a valid op) in the child of the kept zygote of its
 * library on dev. */
static int run_kept(nop_device *dev, const nop_library *lib, int op, int ref,
                    const nop_value *args, int nargs, nop_run_result *res, nop_error *err)
{
    kept *k = nopi_device_ext(dev);
    if (!k) {
        if (!(k = calloc(1, sizeof *k)))
            return nopi_nomem(err);
        for (int i = 0; i < KEPT_LIBS; i++)
            k->libs[i].in.fd = -1;
        nopi_device_set_ext(dev, k, free_kept);
    }
    /* the zygote's folder may not be the caller's: a relative path is made absolute (an
     * absolute one is used as it is, which saves a readlink per component on every call;
     * kept_for's stat follows its links) */
    char *real = lib->path[0] == '/' ? NULL : realpath(lib->path, NULL);
    const char *path = lib->path[0] == '/' ? lib->path : real;
    if (!path)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot find '%s': %s", lib->path,
                         strerror(errno));
    char *req = NULL;
    size_t len = 0, inputs = 0;
    kept_lib *kl = kept_for(dev, k, path, err);
    int rc = kl ? make_request(&kl->in, path, lib->desc->ops[op].name, op, ref, args, nargs,
                               &req, &len, &inputs, err) : -1;
    free(real);
    char name[256];
    nopi_op_qualname(lib, lib->desc->ops[op].name, name, sizeof name);
    if (rc == 0)
        rc = nopi_server_call_fd(kl->srv, name, 5.0, 1, run_cores(dev, lib, ref), req, len,
                                 kl->in.map ? kl->in.fd : -1, inputs, take_run, res, err);
    free(req);
    if (rc != 0) {   /* the rest is kept, as run_isolated keeps it: the printf output and the
                      * cores' reports are worth showing after a failure (nop_device_run) */
        nopi_tensor_free(res->output);
        res->output = NULL;
    }
    return rc;
}

/* Runs op (or reference ref) in a worker: a kept zygote's child, or a one-shot worker. */
static int run_elsewhere(nop_device *dev, const nop_library *lib, int op, int ref,
                         const nop_value *args, int nargs, nop_run_result *res,
                         nop_error *err)
{
    memset(res, 0, sizeof *res);
    if (op < 0 || op >= lib->desc->nops)
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no op %d in '%s'", op,
                         lib->desc->name);
    int rc = nopi_device_opts(dev).keep_worker ? run_kept(dev, lib, op, ref, args, nargs, res, err)
             : run_isolated(dev, lib, op, ref, args, nargs, res, err);
    if (rc == 0 && !res->output) {   /* "it went well", and no output: a DONE record forged */
        char name[256];              /* alone crashed run and the Python supervisor, which
                                      * took it for a result (a red team's find) */
        nopi_op_qualname(lib, lib->desc->ops[op].name, name, sizeof name);
        rc = nopi_malformed(err, name);
    }
    return rc;
}

int nop_device_run(nop_device *dev, const nop_library *lib, int op, const nop_value *args,
                   int nargs, nop_run_result *res, nop_error *err)
{
    if (nopi_device_opts(dev).isolate)
        return run_elsewhere(dev, lib, op, -1, args, nargs, res, err);
    return nopi_device_run_here(dev, lib, op, -1, args, nargs, res, err);
}

int nop_device_run_reference(nop_device *dev, const nop_library *lib, int ref,
                             const nop_value *args, int nargs, nop_run_result *res,
                             nop_error *err)
{
    if (ref < 0 || ref >= lib->desc->nrefs) {
        memset(res, 0, sizeof *res);
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no reference function %d in '%s'",
                         ref, lib->desc->name);
    }
    int op = lib->desc->refs[ref].op;
    if (nopi_device_opts(dev).isolate)
        return run_elsewhere(dev, lib, op, ref, args, nargs, res, err);
    return nopi_device_run_here(dev, lib, op, ref, args, nargs, res, err);
}
