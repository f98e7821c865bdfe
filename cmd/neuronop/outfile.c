/*
 * outfile.c - the check the commands' output files share (run -o, test --junit, bench
 * --trace), made before the work whose result the file keeps, which may take long.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "report.h"

/* Whether the file at path can be written as nop_write_file writes it: a new or regular file
 * (or a link to one) is replaced through a new file beside it, so dir must take one (a
 * read-only mount, /proc and a folder without write permission do not); a device, FIFO or
 * terminal is written in place, and opening it is the writer's own test.  0, or the exit
 * status after saying why. */
static int can_make_file(const char *path, const char *dir)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return 0;
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/.neuronop-probe-XXXXXX", dir) >= (int)sizeof probe)
        return 0;   /* the writer says what is wrong with so long a name */
    int fd = mkstemp(probe);
    if (fd < 0) {
        report_plain_error("cannot write '%s': no file can be made in '%s' (%s); name a file "
                           "in a folder you can write", path, dir, strerror(errno));
        return STATUS_USAGE;
    }
    close(fd);
    unlink(probe);
    return 0;
}

int check_output_file(const char *path, const char *kind)
{
    struct stat st;
    size_t n = strlen(path);
    bool folder = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    if (n == 0 || path[n - 1] == '/' || folder) {
        report_plain_error("cannot write '%s': %s; name %s", path,
                           !n ? "an empty name" : folder ? "it is a folder"
                                                          : "a file name cannot end in '/'",
                           kind);
        return STATUS_USAGE;
    }
    char *dir = strdup(path);
    if (!dir)
        return report_nomem();
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
        if (stat(dir, &st) != 0) {
            report_plain_error("cannot write '%s': %s", path, strerror(errno));
            rc = STATUS_USAGE;
        } else if (!S_ISDIR(st.st_mode)) {
            report_plain_error("cannot write '%s': '%s' is not a folder", path, dir);
            rc = STATUS_USAGE;
        }
    }
    if (rc == 0)
        rc = can_make_file(path, slash ? dir : ".");
    free(dir);
    return rc;
}
