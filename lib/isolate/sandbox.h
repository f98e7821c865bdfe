/*
 * sandbox.h - running user code in a worker process (internal; see sandbox.c, the server;
 * worker.c, the worker's side; wire.c, the records it writes; watch.c and take.c, the parent
 * reading and decoding them; channel.c, requests; seccomp.c, the confinement).
 *
 * The worker is a child of the calling process: it inherits the caller's memory (the library,
 * the inputs) copy-on-write, makes an in-process device of its own, confines itself, and then
 * serves requests, one after another, sending what came of each back as records over a pipe
 * (a fork server: `neuronop test` forks one worker for all its cases, not one per case).  The
 * caller keeps the verdict: a worker that dies, exits early, or misses a deadline is a device
 * error for the request it was serving, and every record it sends is checked before it is
 * believed.  Ownership: a nopi_server belongs to one caller and one device; nothing here is
 * process-wide, so two devices in one process have workers of their own (the one static,
 * seccomp.c's descriptor for its signal handler, is set only inside a worker).  Functions
 * that can fail return 0 or -1, filling a nop_error where they take one; none prints or exits
 * (the worker's own loop ends with _exit).
 */
#ifndef NEURONOP_SANDBOX_H
#define NEURONOP_SANDBOX_H

#include "device/device.h"

/* Record types.  Each record is a uint32 type, a uint64 length and its payload. */
enum nopi_rec {
    NOPI_REC_DIAG = 1,      /* a nop_diag, sent as it happens */
    NOPI_REC_DONE,          /* struct nopi_done: the work ended; last record */
    NOPI_REC_OUTPUT,        /* struct nopi_tensor_hdr: a run's output; its data follows */
    NOPI_REC_OUTPUT_DATA,   /* the output's bytes (kept without a copy when large) */
    NOPI_REC_PRINTF,        /* a run's printf text */
    NOPI_REC_CORES,         /* a run's nop_core_report array */
    NOPI_REC_RUN,           /* struct nopi_run_hdr: a run's scalars */
    NOPI_REC_TRACE,         /* struct nopi_trace_hdr + spans: one core's trace, in core order */
    NOPI_REC_USER,          /* first type a caller of nopi_sandbox_call may use (9: the
                             * hostile fixtures forge records by number) */
    NOPI_REC_PRINTF_LOST = 1 << 30,   /* no payload: the run's oldest printf text was lost
                                       * (the parent says so of a worker that died, to its
                                       * take: sandbox.c; never a caller's) */
};

#define NOPI_PHASE_PRINTF (128 << 10)   /* profile.c's bound on printf_buffer */

/* The phase a worker is in, on a page it shares with its parent (a zygote's child, a page of
 * its own) rather than as a record, so that entering a phase (three per run) does not wake
 * the parent, which looks at the page a few times a second and when records come.  The worker writes it under a sequence count (odd
 * while it writes); the parent lets it only bring a deadline earlier and name, among the
 * op's own places, where the worker is (watch.c). */
struct nopi_phase_page {
    _Atomic uint32_t seq;
    int32_t kind;           /* enum nopi_phase_kind */
    int32_t ncores;         /* NOPI_PHASE_CORES: cores to run */
    double start;           /* nopi_now() when it began */
    char what[256];         /* "relu: shape function 'relu_shape'" */
    /* The current run's kernel printf text as it is written (nopi_wire_printf), which the
     * run's records carry too: what the parent shows when the worker dies before it sends
     * them.  A ring of the last NOPI_PHASE_PRINTF bytes (the most a device's printf ring
     * holds), on pages of its own after the first; printf_total counts the run's bytes.  (A
     * page of 33 pages: tests/fixtures/hostile finds it in /proc/self/maps by that size.) */
    _Atomic uint64_t printf_total;
    _Alignas(4096) char printf_ring[NOPI_PHASE_PRINTF];
};

/* How a trapped system call came (seccomp.c). */
enum nopi_trap { NOPI_TRAP_NONE, NOPI_TRAP_NATIVE, NOPI_TRAP_32BIT, NOPI_TRAP_X32 };

struct nopi_done {
    int32_t rc;             /* the work's return value: 0 or -1 */
    int32_t retire;         /* the worker ends after this request: the next gets a new one */
    int32_t trapped;        /* enum nopi_trap: the work ended at a trapped call ... */
    int32_t trapped_nr;     /* ... of this number, which the parent names ... */
    int32_t trapped_in;     /* ... made by this enum nopi_role (NONE: outside any core) */
    nop_error err;          /* with rc -1 (with trapped: only its where) */
};

