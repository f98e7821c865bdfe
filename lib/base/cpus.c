/*
 * cpus.c - how many CPUs this process may keep busy at once (nop_cpus_usable): the CPUs its
 * affinity mask allows, and no more than its cgroups' CPU bandwidth limit (cgroup.c), which
 * the mask does not show.
 */
#include <errno.h>
#include <sched.h>

#include "internal.h"

/* The CPUs the affinity mask allows, on a machine of any size: the mask grows until the
 * kernel's fits (EINVAL: larger than 1024, cpu_set_t's size); 1 when it cannot be read. */
static int affinity_count(void)
{
    for (int size = 1024; size <= (1 << 20); size *= 2) {
        cpu_set_t *set = CPU_ALLOC((size_t)size);
        if (!set)
            return 1;
        size_t bytes = CPU_ALLOC_SIZE((size_t)size);
        int rc = sched_getaffinity(0, bytes, set), e = errno;
        int n = rc == 0 ? CPU_COUNT_S(bytes, set) : 0;
        CPU_FREE(set);
        if (rc == 0)
            return n > 0 ? n : 1;
        if (e != EINVAL)
            return 1;
    }
    return 1;
}

double nop_cpus_usable(void)
{
    double n = affinity_count();
    double limit = nopi_cgroup_cpu_limit("");
    return limit > 0 && limit < n ? limit : n;
}
