/*
 * landlock.c - Landlock rulesets (see landlock.h): the kernel's ABI version, the rights each
 * version handles, and a ruleset built from path rules and applied to the calling process.
 */
#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "libneuronop.h"

/* The file-system rights of each ABI version (not all in every linux/landlock.h). */
#define FS_ABI1 ((1ULL << 13) - 1)      /* execute ... make_sym */
#define FS_REFER (1ULL << 13)           /* ABI 2: linking or renaming across folders */
#define FS_TRUNCATE (1ULL << 14)        /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15)       /* ABI 5 */
/* the rights a file (not a folder) can be given */
#define FS_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                        LANDLOCK_ACCESS_FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* The ruleset's attribute as ABI 6 has it: linux/landlock.h before Linux 6.7 has only its
 * first field and before 6.12 not its last (Debian 12's has only the first, so the network
 * rules were never built here); the kernel reads the size it is given. */
struct ruleset_attr {
    unsigned long long handled_access_fs;
    unsigned long long handled_access_net;   /* ABI 4 */
    unsigned long long scoped;               /* ABI 6 */
};
#define NET_BIND_TCP (1ULL << 0)
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

int nop_landlock_abi(void)
{
    const char *env = getenv("NEURONOP_LANDLOCK");
    if (env && strcmp(env, "off") == 0)
        return -1;
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v > 0 ? (int)v : 0;
}

/* The ABI version to use: 0 without Landlock, whatever the reason. */
static long abi(void)
{
    int v = nop_landlock_abi();
    return v > 0 ? v : 0;
}

bool nopi_landlock_available(void)
{
    return abi() > 0;
}

/* The Landlock rights for rights (enum nopi_landlock_right), of those handled. */
static unsigned long long access_of(unsigned rights, unsigned long long handled)
{
    unsigned long long a = 0;
    if (rights & NOPI_LL_READ)
        a |= FS_READ;
    if (rights & NOPI_LL_EXEC)
        a |= LANDLOCK_ACCESS_FS_EXECUTE;
    if (rights & NOPI_LL_WRITE)
        a |= handled & ~(unsigned long long)(FS_READ | LANDLOCK_ACCESS_FS_EXECUTE);
    return a & handled;
}

static void add_rule(int ruleset, const nopi_landlock_rule *r, unsigned long long handled)
{
    int fd = open(r->path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return;   /* absent on this system: nothing to allow */
    unsigned long long a = access_of(r->rights, handled);
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        a &= FS_FILE_RIGHTS;   /* a file takes only the rights a file has */
    struct landlock_path_beneath_attr rule = { .allowed_access = a, .parent_fd = fd };
    if (a)
        syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    close(fd);
}

int nopi_landlock_restrict(const nopi_landlock_rule *rules, int n, bool scoped)
{
    long v = abi();
    if (v < 1)
        return 0;
    /* every file-system right this kernel knows, so nothing is left unhandled */
    unsigned long long handled = FS_ABI1;
    if (v >= 2)
        handled |= FS_REFER;
    if (v >= 3)
        handled |= FS_TRUNCATE;
    if (v >= 5)
        handled |= FS_IOCTL_DEV;
    struct ruleset_attr attr = { .handled_access_fs = handled };
    size_t size = offsetof(struct ruleset_attr, handled_access_net);
    if (v >= 4) {   /* nothing confined has any business with the network */
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
        size = offsetof(struct ruleset_attr, scoped);
    }
    if (v >= 6 && scoped) {
        attr.scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET;
        size = sizeof attr;
    }
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0)
        return -1;
    for (int i = 0; i < n; i++)
        add_rule(rs, &rules[i], handled);
    int rc = (int)syscall(SYS_landlock_restrict_self, rs, 0);
    close(rs);
    return rc == 0 ? 0 : -1;
}
