/*
 * seccomp.c - the worker process's confinement (libseccomp): what user code may not do.
 *
 * A kernel is device code: it has no processes, files, network or signals to send.  Once the
 * worker's device is ready, the calls below are trapped: creating a process (fork, vfork, a
 * clone that is not a thread), exec, opening or creating files for writing, removing or
 * renaming files, sockets, signals to other processes and ptrace.  The trap lands in
 * on_sigsys, which reports "kernel made a system call the device does not have: fork" with
 * the op and the core, as the worker's last record, and ends the worker.  Everything the
 * runtime needs stays allowed: memory, threads, futexes, time, signals to itself, reading
 * files (memcheck reads source lines), and writing to the pipe it already holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fiber.h"
#include "sandbox.h"

/* The trapped calls, by name: the filter is built from this list, and the report names the
 * call from it (the handler cannot ask libseccomp, which allocates). */
static const char *const trapped[] = {
    "fork", "vfork", "execve", "execveat", "creat", "unlink", "unlinkat", "rename",
    "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "socket", "socketpair", "connect",
    "bind", "listen", "accept", "accept4", "ptrace", "tkill",
};
#define NTRAPPED (sizeof trapped / sizeof trapped[0])

/* The call numbers of trapped[], and of the calls trapped only with some arguments. */
static int trapped_nr[NTRAPPED];
static int nr_clone, nr_open, nr_openat, nr_kill, nr_tgkill;
static int report_fd = -1;        /* the worker's pipe, for the handler */

static const char *call_name(int nr)
{
    for (size_t i = 0; i < NTRAPPED; i++)
        if (trapped_nr[i] == nr)
            return trapped[i];
    return nr == nr_clone ? "clone (a new process)" : nr == nr_open ? "open (for writing)"
         : nr == nr_openat ? "openat (for writing)" : nr == nr_kill ? "kill"
         : nr == nr_tgkill ? "tgkill" : "an unknown call";
}

/* SIGSYS: a trapped call.  Sends the worker's last record and ends it. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    done.rc = -1;
    done.err.kind = NOP_ERR_DEVICE;
    done.err.diag.severity = NOP_SEV_ERROR;
    snprintf(done.err.diag.msg, sizeof done.err.diag.msg, "kernel made a system call the "
             "device does not have: %s", call_name(si->si_syscall));
    snprintf(done.err.diag.detail, sizeof done.err.diag.detail, "device code has no "
             "processes, files, network or signals; neuronop stopped it there");
    nopi_core *c = nopi_current();
    if (c)
        nopi_core_where(c, done.err.diag.where, sizeof done.err.diag.where);
    uint32_t type = NOPI_REC_DONE;
    uint64_t len = sizeof done;
    /* raw writes: this is a signal handler, and the wire's lock may be held */
    if (write(report_fd, &type, sizeof type) == sizeof type &&
        write(report_fd, &len, sizeof len) == sizeof len)
        (void)!write(report_fd, &done, sizeof done);
    _exit(0);
}

/* Traps call nr when its argument arg compares so with a (and b). */
static int trap_if(scmp_filter_ctx f, int nr, unsigned arg, enum scmp_compare op, uint64_t a,
                   uint64_t b)
{
    struct scmp_arg_cmp c = { .arg = arg, .op = op, .datum_a = a, .datum_b = b };
    return seccomp_rule_add_array(f, SCMP_ACT_TRAP, nr, 1, &c);
}

int nopi_confine(int fd, nop_error *err)
{
    report_fd = fd;
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
    if (!f)
        return nopi_nomem(err);
    int rc = 0;
    for (size_t i = 0; i < NTRAPPED && rc == 0; i++) {
        trapped_nr[i] = seccomp_syscall_resolve_name(trapped[i]);
        if (trapped_nr[i] >= 0)
            rc = seccomp_rule_add(f, SCMP_ACT_TRAP, trapped_nr[i], 0);
    }
    nr_clone = SCMP_SYS(clone);
    nr_open = SCMP_SYS(open);
    nr_openat = SCMP_SYS(openat);
    nr_kill = SCMP_SYS(kill);
    nr_tgkill = SCMP_SYS(tgkill);
    pid_t self = getpid();
    const unsigned writes[] = { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC };
    /* threads are clones with CLONE_THREAD; anything else is a new process.  clone3 says
     * it does not exist, so glibc falls back to clone, whose flags the filter can see. */
    if (rc == 0)
        rc = trap_if(f, nr_clone, 0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0);
    if (rc == 0)
        rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    for (size_t i = 0; i < sizeof writes / sizeof writes[0] && rc == 0; i++) {
        rc = trap_if(f, nr_open, 1, SCMP_CMP_MASKED_EQ, writes[i], writes[i]);
        if (rc == 0)
            rc = trap_if(f, nr_openat, 2, SCMP_CMP_MASKED_EQ, writes[i], writes[i]);
    }
    if (rc == 0)
        rc = trap_if(f, nr_kill, 0, SCMP_CMP_NE, (uint64_t)self, 0);
    if (rc == 0)
        rc = trap_if(f, nr_tgkill, 0, SCMP_CMP_NE, (uint64_t)self, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;   /* kernel stacks are small: the worker's own */
    if (rc == 0 && sigaction(SIGSYS, &sa, NULL) != 0)
        rc = -errno;
    if (rc == 0)
        rc = seccomp_load(f);
    seccomp_release(f);
    if (rc != 0)
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot confine the device process "
                         "with seccomp: %s", strerror(-rc));
    return 0;
}
