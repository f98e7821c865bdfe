/*
 * neuronop.c - the neuronop command: finds the subcommand in a table and runs it.
 *
 * To add a command: write cmd-NAME.c with `int cmd_NAME(int argc, char **argv)` and its option
 * table `const struct command_spec NAME_spec` (name, usage, help, options, a one-line brief),
 * declare both in builtin.h, add a row to `commands` below, add man/neuronop-NAME.1 and an
 * end-to-end test tests/e2e/tNNNN-NAME-DETAIL.sh.  The Makefile compiles every cmd/neuronop/
 * C file.  A command's name and brief live in its own table, so this list cannot drift.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <string.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

const struct command commands[] = {
    { cmd_build, &build_spec },
    { cmd_bench, &bench_spec },
    { cmd_inspect, &inspect_spec },
    { cmd_new, &new_spec },
    { cmd_python, &python_spec },
    { cmd_run, &run_spec },
    { cmd_test, &test_spec },
    { NULL, NULL },
};

static void usage(FILE *out)
{
    fprintf(out, "usage: neuronop [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; commands[i].fn; i++)
        fprintf(out, "  %-10s %s\n", commands[i].spec->name, commands[i].spec->brief);
    fprintf(out, "\n'neuronop COMMAND --help' (or 'neuronop help COMMAND') describes a "
            "command; see neuronop(1).\n");
}

/* Runs the command argv[1] names; its exit status. */
static int dispatch(int argc, char **argv)
{
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("neuronop %s\n", NOP_VERSION);
        return 0;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (argc > 2 && strcmp(name, "help") == 0) {   /* help COMMAND: COMMAND --help */
            if (argv[2][0] == '_') {   /* __complete, __serve: not commands users type */
                report_plain_error("'%s' is not a neuronop command", argv[2]);
                fprintf(stderr, "see 'neuronop --help'\n");   /* as every other one says */
                return STATUS_USAGE;
            }
            char *as_help[] = { argv[0], argv[2], (char *)"--help", NULL };
            return dispatch(3, as_help);
        }
        usage(stdout);
        return 0;
    }
    /* shell completion asks the program itself (cmd-complete.c); not a command users type */
    if (strcmp(name, "__complete") == 0)
        return cmd_complete(argc - 1, argv + 1);
    /* the Python package's supervisor (cmd-serve.c); the package starts it, users do not */
    if (strcmp(name, "__serve") == 0)
        return cmd_serve(argc - 1, argv + 1);
    const char *names[sizeof commands / sizeof commands[0]];
    size_t n = 0;
    for (size_t i = 0; commands[i].fn; i++) {
        if (strcmp(commands[i].spec->name, name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
        names[n++] = commands[i].spec->name;
    }
    static const char *const options[] = { "--version", "--help" };
    const char *hint = name[0] == '-' ? nop_closest(name, options, 2)
                                      : nop_closest(name, names, n);
    if (name[0] == '-')   /* (a new user's find: --versio got no suggestion, rn got run) */
        report_plain_error("unknown option '%s'%s%s%s", name, hint ? "; did you mean '" : "",
                           hint ? hint : "", hint ? "'?" : "");
    else if (hint)
        report_plain_error("'%s' is not a neuronop command; did you mean '%s'?", name, hint);
    else
        report_plain_error("'%s' is not a neuronop command", name);
    fprintf(stderr, "see 'neuronop --help'\n");
    return STATUS_USAGE;
}

/* A command's output that never reached standard output (a full disk) is a failure, not a
 * success: `neuronop bench --json >base.json` must not leave half a baseline and exit 0. */
static int finish_stdout(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    /* the first failure's reason: a flush of an empty buffer since says none (a docs audit's
     * find: run and bench said "Input/output error" for a full disk) */
    int e = stdout_errno() ? stdout_errno() : errno ? errno : EIO;
    report_plain_error("cannot write standard output: %s", strerror(e));
    return rc == 0 ? STATUS_USAGE : rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return STATUS_USAGE;
    }
    const char *name = argv[1];
    /* Nothing but a process with CAP_SYS_PTRACE may read this one's memory (where the
     * references' answers are) through /proc: the workers user code runs in have no
     * capabilities.  Not with the sandbox off, when a debugger may want to attach. */
    if (sandbox_on())
        prctl(PR_SET_DUMPABLE, 0);
    /* A worker's processes killed together (a case past its deadline: a zygote and its
     * child) are adopted by the nearest subreaper: this process, which the library then
     * reaps them in (nopi_reap_group), not an init that may reap them late or never; and so
     * are the processes a build's compiler started that left its group (build_bounded).  Not
     * for `python`, which execs the interpreter: the setting would outlive the exec. */
    if (sandbox_on() && strcmp(name, "python") != 0)
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* Every command waits for its children (compilers, workers) and reads their exit
     * status, which a SIGCHLD ignored by whoever started it would lose: the kernel would reap
     * them first, and a compile that succeeded read as failed (a Python user's find, under a
     * script that ignores SIGCHLD).  Not for `python`, whose script keeps what it was given. */
    if (strcmp(name, "python") != 0)
        signal(SIGCHLD, SIG_DFL);
    return finish_stdout(dispatch(argc, argv));
}
