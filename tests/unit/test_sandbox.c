/* Unit tests of the worker process (lib/isolate/sandbox.c, watch.c, seccomp.c): the fork
 * server's fresh child per request, the bounds on records, and what the seccomp allow-list
 * traps and allows. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <time.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/stat.h>

#include "unit.h"
#include "isolate/sandbox.h"
#include "isolate/server.h"
#include "device/trace.h"
#include "isolate/snapshot.h"
#include "device/fiber.h"

/* ---- the fork server -------------------------------------------------------------------- */

enum { REC_PID = NOPI_REC_USER };

static int left_behind;   /* what a request leaves in its process */

static void *sleeps(void *arg)
{
    struct timespec second = { 1, 0 };
    for (;;)
        nanosleep(&second, NULL);   /* allowed: pause() is not */
    return arg;
}

/* Answers a request with its worker's pid and what an earlier request left; a request
 * "exit" ends the worker instead, one "thread" leaves a thread of its own running. */
static int serve_pid(nop_device *cdev, void *ctx, const void *req, size_t len, nopi_wire *w,
                     nop_error *err)
{
    if (len == 4 && memcmp(req, "exit", 4) == 0)
        _exit(3);
    pthread_t t;
    if (len == 6 && memcmp(req, "thread", 6) == 0 && pthread_create(&t, NULL, sleeps, NULL) != 0)
        return nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, "no thread");
    int32_t pids[3] = { getpid(), 0, left_behind };
    left_behind = 1;
    return nopi_wire_put(w, REC_PID, pids, sizeof pids);
}

static int take_pid(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    if (type == NOPI_REC_DONE)   /* the end: nothing missing */
        return 0;
    if (type != REC_PID || len != 3 * sizeof(int32_t))
        return -1;
    memcpy(ctx, data, len);
    return 0;
}

/* A device of trn1 that isolates (timeout seconds per kernel, 0: the default) and a fork
 * server on it, serving with serve; served_free frees the three. */
typedef struct served {
    nop_profile *profile;
    nop_device *dev;
    nopi_server *srv;
} served;

static served serve_with(nopi_serve_fn *serve, double timeout)
{
    served sv;
    nop_error err;
    nop_device_opts o = { .isolate = true, .timeout = timeout };
    assert_int_equal(nop_profile_load(&sv.profile, "trn1", unit_share_dir(), &err), 0);
    assert_int_equal(nop_device_new(&sv.dev, sv.profile, &o, &err), 0);
    assert_int_equal(nopi_server_new(&sv.srv, sv.dev, serve, NULL, &err), 0);
    return sv;
}

static void served_free(served *sv)
{
    nopi_server_free(sv->srv);
    nop_device_free(sv->dev);   /* reaps the zygote */
    nop_profile_free(sv->profile);
}

/* Announces phase after phase forever: each would postpone the deadline. */
static int serve_forged_phases(nop_device *cdev, void *ctx, const void *req, size_t len,
                               nopi_wire *w, nop_error *err)
{
    for (;;) {
        nopi_wire_phase(w, NOPI_PHASE_CORES, 1, "forged");
        usleep(20000);
    }
    return 0;
}

/* A request of any number of runs (bench timed by seconds) cannot be kept alive by
 * announcing phases: its budget bounds it as a whole. */
static void a_request_of_any_number_of_runs_ends_at_its_budget(void **state)
{
    served sv = serve_with(serve_forged_phases, 0.5);
    nopi_server *srv = sv.srv;
    nop_error err;
    double t0 = nopi_now();
    int32_t pid[3] = { 0 };
    assert_int_equal(nopi_server_call(srv, "op", 1.5, 0, 0, "a", 1, take_pid, pid, &err), -1);
    double took = nopi_now() - t0;
    assert_int_equal(err.kind, NOP_ERR_DEVICE);
    assert_non_null(strstr(err.diag.msg, "timeout"));
    assert_true(took >= 1.4 && took < 5.0);   /* not the 2.5 s each forged phase would give */
    served_free(&sv);
}

/* A child's step before its request: announces loading, as a library's loader does. */
static int prepare_loads(void *ctx, nopi_wire *w, nop_error *err)
{
    nopi_wire_phase(w, NOPI_PHASE_LOAD, 0, "");
    return 0;
}

/* A child made ready (its library loaded) long before its request comes: the request still
 * has its whole time, not what was left of the load's phase (timeout 0.5 s plus 2 s). */
static void a_request_long_after_its_child_got_ready_is_in_time(void **state)
{
    served sv = serve_with(serve_pid, 0.5);
    nopi_server *srv = sv.srv;
    nop_error err;
    nopi_server_prepare(srv, prepare_loads);
    int32_t pid[3] = { 0 };
    assert_int_equal(nopi_server_call(srv, "op", 10, 1, 0, "a", 1, take_pid, pid, &err), 0);
    struct timespec gap = { 2, 700000000 };
    nanosleep(&gap, NULL);   /* the next child has long been ready */
    int rc = nopi_server_call(srv, "op", 10, 1, 0, "b", 1, take_pid, pid, &err);
    if (rc != 0)
        fail_msg("%s: %s", err.diag.where, err.diag.msg);
    served_free(&sv);
}

/* A child's step before its request that never ends, as a library's constructor would
 * (neuronop build refuses them; a library made otherwise may have one). */
static int prepare_hangs(void *ctx, nopi_wire *w, nop_error *err)
{
    nopi_wire_phase(w, NOPI_PHASE_LOAD, 0, "");
    struct timespec nap = { 1, 0 };
    for (;;)
        nanosleep(&nap, NULL);
    return 0;
}

/* Loading is a phase of its own, bounded by the time limit plus 2 s, not by the request's
 * whole limit (10 s here), and the failure names it. */
static void a_load_that_never_ends_is_stopped_within_its_phase(void **state)
{
    served sv = serve_with(serve_pid, 0.5);
    nopi_server_prepare(sv.srv, prepare_hangs);
    nop_error err;
    int32_t pid[3] = { 0 };
    double t0 = nopi_now();
    assert_int_equal(nopi_server_call(sv.srv, "op", 10, 1, 0, "a", 1, take_pid, pid, &err), -1);
    double took = nopi_now() - t0;
    if (!strstr(err.diag.msg, "timeout") || strcmp(err.diag.where, "op: loading the library"))
        fail_msg("%s: %s", err.diag.where, err.diag.msg);
    assert_true(took >= 2.0 && took < 5.0);
    served_free(&sv);
}

