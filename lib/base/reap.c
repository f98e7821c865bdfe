/*
 * reap.c - reaping a process group: its leader, then the rest of its group, killed, and the
 * members this process adopted when the leader died before them.
 */
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "internal.h"

int nopi_reap_group_usage(pid_t leader, int *status, struct rusage *ru)
{
    /* Waits for the leader's end but leaves it a zombie (WNOWAIT): until it is reaped its pid
     * stays taken, so -leader is its own group and no other.  Nor this process's own group:
     * a group's number is its founder's pid, taken as long as the group lasts, and the
     * leader's pid was new when it was forked. */
    siginfo_t si;
    while (waitid(P_PID, (id_t)leader, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    kill(-leader, SIGKILL);   /* whatever it left behind in its group, ended or not */
    int rc = 0;
    while (wait4(leader, status, 0, ru) < 0) {
        if (errno != EINTR) {
            rc = -1;
            break;
        }
    }
    /* Those of them whose parent died first were adopted by the nearest subreaper: this
     * process when its program made itself one (the tool does), else an init that may reap
     * them late, or never.  Only this process's own children are waited for here: ECHILD
     * ends the loop at once when it adopted none. */
    while (waitpid(-leader, NULL, 0) > 0 || errno == EINTR)
        ;
    return rc;
}

int nopi_reap_group(pid_t leader)
{
    int status = 0;
    nopi_reap_group_usage(leader, &status, NULL);
    return status;
}
