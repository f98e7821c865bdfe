/*
 * outfile.c - the check the commands' output files share (run -o, test --junit, bench
 * --trace), made before the work whose result the file keeps, which may take long.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "report.h"

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
    free(dir);
    return rc;
}
