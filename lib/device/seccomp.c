/*
 * seccomp.c - the worker process's confinement: what user code may not do.
 *
 * A kernel is device code: it has no processes, files, network or signals to send.  Once the
 * worker's device is ready, the calls below are trapped: creating a process (fork, vfork, a
 * clone that is not a thread), exec, opening or creating files for writing, removing or
 * renaming files, sockets, signals to other processes and ptrace; a call made through another
 * ABI (32-bit int 0x80, x32) kills the worker outright.  The trap lands in on_sigsys, which
 * reports "kernel made a system call the device does not have: fork" with the op and the
 * core, as the worker's last record, and ends the worker.  Everything the runtime needs stays
 * allowed: memory, threads, futexes, time, signals to itself, reading files (memcheck reads
 * source lines), and writing to the pipe it already holds.
 *
 * The filter is a small BPF program built here from the table of rules below, not with
 * libseccomp (which build/register.c uses): libseccomp takes 0.1 to 0.2 ms to generate and
 * load the same program, a fifth of what the worker may add to a whole `neuronop run`.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fiber.h"
#include "sandbox.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#define FOREIGN_NR 0x40000000u      /* x32 calls: same arch, numbers from this bit up */
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#define FOREIGN_NR 0xffffffffu
#else
#error "the worker's seccomp filter knows x86_64 and aarch64"
#endif

/* How a call is checked: always trapped, or trapped when an argument says so. */
enum when { ALWAYS, NOT_A_THREAD, FOR_WRITING, NOT_SELF, NO_SUCH_CALL };

static const struct rule {
    long nr;
    const char *name;               /* as the report names it */
    enum when when;
    int arg;                        /* the argument looked at */
} rules[] = {
#ifdef SYS_fork
    { SYS_fork, "fork", ALWAYS, 0 },
    { SYS_vfork, "vfork", ALWAYS, 0 },
    { SYS_creat, "creat", ALWAYS, 0 },
    { SYS_unlink, "unlink", ALWAYS, 0 },
    { SYS_rename, "rename", ALWAYS, 0 },
    { SYS_mkdir, "mkdir", ALWAYS, 0 },
    { SYS_rmdir, "rmdir", ALWAYS, 0 },
    { SYS_open, "open (for writing)", FOR_WRITING, 1 },
#endif
    { SYS_execve, "execve", ALWAYS, 0 },
    { SYS_execveat, "execveat", ALWAYS, 0 },
    { SYS_unlinkat, "unlinkat", ALWAYS, 0 },
    { SYS_renameat, "renameat", ALWAYS, 0 },
    { SYS_renameat2, "renameat2", ALWAYS, 0 },
    { SYS_mkdirat, "mkdirat", ALWAYS, 0 },
    { SYS_socket, "socket", ALWAYS, 0 },
    { SYS_socketpair, "socketpair", ALWAYS, 0 },
    { SYS_connect, "connect", ALWAYS, 0 },
    { SYS_bind, "bind", ALWAYS, 0 },
    { SYS_listen, "listen", ALWAYS, 0 },
    { SYS_accept, "accept", ALWAYS, 0 },
    { SYS_accept4, "accept4", ALWAYS, 0 },
    { SYS_ptrace, "ptrace", ALWAYS, 0 },
    { SYS_tkill, "tkill", ALWAYS, 0 },
    { SYS_clone, "clone (a new process)", NOT_A_THREAD, 0 },
    /* clone3 says it does not exist, so glibc falls back to clone, whose flags BPF can see */
    { SYS_clone3, "clone3", NO_SUCH_CALL, 0 },
    { SYS_openat, "openat (for writing)", FOR_WRITING, 2 },
    { SYS_kill, "kill", NOT_SELF, 0 },
    { SYS_tgkill, "tgkill", NOT_SELF, 0 },
};
#define NRULES (sizeof rules / sizeof rules[0])

