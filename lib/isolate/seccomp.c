/*
 * seccomp.c - the worker process's confinement: an allow-list of what user code may do.
 *
 * A kernel is device code: it has no processes, files, network, signals to send, terminals
 * or mounts.  Once the worker's device is ready, it may make only the system calls in the
 * table below, each there for a reason the runtime has (loading the library, memory, threads,
 * time, its own signals, reading files, its pipe); some only with the arguments the runtime
 * uses (a thread, not a process; a file opened for reading; a signal to itself; no handler
 * for SIGSYS, so no user code can hide a trap), or only from where the runtime makes them
 * (a thread's exit, from libc's code: a kernel's own would end its core's thread).  Every other call, and every call through
 * another entry point (32-bit int 0x80, x32), is trapped: the trap lands in on_sigsys, which
 * sends the call's number, and what made it (a kernel, a shape or a reference function), as
 * the worker's last record and ends the worker; the parent names the call ("kernel made a
 * system call the device does not have: openat2", with the op and the core).  A worker that
 * blocks SIGSYS first is killed by it instead (the kernel forces the signal), which the
 * parent reports as a bad system call.  The worker cannot clear its PR_SET_PDEATHSIG (prctl
 * is not allowed), so it dies with its parent.
 *
 * The filter is a small BPF program built here from the table, not with libseccomp (which
 * build/register.c uses): libseccomp takes 0.1 to 0.2 ms to generate and load the same
 * program, a fifth of what the worker may add to a whole `neuronop run`.  libseccomp only
 * names the trapped call, in the parent.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <gnu/libc-version.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "device/fiber.h"
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

/* When a call in the table is allowed. */
enum when {
    ALWAYS,
    NOT_WRITING,     /* argument arg's flags open nothing for writing or creating */
    THREAD,          /* argument arg's flags make a thread, not a process */
    SELF,            /* argument arg is the worker's pid, or 0 (the caller) for SELF_OR_0 */
    SELF_OR_0,
    READ_OWN_LIMIT,  /* prlimit64 of the worker itself (pid 0 or its own) that sets nothing */
    OWN_TIMER,       /* argument arg is the worker's own timer (none: never) */
    ONLY,            /* argument arg is value */
    NOT,             /* argument arg is not value */
    NO_SUCH_CALL,    /* fails with ENOSYS */
    FROM_LIBC,       /* made by libc's own code (the instruction after the call is in its
                      * text, but not in its syscall() function, which makes any call for
                      * anyone): a thread that ends returns from its function, and glibc's
                      * start_thread makes the call, where a kernel's own exit ended its
                      * core's thread and the run waited out every core's time limit */
    FD_FLAGS,        /* fcntl on the descriptor table and flags only (dup, get and set the
                      * flags, no O_ASYNC): F_SETOWN, F_SETSIG, O_ASYNC, leases and dnotify
                      * make the kernel signal a process of the caller's choosing, locks
                      * would hold up the host's processes */
};