/* The worker's end of the record pipe (wire.c writes it). */
typedef struct nopi_wire {
    int fd;
    pthread_mutex_t lock;   /* cores on several threads send diagnostics */
    bool retire;            /* set by nopi_wire_retire */
    struct nopi_phase_page *phase;   /* shared with the parent */
    int in_fd;              /* the descriptor that came with the request, or -1 */
    bool copy;              /* outputs go by copy, never by page reference: a kept worker
                             * rewrites its pages once the request is answered */
} nopi_wire;

/* Writes (or reads) exactly len bytes, going on after signals; -1 on an error or at end of
 * file. */
int nopi_fd_all(int fd, void *data, size_t len, bool writing);
/* Sends a record (from the worker); -1 when the parent is gone. */
int nopi_wire_put(nopi_wire *w, uint32_t type, const void *data, size_t len);
/* Sends a run's result: its scalars, output, printf text, per-core reports and trace.  The
 * output goes by reference to its pages unless w copies (nopi_wire_copies): leave it
 * untouched until the request has ended. */
int nopi_wire_put_run(nopi_wire *w, const nop_run_result *r);
/* Whether what w sends is copied into the pipe (w->copy: a worker put back between requests),
 * so that the caller may free or reuse a result's output as soon as it is sent. */
static inline bool nopi_wire_copies(const nopi_wire *w)
{
    return w->copy;
}
/* Enters a phase (from the worker): the parent's deadline is now the phase's. */
void nopi_wire_phase(nopi_wire *w, int kind, int ncores, const char *what);
/* A diagnostics sink (nop_device_opts.diag) for the worker: ctx is the wire. */
void nopi_wire_diag(void *w, const nop_diag *d);
/* Writes n bytes of a run's printf text at s into w's phase page (s NULL: a run begins). */
void nopi_wire_printf(void *w, const char *s, size_t n);
/* Asks (from the worker, during a request) that the worker end once the request is answered:
 * work that failed may have left it broken, and the next request gets a fresh one. */
void nopi_wire_retire(nopi_wire *w);

/* What the worker does: work on cdev, an in-process device like the caller's, sending what
 * the parent needs through w; returns 0 or -1 with err filled. */
typedef int nopi_work_fn(nop_device *cdev, void *ctx, nopi_wire *w, nop_error *err);
/* Receives, in the parent, each record the worker sent that sandbox.c does not handle
 * itself (those of a run: pass them to nopi_run_take; and NOPI_REC_USER ones).  The data
 * is untrusted and valid only during the call, unless *own is not NULL: then data is that
 * malloc'd block (a large record, read straight into it), which the callee may keep by
 * setting *own to NULL.  Returns 0, or -1 to reject the record (malformed: the work fails).
 * DONE comes too, with no data, before the watch takes it: so that a result left incomplete
 * (nopi_run_take) is refused. */
typedef int nopi_take_fn(void *ctx, uint32_t type, const void *data, size_t len, void **own);

/* What a server's worker does for one request: like nopi_work_fn, with the request's bytes
 * (len of them at req; the worker's copy, valid during the call). */
typedef int nopi_serve_fn(nop_device *cdev, void *ctx, const void *req, size_t len,
                          nopi_wire *w, nop_error *err);

/* A fork server: a zygote process for device dev, started by the first request, which forks
 * a fresh child to run serve(.., ctx, ..) for each request (or reuses one: nopi_server_reuse).
 * What ctx points to is the child's copy as it was when the zygote was forked (changes a
 * child makes stay in it, and the next child starts from the zygote's state again).  A zygote that dies or whose child
 * misses its deadline is replaced by a new one for the next request. */
typedef struct nopi_server nopi_server;
/* Makes a server (it starts no process yet); 0, or -1 on no memory. */
int nopi_server_new(nopi_server **out, nop_device *dev, nopi_serve_fn *serve, void *ctx,
                    nop_error *err);
/* What a server's child does once it is ready and before its request comes (on ctx, its copy
 * of the server's), while the request before it runs: loading a library that every request
 * to the server uses, say (announce NOPI_PHASE_LOAD first: it is bounded as a shape function
 * from then).  Returns 0, or -1 with err filled, which then answers the request. */
typedef int nopi_prepare_fn(void *ctx, nopi_wire *w, nop_error *err);
/* Gives the server's children prepare to run before their requests; call it before the
 * first request. */
void nopi_server_prepare(nopi_server *s, nopi_prepare_fn *prepare);
/* Lets a child of the server serve request after request, put back between them to the
 * state it had before its first (snapshot.h: its memory, mappings, signal handlers,
 * descriptors), instead of a fresh child for each: no fork, exit or library load per
 * request.  A child that cannot be put back ends, and the next request gets a fresh one;
 * so does every request where the kernel cannot track writes.  Only for requests that trust
 * each other: what one request's user code does on purpose to defeat the restore can reach
 * the next request's (never a verdict, which the parent makes).  Call it before the first
 * request. */
