/*
 * cmd-inspect.c - `neuronop inspect LIB|DIR`: prints a built library's self-description.
 */
#include <stdio.h>
#include <stdlib.h>

#include "builtin.h"
#include "options.h"
#include "report.h"

static const struct option_spec options[] = {
    OPTIONS_END,
};

const struct command_spec inspect_spec = {
    "inspect", "LIB.so|DIR|MANIFEST",
    "Print the metadata a built op library carries (name, ops and signatures,\n"
    "multicore, stack size, flags, source hashes, neuronop version) as JSON.",
    options, 1, 1,
    "print the self-description of a built op library",
    NULL,
};

int cmd_inspect(int argc, char **argv)
{
    char **args;
    int nargs;
    int rc = parse_options(&inspect_spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    nop_library *lib;
    rc = describe_target(args[0], &lib);   /* never loads it: no library code runs */
    free(args);
    if (rc != 0)
        return rc;
    char *json = nop_library_json(lib);
    nop_library_close(lib);
    if (!json) {
        return report_nomem();
    }
    fputs(json, stdout);
    free(json);
    return 0;
}