static const struct rule {
    long nr;
    enum when when;
    int arg;                        /* the argument looked at */
    uint32_t value;                 /* for ONLY and NOT */
    const char *why;                /* the reason the runtime needs it */
} rules[] = {
    { SYS_read, ALWAYS, 0, 0, "requests, files the runtime reads (memcheck's sources)" },
    { SYS_recvmsg, ALWAYS, 0, 0, "a request comes on a socket, with its inputs' memfd" },
    { SYS_pread64, ALWAYS, 0, 0, "the dynamic loader reads the library's headers" },
    { SYS_readv, ALWAYS, 0, 0, "stdio" },
    { SYS_write, ALWAYS, 0, 0, "records to the parent's pipe; the descriptors it has are "
                               "that pipe, /dev/null and files opened for reading" },
    { SYS_writev, ALWAYS, 0, 0, "stdio, as write" },
    { SYS_vmsplice, ALWAYS, 0, 0, "a run's output goes to the pipe by page reference" },
#ifdef SYS_open
    { SYS_open, NOT_WRITING, 1, 0, "reading files (the library, memcheck's sources)" },
    { SYS_access, ALWAYS, 0, 0, "the library is checked for reading before it is loaded" },
    { SYS_stat, ALWAYS, 0, 0, "the loader and stdio look at files" },
    { SYS_lstat, ALWAYS, 0, 0, "as stat" },
#endif
    { SYS_openat, NOT_WRITING, 2, 0, "as open" },
    { SYS_faccessat, ALWAYS, 0, 0, "as access" },
#ifdef SYS_faccessat2
    { SYS_faccessat2, ALWAYS, 0, 0, "as access" },
#endif
    { SYS_fstat, ALWAYS, 0, 0, "as stat" },
    { SYS_newfstatat, ALWAYS, 0, 0, "as stat" },
    { SYS_statx, ALWAYS, 0, 0, "as stat" },
    { SYS_getcwd, ALWAYS, 0, 0, "the loader makes a relative library path absolute" },
    { SYS_readlink, ALWAYS, 0, 0, "the loader and memcheck resolve paths" },
    { SYS_readlinkat, ALWAYS, 0, 0, "as readlink" },
    { SYS_lseek, ALWAYS, 0, 0, "stdio" },
    { SYS_close, ALWAYS, 0, 0, "files it opened" },
    { SYS_close_range, ALWAYS, 0, 0, "a kept worker closes what a request left open" },
    { SYS_fcntl, FD_FLAGS, 1, 0, "stdio and the loader look at descriptors' flags; a kept "
                                 "worker puts them back" },
    { SYS_ioctl, ONLY, 1, TCGETS, "stdio asks whether a descriptor is a terminal (no other "
                                  "request: TIOCSTI would type into the user's shell)" },
    { SYS_mmap, ALWAYS, 0, 0, "memory, the library's segments, core stacks" },
    { SYS_munmap, ALWAYS, 0, 0, "memory" },
    { SYS_mremap, ALWAYS, 0, 0, "memory" },
    { SYS_mprotect, ALWAYS, 0, 0, "guard pages of core stacks, the loader's relocations" },
    { SYS_madvise, ALWAYS, 0, 0, "malloc gives memory back; tensors are prefaulted" },
    { SYS_mincore, ALWAYS, 0, 0, "a kept worker asks which of its pages were ever touched" },
    { SYS_brk, ALWAYS, 0, 0, "malloc" },
    { SYS_clone, THREAD, 0, 0, "the device's host threads; never a process" },
    /* clone3's flags are in memory BPF cannot read: glibc falls back to clone */
    { SYS_clone3, NO_SUCH_CALL, 0, 0, "threads come from clone" },
    { SYS_set_robust_list, ALWAYS, 0, 0, "new threads" },
    { SYS_rseq, ONLY, 2, 0, "new threads register (none unregisters: a registration outlives a restore)" },
    { SYS_set_tid_address, ALWAYS, 0, 0, "new threads" },
#ifdef SYS_arch_prctl
    { SYS_arch_prctl, ALWAYS, 0, 0, "new threads' thread-local storage" },
#endif
    { SYS_futex, ALWAYS, 0, 0, "locks and the thread pool" },
    { SYS_sched_yield, ALWAYS, 0, 0, "the thread pool" },
    { SYS_sched_getaffinity, ALWAYS, 0, 0, "glibc counts the CPUs it may use" },
    { SYS_exit, FROM_LIBC, 0, 0, "threads end, by returning from their function" },
    { SYS_exit_group, ALWAYS, 0, 0, "the worker ends" },
    { SYS_restart_syscall, ALWAYS, 0, 0, "a call interrupted by a signal" },
    { SYS_clock_gettime, ALWAYS, 0, 0, "time limits and figures" },
    { SYS_clock_getres, ALWAYS, 0, 0, "as clock_gettime" },
    { SYS_gettimeofday, ALWAYS, 0, 0, "as clock_gettime" },
    { SYS_clock_nanosleep, ALWAYS, 0, 0, "the watchdog's waits" },
    { SYS_nanosleep, ALWAYS, 0, 0, "as clock_nanosleep" },
    { SYS_getpid, ALWAYS, 0, 0, "signals to itself" },
    { SYS_gettid, ALWAYS, 0, 0, "signals to its own threads" },
    { SYS_getuid, ALWAYS, 0, 0, "glibc" },
    { SYS_geteuid, ALWAYS, 0, 0, "glibc" },
    { SYS_getgid, ALWAYS, 0, 0, "glibc" },
    { SYS_getegid, ALWAYS, 0, 0, "glibc" },
    { SYS_getrandom, ALWAYS, 0, 0, "malloc's and the loader's randomisation" },
    { SYS_sysinfo, ALWAYS, 0, 0, "glibc's qsort asks how much memory there is" },
    { SYS_prlimit64, READ_OWN_LIMIT, 0, 0, "glibc reads its own stack limit; it sets none, "
                                           "and reads no other process's" },
    { SYS_rt_sigaction, NOT, 0, SIGSYS, "the runtime's fault and timeout handlers; no handler "
                                        "for SIGSYS, which reports trapped calls" },
    { SYS_rt_sigprocmask, ALWAYS, 0, 0, "threads and handlers mask signals" },
    { SYS_rt_sigreturn, ALWAYS, 0, 0, "returning from a handler" },
    { SYS_sigaltstack, ALWAYS, 0, 0, "handlers run on their own stack" },
    { SYS_kill, SELF, 0, 0, "abort() and raise() signal the worker itself" },
    { SYS_tgkill, SELF, 0, 0, "the watchdog stops a core's thread; abort()" },
    { SYS_timer_settime, OWN_TIMER, 0, 0, "a kept worker's timer stops a core at its time "
                                          "limit; no other timer, none made" },
};
#define NRULES (sizeof rules / sizeof rules[0])