void nopi_server_reuse(nopi_server *s);
/* Names the library file the server's children load (path, copied): once confined they may
 * read it and its library folder, and of the rest of the file system only the system's
 * library folders (where the kernel has Landlock; worker.c).  A server that names none reads
 * only those.  Call it before the first request; 0, or -1 on no memory. */
int nopi_server_library(nopi_server *s, const char *path, nop_error *err);
/* Names that library's folder (copied), for a library built outside it (neuronop test
 * --build-dir): the children may read it rather than the one they would find beside the
 * file.  0, or -1 on no memory. */
int nopi_server_folder(nopi_server *s, const char *folder, nop_error *err);
/* Fills err with the failure of a worker whose records were not as they must be (where: the
 * op, or NULL to leave it for the caller); returns -1. */
int nopi_malformed(nop_error *err, const char *where);
/* The caller holds up to n outputs of this server's requests (and others') at once, as
 * neuronop test holds an op's first execution's, the current one's and its reference's: each
 * record may then hold a n-th of what one alone may (half the memory neuronop may use), so
 * that together they are bounded by it (a red team's find: twice it was held). */
void nopi_server_outputs_held(nopi_server *s, int n);
/* Asks the server's zygote to prepare, once, a device whose stacks (stack_size bytes, on
 * ncores cores), TCM and buffers its children inherit, as a first run would make them: each
 * request's child then touches only the pages its run writes.  Call it before the first
 * request; a child whose run needs other sizes makes them itself. */
void nopi_server_warm(nopi_server *s, size_t stack_size, int ncores);
/* Sends a request of len bytes (or takes the one nopi_server_post sent: req NULL) and passes
 * what the worker sends back to take(take_ctx, ...), until the request is answered.  budget
 * is how long it may take in seconds besides the phases it announces (each a run's timeout
 * per core); runs is how many runs it may make (each may take its shape function's and all
 * its cores' timeouts, one after another, with a grace), on at most ncores cores each (one
 * for a reference or an op that is not multicore; 0: the device's most); runs 0 means any
 * number, and then budget bounds the whole request.  These alone set its limit: nothing the worker writes
 * extends it.  Returns serve's own 0 or -1 (with its error) when the worker answered and
 * ended cleanly; -1 with a device error naming opname (or the phase it was in) when it died,
 * ended early, sent garbage or missed its deadline. */
int nopi_server_call(nopi_server *s, const char *opname, double budget, int runs, int ncores,
                     const void *req, size_t len, nopi_take_fn *take, void *take_ctx,
                     nop_error *err);
/* As nopi_server_call, with descriptor pass (unless -1) sent along with the request: the
 * child serving it finds its own copy in its wire's in_fd.  pass_bytes is how much of it the
 * request uses (a run's inputs), by which the record pipe is sized. */
int nopi_server_call_fd(nopi_server *s, const char *opname, double budget, int runs,
                        int ncores, const void *req, size_t len, int pass, size_t pass_bytes,
                        nopi_take_fn *take, void *take_ctx, nop_error *err);
/* Sends a request of len bytes to the zygote's next child now and returns without waiting
 * for it, so that the child works while the caller does something else (another server's
 * call, on another CPU).  The request is then either answered by the next
 * nopi_server_call(s, opname, ..., NULL, 0, ...), which reads its records as if it had sent
 * it then (its limit is counted from that call: the child has had the time between too, no
 * more than the caller took), or given up with nopi_server_forget.  Only for a server whose
 * children are not reused.  0, or -1 with err filled when nothing could be sent (call
 * nopi_server_call with the request then). */
int nopi_server_post(nopi_server *s, const void *req, size_t len, nop_error *err);
/* Gives up the request nopi_server_post sent, unread: what its child sends reaches no one,
 * and the zygote kills the child at once (told so; a zygote that cannot be is killed with
 * it).  Nothing when no request was posted. */
void nopi_server_forget(nopi_server *s);
/* Kills the server's worker (the device reaps it by its next call or nop_device_free) and
 * frees the server; NULL is fine. */
void nopi_server_free(nopi_server *s);

/* One request to a worker of its own: runs work(.., work_ctx, ..) in a worker process for
 * device dev, which may read library as a server's children may (nopi_server_library; NULL:
 * none); returns as nopi_server_call does. */
int nopi_sandbox_call(nop_device *dev, const char *opname, const char *library, double budget,
                      int runs, int ncores, nopi_work_fn *work, void *work_ctx, nopi_take_fn *take,
                      void *take_ctx, nop_error *err);

/* watch.c: what the parent knows of a worker while it reads one request's records.  The
 * caller fills the fields above the line; nopi_watch_read the others. */
