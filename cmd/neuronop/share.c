/*
 * share.c - locates share/neuronop and builds the CLI's default build options.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "report.h"

const char *share_dir(void)
{
    static char dir[PATH_MAX];   /* the CLI's own state; lib/ never holds such globals */
    if (dir[0])
        return dir;
    const char *env = getenv("NEURONOP_SHARE_DIR");
    if (env && env[0]) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(dir, sizeof dir, "share/neuronop");
        return dir;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';           /* the bin folder */
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';           /* its parent: the prefix */
    if (strlen(exe) + sizeof "/share/neuronop" > sizeof dir)
        snprintf(dir, sizeof dir, "share/neuronop");
    else
        snprintf(dir, sizeof dir, "%.*s/share/neuronop", (int)(sizeof dir - 16), exe);
    return dir;
}

void default_build_opts(nop_build_opts *o)
{
    memset(o, 0, sizeof *o);
    o->share_dir = share_dir();
    o->diag = report_sink;
}
