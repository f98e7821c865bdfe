/*
 * cgroup.c - the limits this process's cgroups set, which nothing else shows it: the CPU
 * bandwidth limit (a container started with `docker --cpus=1`, a systemd unit's CPUQuota=),
 * which the affinity mask does not show (such a container sees every CPU of the host in its
 * mask, yet two processes of its own busy at once each run half the time); and the memory
 * limit (`docker --memory=2g`, MemoryMax=), which sysconf's physical pages do not show
 * (memory past it ends a process by the OOM killer, however much the machine has free).
 *
 * A limit is read from the cgroup file system as /proc/self/cgroup names it, in the
 * process's cgroup and in each one above it, since a parent's limit binds its children too:
 * cgroup v2's cpu.max ("QUOTA PERIOD", or "max PERIOD") and memory.max (bytes, or "max"), or
 * v1's cpu.cfs_quota_us and cpu.cfs_period_us (a quota of -1: none) and
 * memory.limit_in_bytes (near 2^63: none).  The hierarchies are found where
 * /proc/self/mountinfo says they are mounted (v2's, and v1's with the controller), or in
 * their usual places when it cannot be read.  A mount of a cgroup below a hierarchy's root
 * (a container's own) is read for the part of the path below that cgroup; a cgroup path
 * that is still not found under the mount is looked for by its tails, then at the mount's
 * root.  Anything unreadable counts as no limit: an answer is never tighter than the
 * machine's because of a file that is not there.  Not seen: a cgroup namespace whose cgroup
 * file system is the host's mount (unshare -C without a mount of its own), where
 * /proc/self/cgroup says "/" of a cgroup the mount does not show as its root.
 */
#include <errno.h>
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
static double cpu_dir_limit(const char *root, const char *dir, bool v2)
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

/* The limit, in bytes, that the cgroup directory dir sets by itself: v2's memory.max, v1's
 * memory.limit_in_bytes; 0 when it sets none ("max"; v1's none is the largest page count
 * in bytes, just below 2^63). */
static double memory_dir_limit(const char *root, const char *dir, bool v2)
{
    char path[LINE], line[128];
    if (snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes")
        >= (int)sizeof path || !first_line(root, path, line, sizeof line) ||
        line[0] < '0' || line[0] > '9')
        return 0;
    errno = 0;
    unsigned long long bytes = strtoull(line, NULL, 10);
    return errno || bytes == 0 || bytes >= 1ULL << 62 ? 0 : (double)bytes;
}

/* A controller whose limits are read: its name in v1's hierarchies and /proc/self/cgroup,
 * what a cgroup directory sets, and its v1 hierarchy's usual places. */
typedef struct controller {
    const char *name;
    double (*dir_limit)(const char *root, const char *dir, bool v2);
    const char *usual_v1[2];
} controller;

static const controller CPU = { "cpu", cpu_dir_limit,
                                { "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct" } };
static const controller MEMORY = { "memory", memory_dir_limit,
                                   { "/sys/fs/cgroup/memory", NULL } };

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

/* The tightest limit of controller ctl set by mount (under root) for the cgroup path cg and
 * each cgroup above it; 0 when none is set. */
static double path_limit(const controller *ctl, const char *root, const char *mount,
                         const char *cg, bool v2)
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
        double here = ctl->dir_limit(root, dir, v2);
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

/* A mounted hierarchy: where, which cgroup it shows as its root ("/" but for a container's
 * own), and whether it is v2's. */
typedef struct cgmount {
    char dir[LINE / 4], shows[LINE / 4];
    bool v2;
} cgmount;

enum { MAX_MOUNTS = 8 };

/* Undoes mountinfo's octal escapes (a space is "\040") in place. */
static void unescape(char *s)
{
    char *out = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *out++ = *s;
        }
    }
    *out = '\0';
}

/* The v2 hierarchies and v1's with controller ctl, as root/proc/self/mountinfo lists them
 * ("ID PARENT DEV ROOT DIR OPTIONS [TAGS] - TYPE SOURCE SUPER-OPTIONS"); their usual places
 * when it cannot be read or lists none.  Returns how many are in m. */
static int cgroup_mounts(const controller *ctl, const char *root, cgmount *m)
{
    char full[LINE], line[LINE];
    int n = 0;
    FILE *f = snprintf(full, sizeof full, "%s/proc/self/mountinfo", root) < (int)sizeof full
                  ? fopen(full, "re") : NULL;
    while (f && n < MAX_MOUNTS && fgets(line, sizeof line, f)) {
        char shows[LINE], dir[LINE], type[64], super[LINE];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", shows, dir) != 2 ||
            sscanf(dash + 3, "%63s %*s %4095s", type, super) != 2)
            continue;
        bool v2 = strcmp(type, "cgroup2") == 0;
        if (!v2 && !(strcmp(type, "cgroup") == 0 && names(super, ctl->name)))
            continue;
        unescape(shows);
        unescape(dir);
        if (strlen(shows) >= sizeof m->shows || strlen(dir) >= sizeof m->dir)
            continue;
        strcpy(m[n].dir, dir);
        strcpy(m[n].shows, shows);
        m[n++].v2 = v2;
    }
    if (f)
        fclose(f);
    if (n == 0) {
        const char *usual[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified", ctl->usual_v1[0],
                                ctl->usual_v1[1] };
        for (size_t i = 0; i < NOPI_ARRAY_LEN(usual); i++)
            if (usual[i]) {
                snprintf(m[n].dir, sizeof m[n].dir, "%s", usual[i]);
                strcpy(m[n].shows, "/");
                m[n++].v2 = i < 2;
            }
    }
    return n;
}

/* The limit mount m sets for the cgroup path cg: below the cgroup it shows as its root when
 * cg is under that one (a container's own cgroup, bind-mounted). */
static double mount_limit(const controller *ctl, const char *root, const cgmount *m,
                          const char *cg)
{
    size_t n = strlen(m->shows);
    if (n > 1 && strncmp(cg, m->shows, n) == 0 && (cg[n] == '/' || cg[n] == '\0'))
        cg = cg[n] ? cg + n : "/";
    return path_limit(ctl, root, m->dir, cg, m->v2);
}

/* The tightest limit of controller ctl over the process's cgroups; 0 when none is set. */
static double cgroup_limit(const controller *ctl, const char *root)
{
    char path[] = "/proc/self/cgroup", full[LINE], line[LINE];
    if (snprintf(full, sizeof full, "%s%s", root, path) >= (int)sizeof full)
        return 0;
    FILE *f = fopen(full, "re");
    if (!f)
        return 0;
    cgmount mounts[MAX_MOUNTS];
    int nmounts = cgroup_mounts(ctl, root, mounts);
    double limit = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH": v2's is "0::PATH"; a v1 hierarchy lists its controllers */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c1 = *c2 = '\0';
        const char *ctls = c1 + 1, *cg = c2 + 1;
        bool v2 = strcmp(line, "0") == 0 && *ctls == '\0';
        if (!v2 && !names(ctls, ctl->name))
            continue;
        for (int i = 0; i < nmounts; i++) {   /* a hybrid system has v2 and v1 mounts */
            double here = mounts[i].v2 == v2 ? mount_limit(ctl, root, &mounts[i], cg) : 0;
            if (here > 0 && (limit == 0 || here < limit))
                limit = here;
        }
    }
    fclose(f);
    return limit;
}

double nopi_cgroup_cpu_limit(const char *root)
{
    return cgroup_limit(&CPU, root);
}

double nopi_cgroup_memory_limit(const char *root)
{
    return cgroup_limit(&MEMORY, root);
}