/* A forbidden call while loading (fork, raw, as hostile load-time code would make it). */
static int prepare_forks(void *ctx, nopi_wire *w, nop_error *err)
{
    nopi_wire_phase(w, NOPI_PHASE_LOAD, 0, "");
    syscall(SYS_fork);
    return 0;
}

/* A call trapped outside any core is named with the op and the phase it was in.  A
 * zygote's child loads ahead of its request: when the trap ends it before the request
 * reaches it, the request finds no child that took it, which is said as such (CI saw it). */
static void a_call_trapped_while_loading_is_named_with_its_phase(void **state)
{
    served sv = serve_with(serve_pid, 1);
    nopi_server_prepare(sv.srv, prepare_forks);
    nop_error err;
    int32_t pid[3] = { 0 };
    assert_int_equal(nopi_server_call(sv.srv, "op", 10, 1, 0, "a", 1, take_pid, pid, &err), -1);
    bool named = strcmp(err.diag.msg, "user code made a system call the device does not "
                        "have: fork") == 0 &&
                 strcmp(err.diag.where, "op: loading the library") == 0;
    bool early = strcmp(err.diag.msg, "the device process ended before it took any work") == 0;
    if (!named && !early)
        fail_msg("%s: %s", err.diag.where, err.diag.msg);
    served_free(&sv);
}

/* Faults outside any kernel (a runtime wrecked by one). */
static int serve_fault(nop_device *cdev, void *ctx, const void *req, size_t len,
                       nopi_wire *w, nop_error *err)
{
    /* a real fault, as a wrecked runtime's: page 1 (len is 1), aligned, so that no
     * sanitizer takes it for a bug of its own first */
    *(volatile int *)(uintptr_t)(len * 4096) = 1;
    return 0;
}

static void host_handler(int sig)
{
    _exit(42);   /* what a host program's handler might do; never in a worker */
}

/* The caller's signal handlers are not the worker's: a fault there is the worker's death by
 * that signal, not a host program's handler running in it (a test framework's once hung a
 * worker whose heap a kernel had wrecked). */
static void a_worker_does_not_run_the_callers_handlers(void **state)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = host_handler;
    sigaction(SIGSEGV, &sa, &old);
    served sv = serve_with(serve_fault, 0);
    nop_error err;
    int32_t pid[3] = { 0 };
    assert_int_equal(nopi_server_call(sv.srv, "op", 10, 1, 0, "a", 1, take_pid, pid, &err), -1);
    sigaction(SIGSEGV, &old, NULL);
    if (!strstr(err.diag.msg, "segmentation fault (signal 11)"))
        fail_msg("%s", err.diag.msg);
    served_free(&sv);
}

static void each_request_runs_in_a_fresh_child_of_one_zygote(void **state)
{
    served sv = serve_with(serve_pid, 0);
    nopi_server *srv = sv.srv;
    nop_error err;
    int32_t first[3] = { 0 }, again[3] = { 0 }, next[3] = { 0 };
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "a", 1, take_pid, first, &err), 0);
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "b", 1, take_pid, again, &err), 0);
    assert_true(first[0] > 0 && first[0] != getpid());
    assert_int_not_equal(again[0], first[0]);   /* a fresh child ... */
    assert_int_equal(again[2], 0);              /* ... which the last request left nothing in */
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "exit", 4, take_pid, next, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_DEVICE);
    assert_string_equal(err.diag.where, "op");
    assert_non_null(strstr(err.diag.msg, "(exit status 3) before the op finished"));
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "c", 1, take_pid, next, &err), 0);
    served_free(&sv);
    assert_int_equal(kill(first[0], 0), -1);
    assert_int_equal(kill(next[0], 0), -1);
}

/* Whether this kernel and build let a child be put back (snapshot.h): asked in a child, as
 * the zygote's children do. */
static bool children_can_be_put_back(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(nopi_snap_open() ? 0 : 1);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A server that reuses its children serves request after request in one child, put back
 * between them: what a request left is gone.  A child that died, or that cannot be put back
 * (a thread of its own still running), is replaced. */
static void a_reusing_server_puts_its_child_back_between_requests(void **state)
{
    served sv = serve_with(serve_pid, 0);
    nopi_server *srv = sv.srv;
    nopi_server_reuse(srv);
    bool kept = children_can_be_put_back();
    nop_error err;
    int32_t first[3] = { 0 }, again[3] = { 0 }, next[3] = { 0 };
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "a", 1, take_pid, first, &err), 0);
    int changes = 0;   /* requests served by another child than the one before */
    int32_t prev = first[0];
    for (int i = 0; i < 5; i++) {
        assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "b", 1, take_pid, again, &err), 0);
        assert_int_equal(again[2], 0);   /* left_behind is as it was before the first */
        changes += again[0] != prev;
        prev = again[0];
    }
    /* (one restore that took over half a second on a very busy machine costs one child) */
    if (kept)
        assert_true(changes <= 1);
    else
        assert_int_equal(changes, 5);
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "exit", 4, take_pid, next, &err), -1);
    assert_non_null(strstr(err.diag.msg, "(exit status 3) before the op finished"));
    if (nopi_server_call(srv, "op", 10, 0, 0, "thread", 6, take_pid, next, &err) != 0)
        fail_msg("%s: %s", err.diag.where, err.diag.msg);
    assert_int_not_equal(next[0], first[0]);
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, 0, "c", 1, take_pid, again, &err), 0);
    assert_int_not_equal(again[0], next[0]);   /* its thread kept it from being put back */
    assert_int_equal(again[2], 0);
    served_free(&sv);
    assert_int_equal(kill(first[0], 0), -1);
    assert_int_equal(kill(next[0], 0), -1);
    assert_int_equal(kill(again[0], 0), -1);
}

/* ---- a kept zygote (nop_device_opts.keep_worker) ----------------------------------------- */

static const char *const scale_kernel =
    "#include <neuronop.h>\n"
    "static int calls;   /* each run starts as the library was loaded: 1 every time */\n"
    "nt_tensor *scale(const nt_tensor *t, int64_t k) {\n"
    "    calls++;\n"
    "    return nt_mul_s_out(get_dst_tensor(), t, nt_scalar_i(k * calls));\n"
    "}\n";
