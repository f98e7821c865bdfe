/*
 * ccfilter.c - the system calls a compiler child may not make (see ccfilter.h), and the BPF
 * program that refuses them.
 *
 * The table is checked against what the toolchain imports (nm -D of gcc, g++, cc1, cc1plus,
 * collect2, lto-wrapper, as, ld.bfd, ld.gold, clang, ld.lld and libtcc): none makes a socket
 * or a socket pair but cc1plus, and cc1plus only for a C++ module mapper (flags.c refuses
 * -fmodule-mapper; this refuses the socket too).  None traces or makes namespaces.
 *
 * The program is written by hand, as the worker's is (isolate/seccomp.c), not with libseccomp:
 * it is a straight list of comparisons with one verdict, and libseccomp 2.5 gives a program
 * only through a file descriptor (seccomp_export_bpf), which would have to be read back.  The
 * kernel caches the verdict of every call the program allows whatever the arguments (all but
 * ioctl and clone), so the list costs a compile nothing on its common calls.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "ccfilter.h"

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#define FOREIGN_NR 0x40000000u      /* x32 calls: same arch, numbers from this bit up */
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64     /* 32-bit calls come with AUDIT_ARCH_ARM */
#else
#error "the compilers' seccomp filter knows x86_64 and aarch64"
#endif

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* the flags of clone that make a namespace (CLONE_NEWTIME only clone3 and unshare take) */
#define NEW_NAMESPACE (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
                       CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* When a call in the table is refused. */
enum when {
    ALWAYS,
    ARG_IS,      /* the low 32 bits of argument arg are value (an ioctl's request: the
                  * kernel takes it as an unsigned int, so the high half cannot hide it) */
    ARG_HAS,     /* they have a bit of value (clone's flags: the kernel reads the low half) */
};

static const struct rule {
    long nr;
    enum when when;
    int arg;
    uint32_t value;
    int err;             /* errno the call fails with */
    const char *why;     /* why no compile makes it, or may */
} rules[] = {
    /* the network, and sockets of any kind: a compile reads and writes files */
    { SYS_socket, ALWAYS, 0, 0, EPERM, "the network, or another process's local socket" },
    { SYS_socketpair, ALWAYS, 0, 0, EPERM, "toolchains pipe; a socket can carry descriptors "
                                           "and reaches the kernel's socket code" },
    { SYS_connect, ALWAYS, 0, 0, EPERM, "a socket it inherited: a compiler inherits none" },
    { SYS_bind, ALWAYS, 0, 0, EPERM, "as connect" },
    { SYS_listen, ALWAYS, 0, 0, EPERM, "as connect" },
    { SYS_accept, ALWAYS, 0, 0, EPERM, "as connect" },
    { SYS_accept4, ALWAYS, 0, 0, EPERM, "as connect" },
    /* other processes: of the user's, any the compile could reach */
    { SYS_ptrace, ALWAYS, 0, 0, EPERM, "another process's memory and registers" },
    { SYS_process_vm_readv, ALWAYS, 0, 0, EPERM, "another process's memory" },
    { SYS_process_vm_writev, ALWAYS, 0, 0, EPERM, "another process's memory" },
#ifdef SYS_process_madvise
    { SYS_process_madvise, ALWAYS, 0, 0, EPERM, "another process's memory" },
#endif
#ifdef SYS_pidfd_getfd
    { SYS_pidfd_getfd, ALWAYS, 0, 0, EPERM, "another process's open files" },
#endif
    { SYS_kcmp, ALWAYS, 0, 0, EPERM, "another process's kernel objects" },
    /* namespaces and mounts: in a user namespace of its own a process holds capabilities
     * and can change the file tree Landlock's rules are about */
    { SYS_unshare, ALWAYS, 0, 0, EPERM, "a namespace of its own" },
    { SYS_setns, ALWAYS, 0, 0, EPERM, "another process's namespace" },
    { SYS_clone, ARG_HAS, 0, NEW_NAMESPACE, EPERM, "a child in namespaces of its own (a fork, "
                                                   "a vfork or a thread is fine)" },
#ifdef SYS_clone3
    /* its flags are in memory the filter cannot read; glibc then uses clone */
    { SYS_clone3, ALWAYS, 0, 0, ENOSYS, "as clone, which takes its place" },
#endif
    { SYS_mount, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_umount2, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_pivot_root, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_chroot, ALWAYS, 0, 0, EPERM, "mounts" },
#ifdef SYS_open_tree
    { SYS_open_tree, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_move_mount, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_fsopen, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_fsconfig, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_fsmount, ALWAYS, 0, 0, EPERM, "mounts" },
    { SYS_fspick, ALWAYS, 0, 0, EPERM, "mounts" },
#endif
#ifdef SYS_mount_setattr
    { SYS_mount_setattr, ALWAYS, 0, 0, EPERM, "mounts" },
#endif
    /* the terminal the build runs in */
    { SYS_ioctl, ARG_IS, 1, TIOCSTI, EPERM, "types into the user's terminal, as if they had" },
    { SYS_ioctl, ARG_IS, 1, TIOCLINUX, EPERM, "on a console, pastes its selection as typed" },
    /* the kernel's rarer interfaces, each a way in for a kernel exploit */
    { SYS_bpf, ALWAYS, 0, 0, EPERM, "programs run in the kernel" },
    { SYS_perf_event_open, ALWAYS, 0, 0, EPERM, "the kernel's and other processes' events" },
    { SYS_userfaultfd, ALWAYS, 0, 0, EPERM, "page faults served by the process: it widens "
                                            "the kernel's races" },
#ifdef SYS_io_uring_setup
    { SYS_io_uring_setup, ALWAYS, 0, 0, EPERM, "its operations are not seen by seccomp" },
    { SYS_io_uring_enter, ALWAYS, 0, 0, EPERM, "as io_uring_setup" },
    { SYS_io_uring_register, ALWAYS, 0, 0, EPERM, "as io_uring_setup" },
#endif
    { SYS_keyctl, ALWAYS, 0, 0, EPERM, "the kernel's keyrings: the user's session keys" },
    { SYS_add_key, ALWAYS, 0, 0, EPERM, "as keyctl" },
    { SYS_request_key, ALWAYS, 0, 0, EPERM, "as keyctl" },
    { SYS_syslog, ALWAYS, 0, 0, EPERM, "the kernel's log, and the addresses in it" },
    { SYS_fanotify_init, ALWAYS, 0, 0, EPERM, "watches the files of a whole mount" },
    { SYS_open_by_handle_at, ALWAYS, 0, 0, EPERM, "opens a file by handle, past the paths "
                                                  "Landlock's rules name" },
#ifdef SYS_modify_ldt
    { SYS_modify_ldt, ALWAYS, 0, 0, EPERM, "16-bit segments" },
#endif
#ifdef SYS_iopl
    { SYS_iopl, ALWAYS, 0, 0, EPERM, "the machine's I/O ports" },
    { SYS_ioperm, ALWAYS, 0, 0, EPERM, "as iopl" },
#endif
#ifdef SYS_uselib
    { SYS_uselib, ALWAYS, 0, 0, EPERM, "a.out libraries" },
#endif
    /* the machine's administration: refused to the user already, and no way in either */
    { SYS_kexec_load, ALWAYS, 0, 0, EPERM, "administration" },
#ifdef SYS_kexec_file_load
    { SYS_kexec_file_load, ALWAYS, 0, 0, EPERM, "administration" },
#endif
    { SYS_init_module, ALWAYS, 0, 0, EPERM, "administration" },
    { SYS_finit_module, ALWAYS, 0, 0, EPERM, "administration" },
    { SYS_delete_module, ALWAYS, 0, 0, EPERM, "administration" },
    { SYS_reboot, ALWAYS, 0, 0, EPERM, "administration" },
    { SYS_swapon, ALWAYS, 0, 0, EPERM, "administration" },
    { SYS_swapoff, ALWAYS, 0, 0, EPERM, "administration" },
    { SYS_acct, ALWAYS, 0, 0, EPERM, "administration" },
    { SYS_quotactl, ALWAYS, 0, 0, EPERM, "administration" },
};
#define NRULES (sizeof rules / sizeof rules[0])

