/* Unit tests of the worker process (lib/device/sandbox.c, seccomp.c): the fork server's
 * reuse and replacement of its worker, and what the seccomp filter traps and allows. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "device/sandbox.h"

/* ---- the fork server -------------------------------------------------------------------- */

enum { REC_PID = NOPI_REC_USER };

/* Answers a request with its worker's pid; a request "exit" ends the worker instead. */
static int serve_pid(nop_device *cdev, void *ctx, const void *req, size_t len, nopi_wire *w,
                     nop_error *err)
{
    if (len == 4 && memcmp(req, "exit", 4) == 0)
        _exit(3);
    int32_t pid = getpid();
    return nopi_wire_put(w, REC_PID, &pid, sizeof pid);
}

static int take_pid(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    if (type != REC_PID || len != sizeof(int32_t))
        return -1;
    memcpy(ctx, data, len);
    return 0;
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
    nop_profile *profile;
    nop_device *dev;
    nopi_server *srv;
    nop_error err;
    nop_device_opts o = { .isolate = true, .timeout = 0.5 };
    assert_int_equal(nop_profile_load(&profile, "trn1", unit_share_dir(), &err), 0);
    assert_int_equal(nop_device_new(&dev, profile, &o, &err), 0);
    assert_int_equal(nopi_server_new(&srv, dev, serve_forged_phases, NULL, &err), 0);
    double t0 = nopi_now();
    int32_t pid = 0;
    assert_int_equal(nopi_server_call(srv, "op", 1.5, 0, "a", 1, take_pid, &pid, &err), -1);
    double took = nopi_now() - t0;
    assert_int_equal(err.kind, NOP_ERR_DEVICE);
    assert_non_null(strstr(err.diag.msg, "timeout"));
    assert_true(took >= 1.4 && took < 5.0);   /* not the 2.5 s each forged phase would give */
    nopi_server_free(srv);
    nop_device_free(dev);
    nop_profile_free(profile);
}

static void one_worker_serves_many_requests_and_is_replaced_when_it_dies(void **state)
{
    nop_profile *profile;
    nop_device *dev;
    nopi_server *srv;
    nop_error err;
    nop_device_opts o = { .isolate = true };
    assert_int_equal(nop_profile_load(&profile, "trn1", unit_share_dir(), &err), 0);
    assert_int_equal(nop_device_new(&dev, profile, &o, &err), 0);
    assert_int_equal(nopi_server_new(&srv, dev, serve_pid, NULL, &err), 0);
    int32_t first = 0, again = 0, next = 0;
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, "a", 1, take_pid, &first, &err), 0);
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, "b", 1, take_pid, &again, &err), 0);
    assert_true(first > 0 && first != getpid());
    assert_int_equal(again, first);   /* the same worker */
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, "exit", 4, take_pid, &next, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_DEVICE);
    assert_string_equal(err.diag.where, "op");
    assert_non_null(strstr(err.diag.msg, "(exit status 3) before the op finished"));
    assert_int_equal(kill(first, 0), -1);   /* killed and reaped */
    assert_int_equal(nopi_server_call(srv, "op", 10, 0, "c", 1, take_pid, &next, &err), 0);
    assert_true(next > 0 && next != first);   /* a new worker */
    nopi_server_free(srv);
    nop_device_free(dev);   /* reaps the last worker */
    assert_int_equal(kill(next, 0), -1);
    nop_profile_free(profile);
}

/* ---- the seccomp filter ----------------------------------------------------------------- */

/* Runs call in a confined child; returns the name the trap reported, "" when the call was
 * allowed (its result in *ret), or "died" when the child died without a report. */
static const char *confined(long (*call)(void), long *ret)
{
    static struct nopi_done done;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nop_error err;
        if (nopi_confine(fds[1], &err) != 0)
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
    const char *colon = strstr(done.err.diag.msg, "does not have: ");
    return colon ? colon + strlen("does not have: ") : done.err.diag.msg;
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

static void the_filter_traps_what_the_device_has_not(void **state)
{
    long r;
    assert_string_equal(confined(do_fork, &r), "fork");
    assert_string_equal(confined(do_process_clone, &r), "clone (a new process)");
    assert_string_equal(confined(do_execve, &r), "execve");
    assert_string_equal(confined(do_open_write, &r), "openat (for writing)");
    assert_string_equal(confined(do_open_create, &r), "openat (for writing)");
    assert_string_equal(confined(do_unlink, &r), "unlinkat");
    assert_string_equal(confined(do_socket, &r), "socket");
    assert_string_equal(confined(do_kill_other, &r), "kill");
    assert_string_equal(confined(do_tgkill_other, &r), "tgkill");
    assert_string_equal(confined(do_vfork, &r), "vfork");
    assert_string_equal(confined(do_creat, &r), "creat");
    assert_string_equal(confined(do_mkdir, &r), "mkdirat");
    assert_string_equal(confined(do_rename, &r), "renameat2");
    assert_string_equal(confined(do_ptrace, &r), "ptrace");
    assert_string_equal(confined(do_connect, &r), "connect");
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
    assert_string_equal(confined(do_clone3, &r), "");
    assert_int_equal(r, ENOSYS);   /* so that glibc falls back to clone, whose flags it sees */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_worker_serves_many_requests_and_is_replaced_when_it_dies),
        cmocka_unit_test(a_request_of_any_number_of_runs_ends_at_its_budget),
        cmocka_unit_test(the_filter_traps_what_the_device_has_not),
        cmocka_unit_test(the_filter_allows_what_the_runtime_needs),
    };
    return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