static const char *const same_shape =
    "#include <neuronop.h>\n"
    "nt_tensor *same(const nt_tensor *t, int64_t k) {\n"
    "    return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }\n";

/* A device of trn1 (*profile, freed by the caller after the device) made with keep_worker,
 * recording each core's timeline when trace. */
static nop_device *kept_device(nop_profile **profile, bool trace)
{
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .isolate = true, .keep_worker = true, .trace = trace };
    assert_int_equal(nop_profile_load(profile, "trn1", unit_share_dir(), &err), 0);
    assert_int_equal(nop_device_new(&dev, *profile, &o, &err), 0);
    return dev;
}

/* Builds in dir library `name` of one op `op`(tensor, int64), whose kernel is `op` in
 * kernel_src and whose shape is the input's (same_shape); the caller closes it. */
static nop_library *one_op_library(const char *dir, const char *name, const char *op,
                                   const char *kernel_src)
{
    char manifest[256];
    snprintf(manifest, sizeof manifest, "name: %s\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
             "ops:\n  %s: {args: [tensor, int64], shape: same, kernel: %s}\n", name, op, op);
    nop_library *lib = unit_build(dir, manifest, kernel_src, same_shape, false);
    assert_non_null(lib);
    return lib;
}

/* Runs op 0 of lib on dev with the tensor generator spec gen makes and k, into *r (the
 * caller clears it); fails the test, with the device's message, when the run fails. */
static void run_tensor_int(nop_device *dev, const nop_library *lib, const char *gen, int64_t k,
                           nop_run_result *r)
{
    nop_error err;
    nop_tensor *t;
    assert_int_equal(nop_tensor_generate(&t, gen, 0, &err), 0);
    nop_value v[2] = { { .type = NOP_ARG_TENSOR, .tensor = t },
                       { .type = NOP_ARG_INT64, .i = k } };
    if (nop_device_run(dev, lib, 0, v, 2, r, &err) != 0)
        fail_msg("%s: %s", err.diag.where, err.diag.msg);
    nop_tensor_free(t);
}

/* Many runs with different inputs, one zygote (no fork of the caller per run), each run in a
 * child put back to the state it had when the library was loaded (or a fresh one), which
 * reads its inputs from a memfd. */
static void a_kept_worker_serves_many_runs_with_different_inputs(void **state)
{
    const char *dir = unit_tmpdir();
    nop_library *lib = one_op_library(dir, "kept", "scale", scale_kernel);
    nop_profile *profile;
    nop_device *dev = kept_device(&profile, false);
    double t0 = 0;
    for (int i = 0; i < 20; i++) {
        if (i == 1)
            t0 = nopi_now();   /* the first run forks the zygote */
        char gen[32];
        snprintf(gen, sizeof gen, "full:%d:%d", 3 + i, i);   /* different each time */
        nop_run_result r;
        run_tensor_int(dev, lib, gen, 3, &r);
        assert_int_equal(nop_tensor_numel(r.output), 3 + i);
        for (int e = 0; e < 3 + i; e++)
            assert_true(nop_tensor_get(r.output, e) == 3.0 * i);
        nop_run_result_clear(&r);
    }
    print_message("kept worker: %.0f us per run\n", (nopi_now() - t0) / 19 * 1e6);
    nop_device_free(dev);
    nop_profile_free(profile);
    nop_library_close(lib);
    unit_cleanup(dir);
}

/* A kernel that writes nothing: of an empty input's output there is nothing to write. */
static const char *const nothing_kernel =
    "#include <neuronop.h>\n"
    "nt_tensor *nothing(const nt_tensor *t, int64_t k) { return get_dst_tensor(); }\n";

/* A kept worker's first run, traced, of an empty input: no byte to share, so the arena is
 * not mapped yet, and the core's trace has no span.  Neither is copied through NULL (memcpy
 * takes no NULL, even for no byte: the sanitized build stops there). */
static void a_kept_worker_runs_an_empty_input_traced(void **state)
{
    const char *dir = unit_tmpdir();
    nop_library *lib = one_op_library(dir, "nothing", "nothing", nothing_kernel);
    nop_profile *profile;
    nop_device *dev = kept_device(&profile, true);
    nop_run_result r;
    run_tensor_int(dev, lib, "zeros:0", 1, &r);
    assert_int_equal(nop_tensor_numel(r.output), 0);
    assert_non_null(r.trace);
    nop_run_result_clear(&r);
    nop_device_free(dev);
    nop_profile_free(profile);
    nop_library_close(lib);
    unit_cleanup(dir);
}

/* A kernel that writes its library's zero-initialized data far apart (three times past the
 * 16 MB mincore asks about at once, beside the library's file-backed data), and counts the
 * writes of the runs before it that it finds: a restore must put every such page back. */
static const char *const dirty_kernel =
    "#include <neuronop.h>\n"
    "static char big[48 << 20];\n"
    "nt_tensor *dirty(const nt_tensor *t, int64_t k) {\n"
    "    int64_t seen = 0;\n"
    "    for (int64_t at = k; at < (int64_t)sizeof big; at += 3 << 20) {\n"
    "        seen += big[at] != 0;\n"
    "        big[at] = 1;\n"
    "    }\n"
    "    return nt_fill_(get_dst_tensor(), nt_scalar_i(seen));\n"
    "}\n";

/* Runs of a kept worker find none of the pages an earlier run wrote, wherever they are in
 * the library's data. */
static void a_kept_worker_puts_back_every_page_a_run_wrote(void **state)
{
    const char *dir = unit_tmpdir();
    nop_library *lib = one_op_library(dir, "dirty", "dirty", dirty_kernel);
    nop_profile *profile;
    nop_device *dev = kept_device(&profile, false);
    for (int i = 0; i < 4; i++) {
        nop_run_result r;
        run_tensor_int(dev, lib, "full:2:0:i64", 4095, &r);
        assert_true(nop_tensor_get(r.output, 0) == 0);   /* none of the last run's writes */
        nop_run_result_clear(&r);
    }
    nop_device_free(dev);
    nop_profile_free(profile);
    nop_library_close(lib);
    unit_cleanup(dir);
}

/* What a shape function of one library's run could write of another's: a descriptor of the
 * kept device's inputs memfd, or a mapping of it (the parent's, inherited), or of another
 * worker's phase page (the parent's read-only mapping of it, inherited and made writable).
 * The output has one element more for each. */
