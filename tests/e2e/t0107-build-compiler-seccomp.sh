#!/bin/sh
# A compiler's child processes have a seccomp filter (lib/build/ccfilter.c): a source that
# took over a compiler through one of its bugs (a hostile pull request, built in CI) gets
# EPERM for the network, tracing, namespaces, typing into the terminal and calls through
# the x32 entry point, while every real compile builds as before.  The compiler here is a
# probe the test compiles with the system's cc: it makes each call, prints what it got and
# fails, so neuronop's error quotes it.
. ./lib.sh
unset NEURONOP_CACHE_DIR   # every compile runs: the cache would skip the probe

cat >"$WORK/probe.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* "what: strerror" or "what: allowed", then end (neuronop quotes 6 lines of a failed
 * compiler's output: two calls go on a line) */
static void say(const char *what, long r, const char *end)
{
    printf("%s: %s%s", what, r < 0 ? strerror(errno) : "allowed", end);
}

int main(void)
{
    char c = 'x';
    int sv[2], st = 0;
    say("probe socket", socket(AF_INET, SOCK_STREAM, 0), "; ");
    say("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "\n");
    /* a child asks to be traced by this process, so that nothing stops the probe */
    pid_t p = fork();
    if (p == 0)
        _exit(ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 ? errno : 0);
    waitpid(p, &st, 0);
    errno = WEXITSTATUS(st);
    say("probe ptrace", errno ? -1 : 0, "\n");
    /* its standard error is a file: without the filter, "not a terminal" */
    say("probe ioctl TIOCSTI", ioctl(2, TIOCSTI, &c), "\n");
    /* clone first: in the user namespace unshare makes, the next one would be refused */
    long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
        _exit(0);
    if (r > 0)
        waitpid((pid_t)r, &st, 0);
    say("probe clone", r, "; ");
    say("unshare", unshare(CLONE_NEWUSER), "\n");
#ifdef __x86_64__
    say("probe x32 getpid", syscall(SYS_getpid | 0x40000000), "\n");
#endif
    fflush(stdout);
    return 1;
}
C
${CC:-cc} -o "$WORK/probe" "$WORK/probe.c"

# every call the probe makes was refused, and said so in neuronop's error
refused() {
    no="Operation not permitted"
    expect_err "probe socket: $no; socketpair: $no"
    expect_err "probe ptrace: $no"
    expect_err "probe ioctl TIOCSTI: $no"
    expect_err "probe clone: $no; unshare: $no"
    if [ "$(uname -m)" = x86_64 ]; then
        expect_err "probe x32 getpid: Operation not permitted"
    fi
}

# (Landlock off: the probe is in this test's folder, and Landlock runs programs only from the
# system's; the filter does not depend on it)
test_expect "a C compiler (compiler: cc) may not reach the network, another process or the terminal" '
    copy_example relu c
    NEURONOP_LANDLOCK=off CC="$WORK/probe" run build --compiler=cc c
    expect_status 3
    expect_err "neuronop: error: compiling failed ('"'"'$WORK/probe'"'"' exited with 1)"
    refused'

test_expect "nor may a C++ compiler (CXX)" '
    copy_example negate_cxx x
    NEURONOP_LANDLOCK=off CXX="$WORK/probe" run build x
    expect_status 3
    refused'

# (what the kernel says to an x32 call, or to a user namespace, depends on how it was built
# and set up: only that it is not the filter's EPERM)
test_expect "NEURONOP_SECCOMP=off leaves the compilers without the filter" '
    copy_example relu off
    NEURONOP_SECCOMP=off NEURONOP_LANDLOCK=off CC="$WORK/probe" run build --compiler=cc off
    expect_status 3
    expect_err "probe socket: allowed; socketpair: allowed"
    expect_err "probe ioctl TIOCSTI: Inappropriate ioctl for device"
    if grep -q "x32 getpid: Operation not permitted" "$WORK/err"; then exit 1; fi'

# and the real compilers, under the filter and Landlock, build: libtcc in its child, cc for
# a C library, g++ and the link for a C++ one
test_expect "libtcc, cc and g++ build under the filter" '
    copy_example relu tcc
    run build tcc
    expect_status 0
    copy_example relu cc
    run build --compiler=cc cc
    expect_status 0
    copy_example negate_cxx cxx
    run build cxx
    expect_status 0
    run run cxx negate ones:4
    expect_status 0'

test_done
