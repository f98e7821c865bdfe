/* Unit tests of the limits a process's cgroups set (lib/base/cgroup.c), read from a fake
 * tree laid out as /proc/self/cgroup, mountinfo and /sys/fs/cgroup are, in the kernel's
 * documented formats (Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/memory.rst and
 * scheduler/sched-bwc.rst):
 *  - the CPU limit, cgroup v2's cpu.max and v1's cpu.cfs_quota_us / cpu.cfs_period_us:
 *    `neuronop test` runs a case's reference alongside its executions only with two CPUs or
 *    more to spare, and a container limited to one (docker --cpus=1) shows every CPU of the
 *    host in its affinity mask;
 *  - the memory limit, v2's memory.max and v1's memory.limit_in_bytes: a worker's record may
 *    be at most half of it, as a container (docker --memory) ends neuronop by the OOM killer
 *    past it, however much the host has. */
#include <unistd.h>

#include "unit.h"
#include "base/internal.h"

/* Writes text to root/rel, making the folders on the way. */
static void put(const char *root, const char *rel, const char *text)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s%s')\"", root, rel);
    assert_int_equal(system(cmd), 0);
    unit_write(root, rel, text);
}

static void v2_quota_in_the_process_cgroup(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "0::/ci/job\n");
    put(root, "/sys/fs/cgroup/cpu.max", "max 100000\n");
    put(root, "/sys/fs/cgroup/ci/cpu.max", "max 100000\n");
    put(root, "/sys/fs/cgroup/ci/job/cpu.max", "150000 100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 1.5);
    unit_cleanup(root);
}

static void v2_a_parent_limit_binds_its_children(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "0::/ci/job\n");
    put(root, "/sys/fs/cgroup/ci/cpu.max", "50000 100000\n");
    put(root, "/sys/fs/cgroup/ci/job/cpu.max", "400000 100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0.5);
    unit_cleanup(root);
}

static void v2_max_everywhere_is_no_limit(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "0::/user.slice\n");
    put(root, "/sys/fs/cgroup/cpu.max", "max 100000\n");
    put(root, "/sys/fs/cgroup/user.slice/cpu.max", "max 100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0);
    unit_cleanup(root);
}

/* a container's namespace shows its own cgroup as the root of the mount, while
 * /proc/self/cgroup may still name the host's path for it */
static void v2_a_mount_of_the_own_cgroup_is_read_at_its_root(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "0::/system.slice/docker-1234.scope\n");
    put(root, "/sys/fs/cgroup/cpu.max", "100000 100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 1);
    unit_cleanup(root);
}

static void v1_quota_and_period_in_the_cpu_hierarchy(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n"
                                   "0::/\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "100000\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 1);
    unit_cleanup(root);
}

/* Docker on cgroup v1 bind-mounts the container's own cgroup, so /proc/self/cgroup names
 * the host's path of it: a cgroup made inside the container (as t0232 does) is found by the
 * tail of that path, and both its limit and the container's count */
static void v1_a_cgroup_made_inside_a_container_is_found_by_its_tail(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "4:cpu,cpuacct:/docker/abc/inner\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "400000\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/inner/cpu.cfs_quota_us", "150000\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/inner/cpu.cfs_period_us", "100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 1.5);
    put(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0.5);
    unit_cleanup(root);
}

/* a process whose cgroup lies outside its cgroup namespace's root sees "/../name": the mount
 * (the namespace's root) is then no cgroup of its, nor one above it */
