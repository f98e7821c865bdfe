/*
 * cmd-python.c - `neuronop python [options] SCRIPT [ARG...]`: runs a Python script whose
 * ops run on the virtual device (python/neuronop is the package; neuronop-python(1)).
 *
 * It sets up the environment and execs the Python (/usr/bin/python3, or $NEURONOP_PYTHON)
 * on the package's launcher, neuronop/_launch.py, so the script's exit status is neuronop's
 * with nothing in between.  What it sets:
 *   PYTHONPATH            the in-tree package (python/ next to bin/), when there is one; an
 *                         installed neuronop is in Python's own dist-packages
 *   NEURONOP_COMPAT_DIR   the torch_neuronx compatibility package, which the launcher
 *                         appends to sys.path: it exists only under this command, and a real
 *                         torch_neuronx earlier on the path still wins
 *   NEURONOP_BIN          this program, which the package starts as its supervisor
 *   NEURONOP_SHARE_DIR    the share folder this program uses, for the supervisor and builds
 *   NEURONOP_SERVE_ARGS   the device options given here, one per line, for the supervisor
 *   NEURONOP_STATS        with --stats: model device times, print the op table at exit
 *   NEURONOP_MEMCHECK     with --memcheck: ops run their libraries' memcheck builds
 * Options end at SCRIPT: what follows is the script's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

static struct device_cli dc = { .spec = &python_spec };
static bool stats;

static const struct option_spec options[] = {
    OPTION(0, "stats", OPT_FLAG, &stats, NULL,
           "print each op's calls, host time and modeled device time at exit"),
    DEVICE_OPTIONS(dc),
    OPTIONS_END,
};

const struct command_spec python_spec = {
    "python", "[options] SCRIPT [ARG...]",
    "Run a Python script with torch and the neuronop package, whose ops\n"
    "(torch.ops.NAMESPACE.OP, from custom_op.load or custom_op.load_library) run on\n"
    "the virtual device in neuronop's confined worker.  Under this command only,\n"
    "torch_neuronx.xla_impl.custom_op is importable too, so the tutorials' scripts run\n"
    "unmodified.  The Python is /usr/bin/python3, or $NEURONOP_PYTHON.  The exit\n"
    "status is the script's.",
    options, 1, -1,
    "run a Python script whose torch ops run on the virtual device",
    NULL,
};

/* Where SCRIPT is in argv: the first argument that is not an option or an option's value
 * (the option table says which options take one); argc when there is none. */
static int script_index(int argc, char **argv)
{
    int i = 1;
    while (i < argc && argv[i][0] == '-' && argv[i][1]) {
        if (strcmp(argv[i], "--") == 0)
            return i + 1;
        const char *a = argv[i];
        bool takes = false;
        for (const struct option_spec *o = options; o->long_name; o++) {
            bool named = (a[1] == '-' && strcmp(a + 2, o->long_name) == 0) ||
                         (a[1] != '-' && a[1] == o->short_name && !a[2]);
            if (named && o->type != OPT_FLAG)
                takes = true;
        }
        i += takes ? 2 : 1;
    }
    return i;
}

/* dir/rel when it exists; NULL otherwise. */
static char *existing(const char *dir, const char *rel, char *buf, size_t size)
{
    struct stat st;
    int n = snprintf(buf, size, "%s/%s", dir, rel);
    return n > 0 && (size_t)n < size && stat(buf, &st) == 0 ? buf : NULL;
}

static int set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        report_plain_error("cannot set %s: %s", name, strerror(errno));
        return STATUS_INTERNAL;
    }
    return 0;
}

/* NAME=1 when on, else unset (a value inherited from the caller's environment included). */
static int flag_env(const char *name, bool on)
{
    if (on)
        return set_env(name, "1");
    unsetenv(name);
    return 0;
}

/* Whether an option given before SCRIPT goes to the supervisor as it is: the ones the
 * package passes by environment instead (it starts the supervisor with them also when a
 * script runs under plain python3) do not. */
static bool serve_arg(const char *arg)
{
    return strcmp(arg, "--stats") != 0 && strcmp(arg, "--memcheck") != 0 &&
           strcmp(arg, "--") != 0;
}

