/*
 * cpus.c - how many CPUs this process may keep busy at once (nop_cpus_usable): the CPUs its
 * affinity mask allows, and no more than its cgroups' CPU bandwidth limit (a container
 * started with `docker --cpus=1`, a systemd unit's CPUQuota=), which the mask does not show:
 * such a container sees every CPU of the host in its mask, yet two processes of its own busy
 * at once each run half the time.
 *
 * The limit is read from the cgroup file system as /proc/self/cgroup names it: cgroup v2's
 * cpu.max ("QUOTA PERIOD", or "max PERIOD"), or v1's cpu.cfs_quota_us and cpu.cfs_period_us
 * (a quota of -1: none), in the process's cgroup and in each one above it, since a parent's
 * limit binds its children too.  A cgroup path that is not found under the mount (a container
 * whose mount is its own cgroup, not the hierarchy's root) is looked for by its tails, then at
 * the mount's root.  Anything unreadable counts as no limit: the answer is never below what
 * the mask says because of a file that is not there.  Not seen: a cgroup namespace whose
 * cgroup file system is the host's mount (unshare -C without a mount of its own), where
 * /proc/self/cgroup says "/" of a cgroup the mount does not show as its root.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define LINE 4096

/* Reads the first line of root + path (at most size - 1 bytes) into buf; false if none. */
static bool first_line(const char *root, const char *path, char *buf, size_t size)
{
    char full[LINE];
    if (snprintf(full, sizeof full, "%s%s", root, path) >= (int)sizeof full)
        return false;
    FILE *f = fopen(full, "re");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    return ok;
}

/* The limit, in CPUs, that the cgroup directory dir (a path under root) sets by itself:
 * v2's cpu.max when v2, else v1's quota and period; 0 when it sets none. */
static double dir_limit(const char *root, const char *dir, bool v2)
{
    char path[LINE], line[128];
    long long quota = -1, period = 0;
    if (v2) {
        char max[32];
        if (snprintf(path, sizeof path, "%s/cpu.max", dir) >= (int)sizeof path ||
            !first_line(root, path, line, sizeof line) ||
            sscanf(line, "%31s %lld", max, &period) != 2 || strcmp(max, "max") == 0)
            return 0;
        quota = strtoll(max, NULL, 10);
    } else {
        if (snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir) >= (int)sizeof path ||
            !first_line(root, path, line, sizeof line))
            return 0;
        quota = strtoll(line, NULL, 10);
        if (snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir) >= (int)sizeof path ||
            !first_line(root, path, line, sizeof line))
            return 0;
        period = strtoll(line, NULL, 10);
    }
    return quota > 0 && period > 0 ? (double)quota / (double)period : 0;
}

/* Whether root + dir is a directory. */
static bool dir_exists(const char *root, const char *dir)
{
    char full[LINE];
    struct stat st;
    return snprintf(full, sizeof full, "%s%s", root, dir) < (int)sizeof full &&
           stat(full, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether the cgroup path cg climbs above its namespace's root: "/../x", the path of a
 * process whose cgroup lies outside the root of its cgroup namespace (cgroup_namespaces(7)). */
static bool climbs(const char *cg)
{
    for (const char *p = cg; (p = strstr(p, "/..")) != NULL; p += 3)
        if (p[3] == '/' || p[3] == '\0')
            return true;
    return false;
}

/* The tightest limit set by mount (under root) for the cgroup path cg and each cgroup above
 * it; 0 when none is set. */
static double path_limit(const char *root, const char *mount, const char *cg, bool v2)
{
    char dir[LINE];
    if (climbs(cg) ||   /* the mount's cgroups are not the process's nor above it */
        snprintf(dir, sizeof dir, "%s%s", mount, strcmp(cg, "/") == 0 ? "" : cg) >=
        (int)sizeof dir)
        return 0;
    size_t base = strlen(mount);
    /* Not under the mount as named: the mount is a cgroup below the hierarchy's root (a
     * container's own, bind-mounted without a cgroup namespace, as Docker does on cgroup
     * v1), and cg starts with that cgroup's path in the hierarchy.  The process's cgroup is
     * then the longest tail of cg found under the mount (one made inside the container), or
     * the mount's root itself. */
    for (const char *tail = cg; !dir_exists(root, dir);) {
        if (!(tail = strchr(tail + 1, '/'))) {
            dir[base] = '\0';
            break;
        }
        snprintf(dir, sizeof dir, "%s%s", mount, tail);   /* shorter than before */
    }
    double limit = 0;
    for (;;) {
        double here = dir_limit(root, dir, v2);
        if (here > 0 && (limit == 0 || here < limit))
            limit = here;
        char *slash = strrchr(dir + base, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    return limit;
}

/* Whether the comma-separated controller list ctl names controller name. */
static bool names(const char *ctl, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = ctl; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

double nopi_cgroup_cpu_limit(const char *root)
{
    char path[] = "/proc/self/cgroup", full[LINE], line[LINE];
    if (snprintf(full, sizeof full, "%s%s", root, path) >= (int)sizeof full)
        return 0;
    FILE *f = fopen(full, "re");
    if (!f)
        return 0;
    double limit = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH": v2's is "0::PATH"; v1's cpu hierarchy lists "cpu" */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c1 = *c2 = '\0';
        const char *ctl = c1 + 1, *cg = c2 + 1;
        double here = 0;
        if (strcmp(line, "0") == 0 && *ctl == '\0') {
            here = path_limit(root, "/sys/fs/cgroup", cg, true);
            if (here == 0)   /* a hybrid system mounts v2 under unified/ */
                here = path_limit(root, "/sys/fs/cgroup/unified", cg, true);
        } else if (names(ctl, "cpu")) {
            here = path_limit(root, "/sys/fs/cgroup/cpu", cg, false);
            if (here == 0)
                here = path_limit(root, "/sys/fs/cgroup/cpu,cpuacct", cg, false);
        }
        if (here > 0 && (limit == 0 || here < limit))
            limit = here;
    }
    fclose(f);
    return limit;
}

double nop_cpus_usable(void)
{
    cpu_set_t set;
    double n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    double limit = nopi_cgroup_cpu_limit("");
    return limit > 0 && limit < n ? limit : n;
}