static int report_fd = -1;        /* the worker's pipe, for the handler (set only in it) */

/* SIGSYS: a trapped call.  Sends its number as the worker's last record and ends it; the
 * parent names it (nopi_done_trapped). */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    struct nopi_done done;
    memset(&done, 0, sizeof done);
    done.rc = -1;
    done.retire = 1;
    done.trapped = si->si_arch != ARCH ? NOPI_TRAP_32BIT
                   : (uint32_t)si->si_syscall >= FOREIGN_NR ? NOPI_TRAP_X32 : NOPI_TRAP_NATIVE;
    done.trapped_nr = si->si_syscall & ~(int)(FOREIGN_NR == 0xffffffffu ? 0 : FOREIGN_NR);
    done.err.kind = NOP_ERR_DEVICE;
    done.err.diag.severity = NOP_SEV_ERROR;
    nopi_core *c = nopi_current();
    if (c) {
        nopi_core_where(c, done.err.diag.where, sizeof done.err.diag.where);
        done.trapped_in = (int32_t)nopi_core_role(c);
    }
    uint32_t type = NOPI_REC_DONE;
    uint64_t len = sizeof done;
    /* raw writes: this is a signal handler, and the wire's lock may be held */
    if (write(report_fd, &type, sizeof type) == sizeof type &&
        write(report_fd, &len, sizeof len) == sizeof len)
        (void)!write(report_fd, &done, sizeof done);
    _exit(0);
}

void nopi_done_trapped(struct nopi_done *done)
{
    char buf[64];
    const char *name = buf;
    char *resolved = NULL;
    if (done->trapped == NOPI_TRAP_32BIT) {
        name = "int 0x80 (a 32-bit system call)";
    } else {
        resolved = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, done->trapped_nr);
        snprintf(buf, sizeof buf, "%s%s", resolved ? resolved : "an unknown call",
                 done->trapped == NOPI_TRAP_X32 ? " (an x32 system call)" : "");
    }
    nop_diag *d = &done->err.diag;
    done->rc = -1;
    done->err.kind = NOP_ERR_DEVICE;
    done->err.fault = NOP_FAULT_SYSCALL;
    d->severity = NOP_SEV_ERROR;
    d->file[0] = '\0';
    d->line = d->col = 0;
    snprintf(d->msg, sizeof d->msg, "%s made a system call the device does not have: %s",
             nopi_role_name(done->trapped_in), name);
    if (done->trapped == NOPI_TRAP_NATIVE && done->trapped_nr == SYS_exit)
        snprintf(d->detail, sizeof d->detail, "it would have ended its own thread: kernels, "
                 "shape functions and references must return, not exit");
    else
        snprintf(d->detail, sizeof d->detail, "device code has no processes, files, network "
                 "or signals; neuronop stopped it there");
    free(resolved);
}

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, t, f) ((struct sock_filter)BPF_JUMP(code, k, t, f))
/* the low 32 bits of argument i (the flags, modes and pids looked at are ints) */
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + \
                   (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4))
#define ARG_HI(i) (offsetof(struct seccomp_data, args) + 8 * (i) + \
                   (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 4 : 0))
/* the halves of the address of the instruction after the call */
#define IP_LO (offsetof(struct seccomp_data, instruction_pointer) + \
               (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4))
#define IP_HI (offsetof(struct seccomp_data, instruction_pointer) + \
               (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 4 : 0))

/* What the rules that name the worker's own things compare with. */
struct own {
    pid_t pid;
    int timer;   /* -1: none */
    uint64_t libc_lo, libc_hi;   /* libc's text; both 0: not found (FROM_LIBC allows all) */
    uint64_t any_lo, any_hi;     /* its syscall() function, inside that text; equal: none */
};