int cmd_python(int argc, char **argv)
{
    int at = script_index(argc, argv);
    /* parse what comes before SCRIPT, and SCRIPT, with the table; the rest is the script's */
    int head = at < argc ? at + 1 : argc;
    char **args;
    int nargs;
    int rc = parse_options(&python_spec, head, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    free(args);
    if ((rc = device_cli_checks(&dc)) != 0) {
        free_option_lists(&python_spec);
        return rc;
    }
    free_option_lists(&python_spec);
    if (dc.device || dc.cores) {   /* a wrong profile or --cores is said now, as run says
                                    * it, not at the script's first op */
        nop_profile *p;
        nop_error err;
        if (nop_profile_load(&p, dc.device ? dc.device : DEFAULT_DEVICE, share_dir(), &err) != 0)
            return report_error(&err);
        char why[CORES_WHY_SIZE];
        rc = device_cli_cores_fit(&dc, NULL, p, why, sizeof why);   /* (no library yet) */
        nop_profile_free(p);
        if (rc != 0) {
            command_usage_error(dc.spec, "%s", why);
            return rc;
        }
    }
    const char *script = argv[at];
    if (access(script, R_OK) != 0) {
        report_plain_error("cannot read script '%s': %s", script, strerror(errno));
        return STATUS_USAGE;
    }
    struct stat st;   /* python runs a folder by its __main__.py, and without one exits 1 */
    char main_py[PATH_MAX + 16];
    snprintf(main_py, sizeof main_py, "%s/__main__.py", script);
    if (stat(script, &st) == 0 && S_ISDIR(st.st_mode) && access(main_py, R_OK) != 0) {
        report_plain_error("cannot run folder '%s': it has no '__main__.py' to run", script);
        return STATUS_USAGE;
    }

    char exe[PATH_MAX], bindir[PATH_MAX], buf[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        report_plain_error("cannot find the neuronop program itself (/proc/self/exe)");
        return STATUS_INTERNAL;
    }
    exe[n] = '\0';
    snprintf(bindir, sizeof bindir, "%s", exe);
    char *slash = strrchr(bindir, '/');
    if (slash)
        *slash = '\0';
    if ((rc = set_env("NEURONOP_BIN", exe)) || (rc = set_env("NEURONOP_SHARE_DIR", share_dir())))
        return rc;
    /* the package: in the source tree, bin/../python (put on PYTHONPATH); installed,
     * PREFIX/lib/python3/dist-packages, where Debian's Python looks by itself.  Its
     * launcher runs as a file, so a script that never imports torch starts quickly. */
    char launch[PATH_MAX + 64];
    /* the tree: python/ beside bin/, or beside share/ (a build in out/, the share folder
     * named by NEURONOP_SHARE_DIR) */
    char tree[PATH_MAX + 32];
    snprintf(tree, sizeof tree, "%s/../python", bindir);
    if (!existing(tree, "neuronop/_launch.py", launch, sizeof launch))
        snprintf(tree, sizeof tree, "%s/../../python", share_dir());
    if (existing(tree, "neuronop/_launch.py", launch, sizeof launch)) {
        char path[2 * PATH_MAX + 2];
        const char *old = getenv("PYTHONPATH");
        snprintf(path, sizeof path, "%s%s%s", tree, old && *old ? ":" : "", old ? old : "");
        if ((rc = set_env("PYTHONPATH", path)) ||
            (rc = set_env("NEURONOP_COMPAT_DIR", existing(tree, "compat", buf,
                                                          sizeof buf) ? buf : "")))
            return rc;
    } else if (existing(bindir, "../lib/python3/dist-packages/neuronop/_launch.py", launch,
                        sizeof launch)) {
        /* under /usr Python looks there itself; under another prefix it must be told */
        char *pkg = existing(bindir, "../lib/python3/dist-packages", buf, sizeof buf);
        char real[PATH_MAX], path[2 * PATH_MAX + 2];
        const char *old = getenv("PYTHONPATH");
        if (realpath(pkg, real) && strcmp(real, "/usr/lib/python3/dist-packages") != 0) {
            snprintf(path, sizeof path, "%s%s%s", real, old && *old ? ":" : "",
                     old ? old : "");
            if ((rc = set_env("PYTHONPATH", path)))
                return rc;
        }
        snprintf(buf, sizeof buf, "%s/python-compat", share_dir());
        if ((rc = set_env("NEURONOP_COMPAT_DIR", buf)))
            return rc;
    } else {
        report_plain_error("cannot find neuronop's Python package next to '%s' (in "
                           "../python or ../lib/python3/dist-packages); reinstall neuronop",
                           exe);
        return STATUS_INTERNAL;
    }
    /* the device options, as given, for the supervisor (parsed there again, with the same
     * table rows) */
    size_t len = 1;
    for (int i = 1; i < at; i++)
        if (serve_arg(argv[i]))
            len += strlen(argv[i]) + 1;
    char *serve = malloc(len);
    if (!serve)
        return report_nomem();
    serve[0] = '\0';
    for (int i = 1; i < at; i++)
        if (serve_arg(argv[i])) {
            strcat(serve, argv[i]);
            strcat(serve, "\n");
        }
    rc = set_env("NEURONOP_SERVE_ARGS", serve);
    free(serve);
    if (rc || (rc = flag_env("NEURONOP_STATS", stats)) ||
        (rc = flag_env("NEURONOP_MEMCHECK", dc.memcheck)))
        return rc;

    const char *python = getenv("NEURONOP_PYTHON");
    if (!python || !*python)
        python = "/usr/bin/python3";
    int extra = argc - at;
    char **pargv = calloc((size_t)extra + 3, sizeof *pargv);
    if (!pargv)
        return report_nomem();
    pargv[0] = (char *)python;
    pargv[1] = launch;
    for (int i = 0; i < extra; i++)
        pargv[2 + i] = argv[at + i];
    fflush(NULL);
    execvp(python, pargv);   /* a name without a slash is looked for on PATH, as a shell would */
    int e = errno;
    free(pargv);
    report_plain_error("cannot run Python '%s': %s; install python3-torch, or set "
                       "NEURONOP_PYTHON to a Python that has torch", python, strerror(e));
    return STATUS_USAGE;
}
