/*
 * leftovers.c - a build, then the end of whatever its compilers started that left their
 * process groups (see build_bounded in builtin.h).
 *
 * The library kills and reaps a compiler's process group when the compiler ends
 * (neuronop-build(1)), but a process that left the group (setsid, setpgid) is beyond that;
 * and the library never reaps a child it did not start, since the program it is part of may
 * have children of its own.  This program is a subreaper (neuronop.c), so such a process,
 * once its parent has ended, is one of its children: the children it has after a build that
 * it did not have before are such leftovers.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "builtin.h"

enum { MOST = 256 };   /* children counted: neuronop itself has a few at most */

/* This process's children (of each of its threads), at most MOST of them, into pids; their
 * count, or -1 when the kernel does not list them (no /proc, or CONFIG_PROC_CHILDREN off). */
static int children(pid_t *pids)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return -1;
    int n = 0, listed = 0;
    struct dirent *t;
    while ((t = readdir(tasks)) != NULL) {
        if (t->d_name[0] == '.')
            continue;
        char path[96];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children", t->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        listed++;
        long pid;
        while (n < MOST && fscanf(f, "%ld", &pid) == 1)
            pids[n++] = (pid_t)pid;
        fclose(f);
    }
    closedir(tasks);
    return listed ? n : -1;
}

static bool among(pid_t pid, const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] == pid)
            return true;
    return false;
}

int build_bounded(const nop_manifest *m, const nop_build_opts *o, nop_build_result *res,
                  nop_error *err)
{
    pid_t before[MOST], after[MOST];
    int nbefore = children(before);
    int rc = nop_build(m, o, res, err);
    /* Each round kills the new children and reaps them; what they had started was adopted
     * meanwhile, so the next round finds it, until a round finds none.  A child's pid is
     * its own until it is reaped, so no kill here can reach another process. */
    for (int round = 0; nbefore >= 0 && round < 64; round++) {
        int nafter = children(after), killed = 0;
        for (int i = 0; i < nafter; i++) {
            if (among(after[i], before, nbefore))
                continue;
            kill(after[i], SIGKILL);
            waitpid(after[i], NULL, 0);
            killed++;
        }
        if (!killed)
            break;
    }
    return rc;
}