/* Whether libc's text was found (FROM_LIBC can check) and its syscall() inside it. */
static bool libc_found(const struct own *own)
{
    return own->libc_lo < own->libc_hi && own->libc_lo >> 32 == (own->libc_hi - 1) >> 32;
}

static bool any_call_found(const struct own *own)
{
    return libc_found(own) && own->any_lo < own->any_hi && own->any_lo >= own->libc_lo &&
           own->any_hi <= own->libc_hi;
}

/* Appends the checks of one rule: "not this call: on to what follows", then its verdict. */
static unsigned short rule_checks(struct sock_filter *p, unsigned short n, const struct rule *r,
                                  const struct own *own)
{
    const uint32_t trap = SECCOMP_RET_TRAP, allow = SECCOMP_RET_ALLOW;
    const uint32_t writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
    if (r->when == FROM_LIBC && libc_found(own)) {
        /* the call; the high half of the address after it, then its low half, in libc's
         * text (one 4 GB region, so the halves can be compared apart) and, when it was
         * found there, outside its syscall(); "trap", "allow" */
        bool any = any_call_found(own);
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, any ? 9 : 7);
        p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, IP_HI);
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(own->libc_lo >> 32), 0, any ? 5 : 3);
        p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, IP_LO);
        p[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)own->libc_lo, 0, any ? 3 : 1);
        if (any) {
            p[n++] = JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)(own->libc_hi - 1), 2, 0);
            p[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)own->any_lo, 0, 2);
            p[n++] = JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)(own->any_hi - 1), 1, 0);
        } else {
            p[n++] = JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)(own->libc_hi - 1), 0, 1);
        }
        p[n++] = STMT(BPF_RET | BPF_K, trap);
        p[n++] = STMT(BPF_RET | BPF_K, allow);
        return n;
    }
    if (r->when == ALWAYS || r->when == NO_SUCH_CALL || r->when == FROM_LIBC) {
        /* (FROM_LIBC here: libc's text was not found, or spans a 4 GB boundary; allowed,
         * as ENOSYS would make glibc's thread end spin for ever) */
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 1);
        p[n++] = STMT(BPF_RET | BPF_K, r->when == NO_SUCH_CALL ? SECCOMP_RET_ERRNO | ENOSYS
                                                               : allow);
        return n;
    }
    /* the call, its argument, a test (jumping to "allow" when it passes), "trap", "allow" */
    unsigned short at = n++;
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(r->arg));
    switch (r->when) {
    case READ_OWN_LIMIT:   /* pid 0 or self, then both halves of the new limit's pointer 0 */
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)own->pid, 0, 4);
        p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2));
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
        p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(2));
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
        break;
    case SELF_OR_0:
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0);
        /* fall through */
    case SELF:
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)own->pid, 1, 0);
        break;
    case OWN_TIMER:   /* a kernel's timer_t is an int: the high half is not looked at */
        if (own->timer >= 0)
            p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)own->timer, 1, 0);
        break;
    case NOT_WRITING:
        p[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, writes, 0, 1);
        break;
    case THREAD:
        p[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0);
        break;
    case FD_FLAGS:   /* F_DUPFD to F_GETFL, F_DUPFD_CLOEXEC, or F_SETFL without O_ASYNC */
        p[n++] = JUMP(BPF_JMP | BPF_JGT | BPF_K, F_GETFL, 0, 5);
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_DUPFD_CLOEXEC, 4, 0);
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETFL, 0, 2);
        p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2));
        p[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, O_ASYNC, 0, 1);
        break;
    case ONLY:
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->value, 1, 0);
        break;
    default:   /* NOT */
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->value, 0, 1);
        break;
    }
    p[n++] = STMT(BPF_RET | BPF_K, trap);
    p[n++] = STMT(BPF_RET | BPF_K, allow);
    p[at] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, (uint8_t)(n - at - 1));
    return n;
}

/* Appends a search for the call number (in the accumulator) among sorted[lo, hi): halves
 * by "nr >= the middle rule's", down to a few rules checked in turn, then "trap".  The
 * kernel runs the filter once per call number when it loads it (to cache the calls it
 * always allows), so a search rather than a list makes loading it 4 times faster. */
