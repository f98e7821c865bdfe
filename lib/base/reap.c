/*
 * reap.c - reaping a killed process group: its leader, and the members this process adopted
 * when the leader died before them.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "internal.h"

int nopi_reap_group(pid_t leader)
{
    int status = 0;
    while (waitpid(leader, &status, 0) < 0 && errno == EINTR)
        ;
    kill(-leader, SIGKILL);   /* whatever it left behind in its group */
    /* Those of them whose parent died first were adopted by the nearest subreaper: this
     * process when its program made itself one (the tool does), else an init that may reap
     * them late, or never.  Only this process's own children are waited for here: ECHILD
     * ends the loop at once when it adopted none. */
    while (waitpid(-leader, NULL, 0) > 0 || errno == EINTR)
        ;
    return status;
}