typedef struct nopi_watch {
    nop_device *dev;                /* whose diagnostics sink gets the worker's */
    const struct nopi_phase_page *phase;
    uint32_t seq;                   /* the phase page's count when last read */
    const char *op;                 /* the op the request is for */
    double budget, timeout;         /* the request's own seconds; a kernel's time limit */
    int runs, ncores;               /* runs it may make (0: budget bounds all); cores a run
                                     * may use at most */
    nopi_take_fn *take;             /* the records sandbox.c does not handle */
    void *ctx;
    uint64_t max_record;            /* the most bytes one record may hold (0: worked out by
                                     * nopi_watch_start, nopi_watch_record_bound) */
    int held;                       /* outputs the caller holds at once, each bounded by a
                                     * share of it (0: one; nopi_server_outputs_held) */
    /* ---- */
    double limit_s, limit;          /* the request's end at the latest: seconds, and when */
    double deadline;                /* the limit, or the current phase's end if earlier */
    int phases_left;                /* changes of phase still believable; -1: any number */
    char where[256];                /* the phase it is in, as diagnostics name it */
    long diags_left;                /* diagnostics it may still send (watch.c's bound) */
    long diags_dropped;             /* those sent beyond it: counted, said once at the end */
    bool done, malformed;           /* DONE came; something was not as it must be */
    bool cgroup_checked;            /* max_record is bounded by the cgroups' memory limit */
    uint64_t oversized;             /* with malformed: an output's bytes, more than max_record */
    struct nopi_done result;        /* with done */
} nopi_watch;
/* Makes every string of d end inside its array, and plain text (nopi_text_clean), and its
 * severity one there is (a worker may have sent anything). */
void nopi_diag_terminate(nop_diag *d);
/* Indents each line of d's detail by two spaces, as a device diagnostic's lines are shown
 * under its message (nopi_diag_terminate does it to the worker's own). */
void nopi_diag_indent(nop_diag *d);
/* The most bytes one record may hold on this machine: MAX_RECORD, or half its memory if
 * less.  It asks the kernel (sysinfo), so a server works it out once, not per request.  A
 * request that meets a record of more than 64 MB also bounds it by half its cgroups' memory
 * limit (a container's), which costs a few file reads. */
uint64_t nopi_watch_record_bound(void);
/* Sets the request's limit from the caller's fields, from now: call it as the request is
 * sent. */
void nopi_watch_start(nopi_watch *wt);
/* Reads records from fd until DONE, end of file or the deadline; false when the deadline
 * passed.  wt->where ends as the phase the worker was last in. */
bool nopi_watch_read(nopi_watch *wt, int fd);

/* take.c, parent side: folds a run's record into *r (which starts zeroed); 1 when the record is not
 * a run's, 0 when taken, -1 when malformed.  own as for nopi_take_fn.  An output's data must
 * follow its description at once: any other record, DONE included, is malformed then. */
int nopi_run_take(nop_run_result *r, uint32_t type, const void *data, size_t len, void **own);
/* take.c: whether a worker's figure of seconds may be believed: a number, not negative, not
 * past a lifetime (a forged NaN came out as "nan" in the JSON reports: a red team's find). */
bool nopi_plausible_seconds(double s);
/* The end of one run's records other than its DONE (a caller's own end record): 0, or -1
 * (malformed) when an output's description came without its data, which is then dropped. */
int nopi_run_taken(nop_run_result *r);

/* run.c: makes the worker's own in-process device, like dev but sending diagnostics and
 * phases through w; NULL on no memory. */
nop_device *nopi_device_for_worker(const nop_device *dev, nopi_wire *w);
/* run.c: makes dev, an in-process device inside a worker, report its diagnostics and phases
 * through w. */
void nopi_device_attach(nop_device *dev, nopi_wire *w);

/* seccomp.c: confines the calling process (the worker, once its device is ready) to the
 * system calls the runtime needs: any other is trapped and reported as a kernel's system call
 * the device does not have.  0, or -1 when the filter cannot be installed (err filled).  fd
 * is the pipe its report goes to; timer, the kernel id of the one timer it may set (its
 * device's, nopi_device_own_timer), or -1. */
int nopi_confine(int fd, int timer, nop_error *err);
/* As nopi_confine, with libc's text given ([0] to [1]) rather than looked up, for the
 * tests of what the filter does when it is not found (0, 0) or spans a 4 GB boundary. */
int nopi_confine_at(int fd, int timer, const uint64_t *libc, nop_error *err);
/* seccomp.c: makes a trapped call's report go to fd from now (a kept worker's request comes
 * with a record pipe of its own). */
void nopi_confine_report_to(int fd);
/* seccomp.c, in the parent: makes a DONE that says its work ended at a trapped call a device
 * error naming that call (the worker sends only its number). */
void nopi_done_trapped(struct nopi_done *done);

#endif /* NEURONOP_SANDBOX_H */