static void a_path_above_the_namespace_root_is_no_limit(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "0::/../sibling\n");
    put(root, "/sys/fs/cgroup/cpu.max", "50000 100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0);
    put(root, "/proc/self/cgroup", "0::/..\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0);
    put(root, "/proc/self/cgroup", "0::/a..b\n");   /* a name with dots is a name */
    put(root, "/sys/fs/cgroup/a..b/cpu.max", "150000 100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0.5);
    unit_cleanup(root);
}

static void v1_no_quota_is_no_limit(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "3:cpu:/\n");
    put(root, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
    put(root, "/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0);
    unit_cleanup(root);
}

/* cpuacct alone is not cpu: its line names no limit */
static void v1_another_controller_named_like_cpu_is_not_it(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "5:cpuacct:/a\n6:cpuset:/a\n");
    put(root, "/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us", "50000\n");
    put(root, "/sys/fs/cgroup/cpu/a/cpu.cfs_period_us", "100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0);
    unit_cleanup(root);
}

static void missing_or_garbled_files_are_no_limit(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    assert_true(nopi_cgroup_cpu_limit(root) == 0);   /* no /proc/self/cgroup at all */
    put(root, "/proc/self/cgroup", "0::/x\nnot a line\n");
    put(root, "/sys/fs/cgroup/x/cpu.max", "banana\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0);
    put(root, "/sys/fs/cgroup/x/cpu.max", "100000 0\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 0);
    unit_cleanup(root);
}

/* the hierarchies are where mountinfo says (a v1 cpu hierarchy mounted elsewhere, its name
 * escaped as the kernel writes it), not only in their usual places */
static void mountinfo_says_where_the_hierarchies_are(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "7:memory:/a\n4:cpu:/a\n");
    put(root, "/proc/self/mountinfo",
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "30 22 0:29 / /cg/mem rw - cgroup cgroup rw,memory\n"
        "31 22 0:30 / /cg/my\\040cpu rw,nosuid shared:9 - cgroup cgroup rw,cpu\n");
    put(root, "/cg/mem/a/cpu.cfs_quota_us", "10000\n");      /* not the cpu hierarchy */
    put(root, "/cg/mem/a/cpu.cfs_period_us", "100000\n");
    put(root, "/cg/my cpu/a/cpu.cfs_quota_us", "150000\n");
    put(root, "/cg/my cpu/a/cpu.cfs_period_us", "100000\n");
    assert_true(nopi_cgroup_cpu_limit(root) == 1.5);
    unit_cleanup(root);
}

/* a container's own cgroup mounted as the hierarchy's root: the path below it is read, not a
 * cgroup that only shares a tail of it */
static void a_mount_of_a_cgroup_reads_the_path_below_it(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "0::/docker/abc/job\n");
    put(root, "/proc/self/mountinfo",
        "40 22 0:38 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    put(root, "/sys/fs/cgroup/job/cpu.max", "150000 100000\n");
    put(root, "/sys/fs/cgroup/abc/job/cpu.max", "50000 100000\n");   /* another cgroup */
    assert_true(nopi_cgroup_cpu_limit(root) == 1.5);
    unit_cleanup(root);
}

/* memory.max in the process's cgroup and above it: the tightest; "max" is none */
static void v2_memory_max_in_the_cgroup_and_above(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "0::/ci/job\n");
    assert_true(nopi_cgroup_memory_limit(root) == 0);
    put(root, "/sys/fs/cgroup/memory.max", "max\n");
    put(root, "/sys/fs/cgroup/ci/memory.max", "2147483648\n");
    put(root, "/sys/fs/cgroup/ci/job/memory.max", "max\n");
    assert_true(nopi_cgroup_memory_limit(root) == 2147483648.0);
    put(root, "/sys/fs/cgroup/ci/job/memory.max", "1073741824\n");
    assert_true(nopi_cgroup_memory_limit(root) == 1073741824.0);
    put(root, "/sys/fs/cgroup/ci/memory.max", "max\n");
    put(root, "/sys/fs/cgroup/ci/job/memory.max", "max\n");
    assert_true(nopi_cgroup_memory_limit(root) == 0);
    put(root, "/sys/fs/cgroup/ci/job/memory.max", "banana\n");
    assert_true(nopi_cgroup_memory_limit(root) == 0);
    unit_cleanup(root);
}

/* v1's memory hierarchy, where mountinfo says; its "no limit" is 2^63 less a page */
static void v1_memory_limit_in_bytes(void **state)
{
    (void)state;
    const char *root = unit_tmpdir();
    put(root, "/proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n12:memory:/docker/abc\n");
    put(root, "/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    put(root, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "536870912\n");
    put(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/memory.limit_in_bytes", "4096\n");
    assert_true(nopi_cgroup_memory_limit(root) == 536870912.0);
    put(root, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes",
        "9223372036854771712\n");
    assert_true(nopi_cgroup_memory_limit(root) == 0);
    put(root, "/proc/self/mountinfo",
        "30 22 0:29 / /cg/mem rw - cgroup cgroup rw,memory\n"
        "31 22 0:30 / /cg/cpu rw - cgroup cgroup rw,cpu\n");
    put(root, "/cg/cpu/docker/abc/memory.limit_in_bytes", "4096\n");   /* not memory's */
    put(root, "/cg/mem/docker/abc/memory.limit_in_bytes", "268435456\n");
    assert_true(nopi_cgroup_memory_limit(root) == 268435456.0);
    unit_cleanup(root);
}

static void the_machine_itself_has_at_least_one(void **state)
{
    (void)state;
    double n = nop_cpus_usable();
    assert_true(n > 0);
    assert_true(n <= (double)sysconf(_SC_NPROCESSORS_CONF));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(v2_quota_in_the_process_cgroup),
        cmocka_unit_test(v2_a_parent_limit_binds_its_children),
        cmocka_unit_test(v2_max_everywhere_is_no_limit),
        cmocka_unit_test(v2_a_mount_of_the_own_cgroup_is_read_at_its_root),
        cmocka_unit_test(v1_quota_and_period_in_the_cpu_hierarchy),
        cmocka_unit_test(v1_a_cgroup_made_inside_a_container_is_found_by_its_tail),
        cmocka_unit_test(a_path_above_the_namespace_root_is_no_limit),
        cmocka_unit_test(v1_no_quota_is_no_limit),
        cmocka_unit_test(v1_another_controller_named_like_cpu_is_not_it),
        cmocka_unit_test(missing_or_garbled_files_are_no_limit),
        cmocka_unit_test(mountinfo_says_where_the_hierarchies_are),
        cmocka_unit_test(a_mount_of_a_cgroup_reads_the_path_below_it),
        cmocka_unit_test(v2_memory_max_in_the_cgroup_and_above),
        cmocka_unit_test(v1_memory_limit_in_bytes),
        cmocka_unit_test(the_machine_itself_has_at_least_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