static int report_fd = -1;        /* the worker's pipe, for the handler (set once, in it) */

static const char *call_name(int nr)
{
    for (size_t i = 0; i < NRULES; i++)
        if (rules[i].nr == nr)
            return rules[i].name;
    return "an unknown call";
}

/* SIGSYS: a trapped call.  Sends the worker's last record and ends it. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    done.rc = -1;
    done.retire = 1;
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

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, t, f) ((struct sock_filter)BPF_JUMP(code, k, t, f))
/* the low 32 bits of argument i (the flags, modes and pids looked at are ints) */
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + \
                   (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4))

/* Appends the checks of one rule: "not this call: on to what follows", then its verdict. */
static unsigned short rule_checks(struct sock_filter *p, unsigned short n, const struct rule *r,
                                  pid_t self)
{
    const uint32_t trap = SECCOMP_RET_TRAP, allow = SECCOMP_RET_ALLOW;
    const uint32_t writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;
    if (r->when == ALWAYS || r->when == NO_SUCH_CALL) {
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 1);
        p[n++] = STMT(BPF_RET | BPF_K, r->when == ALWAYS ? trap : SECCOMP_RET_ERRNO | ENOSYS);
        return n;
    }
    /* the call, its argument, a test, then "allow" and "trap" */
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4);
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(r->arg));
    if (r->when == NOT_SELF)      /* the worker itself: allowed */
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)self, 0, 1);
    else if (r->when == FOR_WRITING)
        p[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, writes, 1, 0);
    else                          /* NOT_A_THREAD: a thread is allowed */
        p[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
    p[n++] = STMT(BPF_RET | BPF_K, allow);
    p[n++] = STMT(BPF_RET | BPF_K, trap);
    return n;
}

/* Appends a search for the call number (in the accumulator) among sorted[lo, hi): halves
 * by "nr >= the middle rule's", down to a few rules checked in turn, then "allow".  The
 * kernel runs the filter once per call number when it loads it (to cache the calls it
 * always allows), so a search rather than a list makes loading it 4 times faster. */
static unsigned short search(struct sock_filter *p, unsigned short n,
                             const struct rule *const *sorted, size_t lo, size_t hi, pid_t self)
{
    if (hi - lo <= 3) {
        for (size_t i = lo; i < hi; i++)
            n = rule_checks(p, n, sorted[i], self);
        p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        return n;
    }
    size_t mid = (lo + hi) / 2;
    unsigned short fork_at = n++;
    n = search(p, n, sorted, lo, mid, self);
    p[fork_at] = JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)sorted[mid]->nr,
                      (uint8_t)(n - fork_at - 1), 0);
    return search(p, n, sorted, mid, hi, self);
}

static int by_nr(const void *a, const void *b)
{
    long x = (*(const struct rule *const *)a)->nr, y = (*(const struct rule *const *)b)->nr;
    return x < y ? -1 : x > y;
}

/* Writes the filter into p (room for MAX_PROGRAM instructions); returns its length. */
#define MAX_PROGRAM (8 + 6 * NRULES)
static unsigned short build(struct sock_filter *p, pid_t self)
{
    const struct rule *sorted[NRULES];
    for (size_t i = 0; i < NRULES; i++)
        sorted[i] = &rules[i];
    qsort(sorted, NRULES, sizeof *sorted, by_nr);
    unsigned short n = 0;
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
    p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    p[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, FOREIGN_NR, 0, 1);
    p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    return search(p, n, sorted, 0, NRULES, self);
}

int nopi_confine(int fd, nop_error *err)
{
    report_fd = fd;
    struct sock_filter prog[MAX_PROGRAM];
    struct sock_fprog f = { build(prog, getpid()), prog };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;   /* kernel stacks are small: the worker's own */
    if (sigaction(SIGSYS, &sa, NULL) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f) != 0)
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot confine the device process "
                         "with seccomp: %s", strerror(errno));
    return 0;
}