static const char *const reach_shape =
    "#define _GNU_SOURCE\n"
    "#include <neuronop.h>\n"
    "#include <fcntl.h>\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include <unistd.h>\n"
    "#include <sys/mman.h>\n"
    "static int reached;\n"
    "static char maps[1 << 16];\n"
    "nt_tensor *same(const nt_tensor *t) {\n"
    "    reached = 0;\n"
    "    for (int fd = 0; fd < 64; fd++) {\n"
    "        char p[64], l[128];\n"
    "        snprintf(p, sizeof p, \"/proc/self/fd/%d\", fd);\n"
    "        ssize_t n = readlink(p, l, sizeof l - 1);\n"
    "        if (n > 0 && (l[n] = 0, strstr(l, \"neuronop-inputs\")))\n"
    "            reached++;\n"
    "    }\n"
    "    int fd = open(\"/proc/self/maps\", O_RDONLY);\n"
    "    ssize_t n = 0, r;\n"
    "    while (fd >= 0 && (r = read(fd, maps + n, sizeof maps - 1 - n)) > 0)\n"
    "        n += r;\n"
    "    close(fd);\n"
    "    maps[n] = 0;\n"
    "    for (char *l = maps; *l;) {\n"
    "        char *e = strchr(l, '\\n'), perms[5];\n"
    "        unsigned long a, b;\n"
    "        if (e)\n"
    "            *e = 0;\n"
    "        /* its own phase page is rw-s; the parent's, inherited, would be r--s */\n"
    "        if (sscanf(l, \"%lx-%lx %4s\", &a, &b, perms) == 3 &&\n"
    "            (strstr(l, \"neuronop-inputs\") ||\n"
    "             (strstr(l, \"neuronop-phase\") && strcmp(perms, \"r--s\") == 0)) &&\n"
    "            mprotect((void *)a, b - a, PROT_READ | PROT_WRITE) == 0)\n"
    "            reached++;\n"
    "        if (!e)\n"
    "            break;\n"
    "        l = e + 1;\n"
    "    }\n"
    "    int64_t size = 1 + reached;\n"
    "    return nt_empty(1, &size, NT_F32);\n"
    "}\n";
static const char *const reach_kernel =
    "#include <neuronop.h>\n"
    "nt_tensor *reach(const nt_tensor *t) { return nt_fill_(get_dst_tensor(), nt_scalar_f(1)); }\n";

/* Runs op 0 of lib on a device, on four ones; the output's number of elements. */
static int64_t reach(nop_device *dev, nop_library *lib)
{
    nop_tensor *t;
    nop_error err;
    assert_int_equal(nop_tensor_generate(&t, "full:4:1", 0, &err), 0);
    nop_value v = { .type = NOP_ARG_TENSOR, .tensor = t };
    nop_run_result r;
    if (nop_device_run(dev, lib, 0, &v, 1, &r, &err) != 0)
        fail_msg("%s", err.diag.msg);
    int64_t got = nop_tensor_numel(r.output);
    nop_run_result_clear(&r);
    nop_tensor_free(t);
    return got;
}

/* No user code of a kept device's run can write what another run reads: its inputs, in the
 * memfd the parent writes every run's into (the child reads them and closes it before user
 * code runs; the parent's mapping of it is not inherited), or another library's phase page
 * (the parent keeps its mapping of it between runs, not inherited either). */
static void a_kept_worker_reaches_no_other_runs_inputs_or_phase_page(void **state)
{
    const char *dir = unit_tmpdir();
    char a_dir[300], b_dir[300];
    snprintf(a_dir, sizeof a_dir, "%s/a", dir);
    snprintf(b_dir, sizeof b_dir, "%s/b", dir);
    assert_int_equal(mkdir(a_dir, 0700), 0);
    assert_int_equal(mkdir(b_dir, 0700), 0);
    const char *manifest = "compute_srcs: [k.c]\nshape_srcs: [s.c]\n"
                           "ops:\n  reach: {args: [tensor], shape: same, kernel: reach}\n";
    char ma[200], mb[200];
    snprintf(ma, sizeof ma, "name: reach_a\n%s", manifest);
    snprintf(mb, sizeof mb, "name: reach_b\n%s", manifest);
    nop_library *a = unit_build(a_dir, ma, reach_kernel, reach_shape, false);
    nop_library *b = unit_build(b_dir, mb, reach_kernel, reach_shape, false);
    assert_non_null(a);
    assert_non_null(b);
    nop_profile *profile;
    nop_device *dev = kept_device(&profile, false);
    /* a twice (its child's phase page is then one the parent keeps), then b, whose zygote the
     * parent forks after both */
    assert_int_equal(reach(dev, a), 1);
    assert_int_equal(reach(dev, a), 1);
    assert_int_equal(reach(dev, b), 1);
    assert_int_equal(reach(dev, a), 1);
    nop_device_free(dev);
    nop_profile_free(profile);
    nop_library_close(a);
    nop_library_close(b);
    unit_cleanup(dir);
}

/* ---- records ---------------------------------------------------------------------------- */

static int take_nothing(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    return 0;
}

/* Reads what a worker wrote (the head of a record of this type and tail bytes) as the parent
 * would, in a child whose address space is 256 MiB (not under AddressSanitizer); returns
 * "malformed", "eof" or "died". */
static const char *read_records(uint32_t type, uint64_t claimed, size_t tail)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[1]);
#ifndef __SANITIZE_ADDRESS__   /* its shadow memory cannot live in 256 MiB: the plain run
                                 * holds the bound, this one the outcomes */
        struct rlimit rl = { 256u << 20, 256u << 20 };
        setrlimit(RLIMIT_AS, &rl);
#endif
        static struct nopi_phase_page page;
        nopi_watch wt = { .phase = &page, .op = "op", .budget = 5, .timeout = 1,
                          .take = take_nothing };
        nopi_watch_start(&wt);
        nopi_watch_read(&wt, fds[0]);
        _exit(wt.malformed ? 1 : 0);
    }
    close(fds[0]);
    char zeros[4096] = { 0 };
    /* a reader that finds the head malformed ends without reading the rest: the writes
     * after that fail (EPIPE), and must not end this test program */
    void (*was)(int) = signal(SIGPIPE, SIG_IGN);
    (void)!write(fds[1], &type, sizeof type);
    (void)!write(fds[1], &claimed, sizeof claimed);
    for (size_t sent = 0; sent < tail; sent += sizeof zeros)
        if (write(fds[1], zeros, sizeof zeros) < 0)
            break;
    signal(SIGPIPE, was);
    close(fds[1]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return !WIFEXITED(status) ? "died" : WEXITSTATUS(status) ? "malformed" : "eof";
}

