/*
 * neuronop.c - the neuronop command: finds the subcommand in a table and runs it.
 *
 * To add a command: write cmd-NAME.c with `int cmd_NAME(int argc, char **argv)`, declare it
 * in builtin.h, add a row to `commands` below, add man/neuronop-NAME.1 and an end-to-end test
 * tests/e2e/tNNNN-NAME-DETAIL.sh.  The Makefile compiles every cmd/neuronop/ C file.
 */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "report.h"

static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "build", cmd_build, "build an op library from its manifest" },
    { "bench", cmd_bench, "measure an op's throughput on the virtual device" },
    { "inspect", cmd_inspect, "print the self-description of a built op library" },
    { "run", cmd_run, "run an op on the virtual GPSIMD device" },
    { "test", cmd_test, "run a manifest's test cases under every core order and count" },
};

static void usage(FILE *out)
{
    fprintf(out, "usage: neuronop [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'neuronop COMMAND --help' describes a command; see neuronop(1).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return STATUS_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("neuronop %s\n", NOP_VERSION);
        return 0;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
        names[i] = commands[i].name;
    }
    const char *hint = nop_closest(name, names, sizeof names / sizeof names[0]);
    if (name[0] == '-')
        report_plain_error("unknown option '%s'", name);
    else if (hint)
        report_plain_error("'%s' is not a neuronop command; did you mean '%s'?", name, hint);
    else
        report_plain_error("'%s' is not a neuronop command", name);
    fprintf(stderr, "see 'neuronop --help'\n");
    return STATUS_USAGE;
}
