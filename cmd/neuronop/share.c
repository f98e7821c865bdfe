/*
 * share.c - locates share/neuronop and the neuronop program itself, and builds the CLI's
 * default build options.
 */
#include <limits.h>
#include <stdbool.h>
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

/* Whether dir/neuronop is the program exe (resolved). */
static bool is_self(const char *dir, size_t len, const char *exe)
{
    char path[PATH_MAX], resolved[PATH_MAX];
    if (snprintf(path, sizeof path, "%.*s/neuronop", (int)len, len ? dir : ".") >=
        (int)sizeof path)
        return false;
    return realpath(path, resolved) && strcmp(resolved, exe) == 0;
}

const char *self_command(char *buf, size_t size)
{
    char exe[PATH_MAX], cwd[PATH_MAX];
    if (!realpath("/proc/self/exe", exe))
        return "neuronop";
    for (const char *p = getenv("PATH"); p && *p;) {   /* found by its name */
        size_t len = strcspn(p, ":");
        if (len && p[0] == '/' && is_self(p, len, exe))
            return "neuronop";
        p += len + (p[len] == ':');
    }
    size_t n = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;   /* else by its path */
    if (n > 1 && strncmp(exe, cwd, n) == 0 && exe[n] == '/')
        snprintf(buf, size, "%s", exe + n + 1);
    else
        snprintf(buf, size, "%s", exe);
    return buf;
}