static unsigned short search(struct sock_filter *p, unsigned short n,
                             const struct rule *const *sorted, size_t lo, size_t hi,
                             const struct own *own)
{
    if (hi - lo <= 3) {
        for (size_t i = lo; i < hi; i++)
            n = rule_checks(p, n, sorted[i], own);
        p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);   /* not in the table */
        return n;
    }
    size_t mid = (lo + hi) / 2;
    unsigned short fork_at = n++;
    n = search(p, n, sorted, lo, mid, own);
    p[fork_at] = JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)sorted[mid]->nr,
                      (uint8_t)(n - fork_at - 1), 0);
    return search(p, n, sorted, mid, hi, own);
}

static int by_nr(const void *a, const void *b)
{
    long x = (*(const struct rule *const *)a)->nr, y = (*(const struct rule *const *)b)->nr;
    return x < y ? -1 : x > y;
}

/* Writes the filter into p (room for MAX_PROGRAM instructions); returns its length. */
#define MAX_PROGRAM (8 + 10 * NRULES)   /* no rule takes more than 10 */
static unsigned short build(struct sock_filter *p, const struct own *own)
{
    const struct rule *sorted[NRULES];
    for (size_t i = 0; i < NRULES; i++)
        sorted[i] = &rules[i];
    qsort(sorted, NRULES, sizeof *sorted, by_nr);
    unsigned short n = 0;
    /* another entry point's calls are trapped (on_sigsys tells them apart) */
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
    p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    p[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, FOREIGN_NR, 0, 1);
    p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
    return search(p, n, sorted, 0, NRULES, own);
}

void nopi_confine_report_to(int fd)
{
    report_fd = fd;
}

/* dl_iterate_phdr's callback: the executable segment of the object loaded at t->base, into
 * [t->lo, t->hi). */
struct text {
    uintptr_t base, lo, hi;
};

static int text_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct text *t = arg;
    if (info->dlpi_addr != t->base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            t->lo = info->dlpi_addr + ph->p_vaddr;
            t->hi = t->lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* libc's syscall() function, [*lo, *hi), whose calls are the caller's, not libc's own; both
 * 0 when it is not found. */
static void libc_any_call(uint64_t *lo, uint64_t *hi)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    *lo = *hi = 0;
    if (dladdr1((void *)(uintptr_t)&syscall, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
        info.dli_saddr && sym->st_size > 0) {
        *lo = (uintptr_t)info.dli_saddr;
        *hi = *lo + sym->st_size;
    }
}

/* libc's text, where glibc ends a thread (start_thread's exit call); both 0 when not
 * found, which leaves SYS_exit allowed from anywhere.  libc is found by a function no
 * sanitizer intercepts (AddressSanitizer's pthread_create lives in libasan). */
static void libc_text(uint64_t *lo, uint64_t *hi)
{
    Dl_info info;
    struct text t = { 0, 0, 0 };
    uintptr_t fn = (uintptr_t)&gnu_get_libc_version;
    *lo = *hi = 0;
    if (dladdr((void *)fn, &info) && info.dli_fbase) {
        t.base = (uintptr_t)info.dli_fbase;
        /* dlpi_addr is the load bias, which for a shared object is its base */
        if (dl_iterate_phdr(text_of, &t) == 1 && fn >= t.lo && fn < t.hi) {
            *lo = t.lo;
            *hi = t.hi;
        }
    }
}

int nopi_confine(int fd, int timer, nop_error *err)
{
    return nopi_confine_at(fd, timer, NULL, err);
}

int nopi_confine_at(int fd, int timer, const uint64_t *libc, nop_error *err)
{
    report_fd = fd;
    struct sock_filter prog[MAX_PROGRAM];
    struct own own = { getpid(), timer, 0, 0, 0, 0 };
    if (libc) {
        own.libc_lo = libc[0];
        own.libc_hi = libc[1];
    } else {
        libc_text(&own.libc_lo, &own.libc_hi);
    }
    libc_any_call(&own.any_lo, &own.any_hi);   /* (used only when inside that text) */
    struct sock_fprog f = { build(prog, &own), prog };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;   /* kernel stacks are small: the worker's own */
    if (sigaction(SIGSYS, &sa, NULL) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f) != 0)
        return nopi_fail(err, NOP_ERR_NOMEM, NULL, 0, 0, "cannot confine the device process "
                         "with seccomp: %s", strerror(errno));
    if (any_call_found(&own))   /* an exit through syscall() is trapped: a thread user code
                                 * ends makes one (fiber.c) */
        nopi_fiber_trap_thread_ends();
    return 0;
}