/* A header claiming 3 GiB costs the parent only the bytes that came; one claiming more than
 * a record may hold is malformed before anything is read. */
static void a_record_is_bounded_before_anything_is_allocated(void **state)
{
    assert_string_equal(read_records(NOPI_REC_OUTPUT_DATA, 3ull << 30, 100000), "eof");
    assert_string_equal(read_records(NOPI_REC_OUTPUT_DATA, 1ull << 40, 0), "malformed");
}

/* Each record type is bounded by what it can hold (t0227): printf text by what the device's
 * ring holds, per-core reports by the cores, a diagnostic by its size; a claim beyond that is
 * malformed at its header, before its bytes come (the output's bound would let them). */
static void a_record_is_bounded_by_what_its_type_holds(void **state)
{
    assert_string_equal(read_records(NOPI_REC_PRINTF, NOPI_PHASE_PRINTF + 1, 100000),
                        "malformed");
    assert_string_equal(read_records(NOPI_REC_PRINTF, NOPI_PHASE_PRINTF, 100000), "eof");
    assert_string_equal(read_records(NOPI_REC_CORES, (NOPI_MAX_CORES + 1) *
                                     sizeof(nop_core_report), 100000), "malformed");
    assert_string_equal(read_records(NOPI_REC_DIAG, sizeof(nop_diag) + 1, 0), "malformed");
    assert_string_equal(read_records(NOPI_REC_TRACE, 1u << 20, 100000), "malformed");
}

/* An output's description must be followed by all its data: another record, the run's DONE
 * or a caller's end of a run leaves no output of zeros to be judged (a red team's forged 1
 * GiB description had the parent compare zeros for minutes: tests/fixtures/forgedout, whose
 * numbers are pinned here). */
static void an_output_without_its_data_is_malformed(void **state)
{
    _Static_assert(NOPI_REC_DONE == 2 && NOPI_REC_OUTPUT == 3 && NOPI_REC_OUTPUT_DATA == 4 &&
                   NOPI_REC_USER == 9 && sizeof(struct nopi_done) == 4392 &&
                   8 + sizeof(nop_error) == 4380, "tests/fixtures/forgedout/s.c's numbers");
    struct nopi_tensor_hdr h = { NT_F32, 1, { 2 } };
    float data[2] = { 1.0f, -2.0f };
    uint32_t next[] = { NOPI_REC_DONE, NOPI_REC_PRINTF, NOPI_REC_OUTPUT };
    for (size_t i = 0; i < sizeof next / sizeof *next; i++) {
        nop_run_result r;
        memset(&r, 0, sizeof r);
        assert_int_equal(nopi_run_take(&r, NOPI_REC_OUTPUT, &h, sizeof h, NULL), 0);
        assert_int_equal(nopi_run_take(&r, next[i], next[i] == NOPI_REC_OUTPUT ? (void *)&h
                                       : "x", next[i] == NOPI_REC_OUTPUT ? sizeof h
                                       : next[i] == NOPI_REC_PRINTF, NULL), -1);
        assert_null(r.output);
        if (next[i] == NOPI_REC_PRINTF)   /* taken still: a dead worker's text is shown */
            assert_string_equal(r.printf_text, "x");
        nop_run_result_clear(&r);
    }
    nop_run_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(nopi_run_take(&r, NOPI_REC_OUTPUT, &h, sizeof h, NULL), 0);
    assert_int_equal(nopi_run_taken(&r), -1);   /* a caller's own end record */
    assert_null(r.output);
    assert_int_equal(nopi_run_take(&r, NOPI_REC_OUTPUT, &h, sizeof h, NULL), 0);
    assert_int_equal(nopi_run_take(&r, NOPI_REC_OUTPUT_DATA, data, sizeof data, NULL), 0);
    assert_int_equal(nopi_run_take(&r, NOPI_REC_DONE, NULL, 0, NULL), 0);
    assert_int_equal(nopi_run_taken(&r), 0);
    assert_non_null(r.output);
    assert_memory_equal(r.output->data, data, sizeof data);
    nop_run_result_clear(&r);
}

/* A worker's figures are numbers a report can print: a forged NaN of seconds came out as
 * "nan" in run --json (not JSON: a red team's find), and a bool of another value than 0 or
 * 1 is one no C program may read. */
static void a_worker_figure_must_be_plausible(void **state)
{
    nop_run_result r;
    memset(&r, 0, sizeof r);
    struct nopi_run_hdr h = { 1, 0, 6144, 0.5 };
    assert_int_equal(nopi_run_take(&r, NOPI_REC_RUN, &h, sizeof h, NULL), 0);
    double bad[] = { NAN, -1.0, INFINITY, 1e300 };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        h.seconds = bad[i];
        assert_int_equal(nopi_run_take(&r, NOPI_REC_RUN, &h, sizeof h, NULL), -1);
    }
    nop_core_report c[2];
    memset(c, 0, sizeof c);
    c[1].seconds = NAN;
    assert_int_equal(nopi_run_take(&r, NOPI_REC_CORES, c, sizeof c, NULL), -1);
    assert_null(r.cores);   /* not kept to be shown (a failed run's reports are) */
    assert_int_equal(r.ncores, 0);
    nop_run_result_clear(&r);
    memset(&r, 0, sizeof r);
    c[1].seconds = 0.25;
    memset(&c[0].failed, 2, 1);
    assert_int_equal(nopi_run_take(&r, NOPI_REC_CORES, c, sizeof c, NULL), -1);
    assert_null(r.cores);
    nop_run_result_clear(&r);
    memset(&r, 0, sizeof r);
    memset(&c[0].failed, 1, 1);
    assert_int_equal(nopi_run_take(&r, NOPI_REC_CORES, c, sizeof c, NULL), 0);
    assert_true(r.cores[0].failed);
    /* a core's trace: its points' seconds too (a reviewer's find: "ts": nan in --trace) */
    struct { struct nopi_trace_hdr h; nopi_trace_span s; } tr;
    memset(&tr, 0, sizeof tr);
    tr.h.nspans = 1;
    tr.s.b.host = NAN;
    assert_int_equal(nopi_run_take(&r, NOPI_REC_TRACE, &tr, sizeof tr, NULL), -1);
    assert_true(!r.trace || r.trace->ncores == 0);
    tr.s.b.host = 0.5;
    tr.h.end.counted = -1;
    assert_int_equal(nopi_run_take(&r, NOPI_REC_TRACE, &tr, sizeof tr, NULL), -1);
    tr.h.end.counted = 1e12;   /* cycles may pass a lifetime's seconds */
    assert_int_equal(nopi_run_take(&r, NOPI_REC_TRACE, &tr, sizeof tr, NULL), 0);
    nop_run_result_clear(&r);
}