/* the header, 5 instructions a rule at most, the verdict "allow" */
_Static_assert(8 + 5 * NRULES <= NOPI_CCFILTER_MAX, "NOPI_CCFILTER_MAX is too small");

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, t, f) ((struct sock_filter)BPF_JUMP(code, k, t, f))
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + \
                   (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4))

void nopi_ccfilter_build(nopi_ccfilter *f)
{
    f->len = 0;
    const char *env = getenv("NEURONOP_SECCOMP");
    if (env && strcmp(env, "off") == 0)
        return;
    struct sock_filter *p = f->prog;
    unsigned short n = 0;
    const uint32_t nr = offsetof(struct seccomp_data, nr);
    /* any call through another entry point: a compiler makes none */
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
    p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, nr);
#ifdef FOREIGN_NR
    p[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, FOREIGN_NR, 0, 1);
    p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
#endif
    for (size_t i = 0; i < NRULES; i++) {
        const struct rule *r = &rules[i];
        const uint32_t deny = SECCOMP_RET_ERRNO | (uint32_t)r->err;
        if (r->when == ALWAYS) {
            p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 1);
            p[n++] = STMT(BPF_RET | BPF_K, deny);
            continue;
        }
        /* the call, its argument, the test, "deny", and the call's number back for the
         * rules that follow */
        p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r->nr, 0, 4);
        p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(r->arg));
        p[n++] = r->when == ARG_IS ? JUMP(BPF_JMP | BPF_JEQ | BPF_K, r->value, 0, 1)
                                   : JUMP(BPF_JMP | BPF_JSET | BPF_K, r->value, 0, 1);
        p[n++] = STMT(BPF_RET | BPF_K, deny);
        p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, nr);
    }
    p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f->len = n;
}

int nopi_ccfilter_install(const nopi_ccfilter *f)
{
    if (!f->len)
        return 0;
    struct sock_fprog prog = { f->len, (struct sock_filter *)f->prog };
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : -1;
}
