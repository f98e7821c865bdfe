/*
 * target.c - resolves a LIB|DIR|MANIFEST argument to a loaded op library.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "report.h"

static bool is_shared_object(const char *arg)
{
    size_t n = strlen(arg);
    struct stat st;
    return (n > 3 && strcmp(arg + n - 3, ".so") == 0) ||
           (stat(arg, &st) == 0 && S_ISREG(st.st_mode) &&
            !(n > 5 && (strcmp(arg + n - 5, ".yaml") == 0 || strcmp(arg + n - 4, ".yml") == 0)));
}

int open_target(const char *arg, bool verbose, nop_library **out)
{
    nop_error err;
    *out = NULL;
    if (is_shared_object(arg))
        return nop_library_open(out, arg, &err) == 0 ? 0 : report_error(&err);
    nop_manifest *m;
    if (nop_manifest_load(&m, arg, &err) != 0)
        return report_error(&err);
    nop_build_opts o;
    default_build_opts(&o);
    o.verbose = verbose;
    nop_build_result res;
    int rc = 0;
    if (nop_build(m, &o, &res, &err) != 0)
        rc = report_error(&err);
    else if (nop_library_open(out, res.lib_path, &err) != 0)
        rc = report_error(&err);
    else if (!res.up_to_date || verbose)
        fprintf(stderr, "neuronop: %s '%s' (%s)\n", res.up_to_date ? "up to date" : "built",
                nop_manifest_name(m), res.lib_path);
    nop_manifest_free(m);
    return rc;
}