/* A worker's diagnostic cannot print a line of its choosing at the start of a line (t0230):
 * its message is one line, its detail's lines are indented, each cut inside its array. */
static void a_worker_diagnostic_prints_no_line_of_its_own(void **state)
{
    static nop_diag d;
    memset(&d, 0, sizeof d);
    snprintf(d.msg, sizeof d.msg, "forged\nok    wrong (5 executions)\n1 passed, 0 failed");
    snprintf(d.detail, sizeof d.detail, "called at k.c:3\n    3 |     x;\nFAIL  y: z");
    snprintf(d.where, sizeof d.where, "op\n2 passed");
    nopi_diag_terminate(&d);
    assert_string_equal(d.msg, "forged?ok    wrong (5 executions)?1 passed, 0 failed");
    assert_string_equal(d.detail, "  called at k.c:3\n      3 |     x;\n  FAIL  y: z");
    assert_string_equal(d.where, "op?2 passed");
    memset(d.detail, '\n', sizeof d.detail);   /* every line indented: the end is cut */
    nopi_diag_terminate(&d);
    assert_int_equal(strlen(d.detail), sizeof d.detail - 1);
    assert_memory_equal(d.detail, "  \n  \n", 6);
}

/* ---- the seccomp filter ----------------------------------------------------------------- */

/* Runs call in a confined child; returns the name the trap reported, "" when the call was
 * allowed (its result in *ret), or "died" when the child died without a report. */
static pid_t parent;   /* the confined child's */
static bool with_timer;   /* the child makes its timer first, as a kept worker does */
static int own_timer = -1;   /* the child's timer, or -1 */
static const uint64_t *libc_given;   /* libc's text for nopi_confine_at; NULL: looked up */

static const char *confined(long (*call)(void), long *ret)
{
    static struct nopi_done done;
    parent = getpid();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nop_error err;
        own_timer = with_timer ? nopi_thread_timer_new() : -1;
        if ((with_timer && own_timer < 0) ||
            nopi_confine_at(fds[1], own_timer, libc_given, &err) != 0)
            _exit(2);
        long r = call();
        (void)!write(fds[1], &r, sizeof r);
        _exit(0);
    }
    close(fds[1]);
    char buf[sizeof(uint32_t) + sizeof(uint64_t) + sizeof done];
    size_t have = 0;
    ssize_t n;
    while ((n = read(fds[0], buf + have, sizeof buf - have)) > 0)
        have += (size_t)n;
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (have == sizeof *ret) {
        memcpy(ret, buf, sizeof *ret);
        return "";
    }
    if (have != sizeof buf)
        return "died";
    memcpy(&done, buf + sizeof(uint32_t) + sizeof(uint64_t), sizeof done);
    if (done.trapped == NOPI_TRAP_NONE)
        return "no trap";
    nopi_done_trapped(&done);   /* as the parent names it */
    const char *colon = strstr(done.err.diag.msg, "does not have: ");
    return colon ? colon + strlen("does not have: ") : done.err.diag.msg;
}

/* The parent words a trap from the role the worker sent, which is the worker's account: a
 * number outside the roles (a forged record) is named "user code", never read as text. */
static void a_trapped_calls_role_is_named_and_a_forged_one_is_user_code(void **state)
{
    (void)state;
    static const struct { int32_t role; const char *opening; } roles[] = {
        { NOPI_ROLE_KERNEL, "kernel made" }, { NOPI_ROLE_SHAPE, "shape function made" },
        { NOPI_ROLE_REFERENCE, "reference function made" }, { NOPI_ROLE_NONE, "user code made" },
        { 99, "user code made" }, { -7, "user code made" },
    };
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++) {
        struct nopi_done done;
        memset(&done, 0, sizeof done);
        done.trapped = NOPI_TRAP_NATIVE;
        done.trapped_nr = SYS_fork;
        done.trapped_in = roles[i].role;
        nopi_done_trapped(&done);
        assert_int_equal(strncmp(done.err.diag.msg, roles[i].opening,
                                 strlen(roles[i].opening)), 0);
        assert_non_null(strstr(done.err.diag.msg, "does not have: fork"));
        assert_int_equal(nop_error_fault(&done.err), NOP_FAULT_SYSCALL);
    }
}

static long do_fork(void) { return syscall(SYS_fork); }
static long do_process_clone(void) { return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); }
static long do_execve(void) { return syscall(SYS_execve, "/bin/true", NULL, NULL); }
static long do_open_write(void) { return syscall(SYS_openat, AT_FDCWD, "/tmp/x", O_WRONLY); }
static long do_open_create(void)
{
    return syscall(SYS_openat, AT_FDCWD, "/tmp/x", O_RDONLY | O_CREAT, 0644);
}
static long do_open_read(void) { return syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY); }
static long do_unlink(void) { return syscall(SYS_unlinkat, AT_FDCWD, "/tmp/nothing", 0); }
static long do_socket(void) { return syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0); }
static long do_kill_other(void) { return syscall(SYS_kill, 1, 0); }
static long do_tgkill_other(void) { return syscall(SYS_tgkill, 1, 1, 0); }
static long do_vfork(void) { return syscall(SYS_vfork); }
static long do_creat(void) { return syscall(SYS_creat, "/tmp/x", 0644); }
static long do_mkdir(void) { return syscall(SYS_mkdirat, AT_FDCWD, "/tmp/x", 0755); }
static long do_rename(void) { return syscall(SYS_renameat2, AT_FDCWD, "/a", AT_FDCWD, "/b", 0); }
static long do_ptrace(void) { return syscall(SYS_ptrace, 0, 0, 0, 0); }
static long do_connect(void) { return syscall(SYS_connect, 0, NULL, 0); }
static long do_kill_self(void) { return syscall(SYS_kill, getpid(), 0); }
static long do_tgkill_self(void) { return syscall(SYS_tgkill, getpid(), gettid(), 0); }
static long do_clone3(void) { return syscall(SYS_clone3, NULL, 0) < 0 ? errno : 0; }
static long do_write(void) { return syscall(SYS_write, 1, "", 0); }

static long do_openat2_create(void)
{
    struct open_how how = { .flags = O_WRONLY | O_CREAT, .mode = 0644 };
    return syscall(SYS_openat2, AT_FDCWD, "/tmp/x", &how, sizeof how);
}
static long do_io_uring(void)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    return syscall(SYS_io_uring_setup, 4, &p);
}
static long do_link(void) { return syscall(SYS_linkat, AT_FDCWD, "/a", AT_FDCWD, "/b", 0); }
static long do_symlink(void) { return syscall(SYS_symlinkat, "/a", AT_FDCWD, "/b"); }
static long do_mknod(void) { return syscall(SYS_mknodat, AT_FDCWD, "/tmp/x", 0644, 0); }
static long do_truncate(void) { return syscall(SYS_truncate, "/tmp/x", 0); }
static long do_chmod(void) { return syscall(SYS_fchmodat, AT_FDCWD, "/tmp/x", 0777); }
static long do_mount(void) { return syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL); }
static long do_tiocsti(void) { char c = 'x'; return syscall(SYS_ioctl, 0, TIOCSTI, &c); }
static long do_sigqueue(void) { return syscall(SYS_rt_sigqueueinfo, parent, SIGKILL, NULL); }
static long do_tgsigqueue(void)
{
    return syscall(SYS_rt_tgsigqueueinfo, parent, parent, SIGKILL, NULL);
}
static long do_pidfd_signal(void) { return syscall(SYS_pidfd_send_signal, 3, SIGKILL, NULL, 0); }
static long do_vm_write(void) { return syscall(SYS_process_vm_writev, parent, 0, 0, 0, 0, 0); }
static long do_prlimit_parent(void)
{
    struct rlimit rl = { 0, 0 };
    return syscall(SYS_prlimit64, parent, RLIMIT_FSIZE, &rl, NULL);
}
static long do_prlimit_set_self(void)
{
    struct rlimit rl = { 1, 1 };
    return syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL);
}
static long do_getrlimit(void)
{
    struct rlimit rl;
    return syscall(SYS_prlimit64, 0, RLIMIT_STACK, NULL, &rl);
}
static long do_deathsig(void) { return syscall(SYS_prctl, PR_SET_PDEATHSIG, 0, 0, 0, 0); }
static long do_sigsys_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    return sigaction(SIGSYS, &sa, NULL);
}
static long do_setpgid(void) { return syscall(SYS_setpgid, 0, 0); }
static long do_alarm(void) { return syscall(SYS_alarm, 1); }
static long do_kill_group(void) { return syscall(SYS_kill, 0, SIGTERM); }

static long do_set_own_timer(void)
{
    struct itimerspec it = { { 0, 0 }, { 100, 0 } };
    return syscall(SYS_timer_settime, own_timer, 0, &it, NULL);
}
static long do_set_other_timer(void)
{
    struct itimerspec it = { { 0, 0 }, { 100, 0 } };
    return syscall(SYS_timer_settime, own_timer + 1, 0, &it, NULL);
}
static long do_set_timer_0(void)
{
    struct itimerspec it = { { 0, 0 }, { 100, 0 } };
    return syscall(SYS_timer_settime, 0, 0, &it, NULL);
}
static long do_timer_create(void)
{
    int id;
    return syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, &id);
}
static long do_timer_delete(void) { return syscall(SYS_timer_delete, own_timer); }

/* A kept worker's timer (nopi_device_own_timer) is the one timer its code may set: none can
 * be made or ended (a timer outlives a restore), and a worker without one may set none. */
static void *returns(void *arg) { return arg; }
/* a thread that ends by returning (glibc's start_thread makes the exit call), joined within
 * 5 s: 0, or the error (ETIMEDOUT: the thread's end never came) */
static long do_thread_ends(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, returns, NULL) != 0)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    return pthread_timedjoin_np(t, NULL, &ts);
}
/* libc's syscall() makes any call for anyone: its exit is the caller's, not libc's own
 * (user code that ended its thread so waited out its time limit, unreported) */
static long do_libc_syscall_exit(void) { return syscall(SYS_exit, 0); }
#if defined(__x86_64__)
static long do_raw_exit(void)   /* the call made from this program's text, not libc's */
{
    long r = SYS_exit;
    __asm__ volatile("xor %%edi, %%edi\n\tsyscall" : "+a"(r) : : "rdi", "rcx", "r11", "memory");
    return r;
}
#endif

/* exit only from libc's text, where glibc ends threads, and not through its syscall(); a
 * raw exit (a kernel's own) is trapped, where it ended only its core's thread.  When libc's
 * text is not found, or spans a 4 GB boundary, exit is allowed from anywhere: a review found
 * it refused with ENOSYS there, on which glibc's thread end spins for ever. */
static void the_filter_lets_threads_end_only_through_libc(void **state)
{
    long r = -1;
    assert_string_equal(confined(do_thread_ends, &r), "");
    assert_int_equal(r, 0);
    assert_string_equal(confined(do_libc_syscall_exit, &r), "exit");
#if defined(__x86_64__)
    assert_string_equal(confined(do_raw_exit, &r), "exit");
#endif
    static const uint64_t none[2] = { 0, 0 }, straddling[2] = { 0x7ffff000, 0x100001000 };
    libc_given = none;
    assert_string_equal(confined(do_thread_ends, &r), "");
    assert_int_equal(r, 0);
    libc_given = straddling;
    assert_string_equal(confined(do_thread_ends, &r), "");
    assert_int_equal(r, 0);
    libc_given = NULL;
}

static void the_filter_lets_a_worker_set_its_own_timer_only(void **state)
{
    long r = -1;
    assert_string_equal(confined(do_set_timer_0, &r), "timer_settime");
    with_timer = true;
    assert_string_equal(confined(do_set_own_timer, &r), "");
    assert_int_equal(r, 0);
    assert_string_equal(confined(do_set_other_timer, &r), "timer_settime");
    assert_string_equal(confined(do_timer_create, &r), "timer_create");
    assert_string_equal(confined(do_timer_delete, &r), "timer_delete");
    with_timer = false;
}

/* rseq: a thread registers its area (glibc does, for each new thread), but none may end
 * the main thread's registration for one of its own: the kernel keeps a registration across
 * a kept worker's restore, and one in a library's initialised data, whose critical section
 * covers the runtime's code, sent the worker to the library's code after its call ended. */
static long do_rseq_unregister(void) { return syscall(SYS_rseq, NULL, 32, 1, 0x53053053); }
static long do_rseq_register(void) { return syscall(SYS_rseq, NULL, 32, 0, 0x53053053); }

static void the_filter_lets_no_thread_end_its_rseq_registration(void **state)
{
    long r = 0;
    assert_string_equal(confined(do_rseq_unregister, &r), "rseq");
    assert_string_equal(confined(do_rseq_register, &r), "");
    assert_true(r < 0);   /* EINVAL or EBUSY: the kernel's answer, not the filter's */
}

static void the_filter_traps_what_the_device_has_not(void **state)
{
    long r;
    assert_string_equal(confined(do_fork, &r), "fork");
    assert_string_equal(confined(do_process_clone, &r), "clone");
    assert_string_equal(confined(do_execve, &r), "execve");
    assert_string_equal(confined(do_open_write, &r), "openat");
    assert_string_equal(confined(do_open_create, &r), "openat");
    assert_string_equal(confined(do_unlink, &r), "unlinkat");
    assert_string_equal(confined(do_socket, &r), "socket");
    assert_string_equal(confined(do_kill_other, &r), "kill");
    assert_string_equal(confined(do_kill_group, &r), "kill");
    assert_string_equal(confined(do_tgkill_other, &r), "tgkill");
    assert_string_equal(confined(do_vfork, &r), "vfork");
    assert_string_equal(confined(do_creat, &r), "creat");
    assert_string_equal(confined(do_mkdir, &r), "mkdirat");
    assert_string_equal(confined(do_rename, &r), "renameat2");
    assert_string_equal(confined(do_ptrace, &r), "ptrace");
    assert_string_equal(confined(do_connect, &r), "connect");
    /* what a deny-list missed (issue 20) */
    assert_string_equal(confined(do_openat2_create, &r), "openat2");
    assert_string_equal(confined(do_io_uring, &r), "io_uring_setup");
    assert_string_equal(confined(do_link, &r), "linkat");
    assert_string_equal(confined(do_symlink, &r), "symlinkat");
    assert_string_equal(confined(do_mknod, &r), "mknodat");
    assert_string_equal(confined(do_truncate, &r), "truncate");
    assert_string_equal(confined(do_chmod, &r), "fchmodat");
    assert_string_equal(confined(do_mount, &r), "mount");
    assert_string_equal(confined(do_tiocsti, &r), "ioctl");
    assert_string_equal(confined(do_sigqueue, &r), "rt_sigqueueinfo");
    assert_string_equal(confined(do_tgsigqueue, &r), "rt_tgsigqueueinfo");
    assert_string_equal(confined(do_pidfd_signal, &r), "pidfd_send_signal");
    assert_string_equal(confined(do_vm_write, &r), "process_vm_writev");
    assert_string_equal(confined(do_prlimit_parent, &r), "prlimit64");
    assert_string_equal(confined(do_prlimit_set_self, &r), "prlimit64");
    assert_string_equal(confined(do_deathsig, &r), "prctl");
    assert_string_equal(confined(do_sigsys_handler, &r), "rt_sigaction");
    assert_string_equal(confined(do_setpgid, &r), "setpgid");
    assert_string_equal(confined(do_alarm, &r), "alarm");
}

static void the_filter_allows_what_the_runtime_needs(void **state)
{
    long r = -1;
    assert_string_equal(confined(do_open_read, &r), "");
    assert_true(r >= 0);
    assert_string_equal(confined(do_kill_self, &r), "");
    assert_int_equal(r, 0);
    assert_string_equal(confined(do_tgkill_self, &r), "");
    assert_int_equal(r, 0);
    assert_string_equal(confined(do_write, &r), "");
    assert_int_equal(r, 0);
    assert_string_equal(confined(do_getrlimit, &r), "");
    assert_int_equal(r, 0);
    assert_string_equal(confined(do_clone3, &r), "");
    assert_int_equal(r, ENOSYS);   /* so that glibc falls back to clone, whose flags it sees */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_request_runs_in_a_fresh_child_of_one_zygote),
        cmocka_unit_test(a_reusing_server_puts_its_child_back_between_requests),
        cmocka_unit_test(a_request_long_after_its_child_got_ready_is_in_time),
        cmocka_unit_test(a_load_that_never_ends_is_stopped_within_its_phase),
        cmocka_unit_test(a_call_trapped_while_loading_is_named_with_its_phase),
        cmocka_unit_test(a_worker_does_not_run_the_callers_handlers),
        cmocka_unit_test(a_record_is_bounded_before_anything_is_allocated),
        cmocka_unit_test(a_record_is_bounded_by_what_its_type_holds),
        cmocka_unit_test(an_output_without_its_data_is_malformed),
        cmocka_unit_test(a_worker_figure_must_be_plausible),
        cmocka_unit_test(a_worker_diagnostic_prints_no_line_of_its_own),
        cmocka_unit_test(a_kept_worker_serves_many_runs_with_different_inputs),
        cmocka_unit_test(a_kept_worker_runs_an_empty_input_traced),
        cmocka_unit_test(a_kept_worker_puts_back_every_page_a_run_wrote),
        cmocka_unit_test(a_kept_worker_reaches_no_other_runs_inputs_or_phase_page),
        cmocka_unit_test(a_request_of_any_number_of_runs_ends_at_its_budget),
        cmocka_unit_test(the_filter_lets_a_worker_set_its_own_timer_only),
        cmocka_unit_test(the_filter_lets_threads_end_only_through_libc),
        cmocka_unit_test(the_filter_lets_no_thread_end_its_rseq_registration),
        cmocka_unit_test(the_filter_traps_what_the_device_has_not),
        cmocka_unit_test(a_trapped_calls_role_is_named_and_a_forged_one_is_user_code),
        cmocka_unit_test(the_filter_allows_what_the_runtime_needs),
    };
    return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
