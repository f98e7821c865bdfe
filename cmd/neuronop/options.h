/*
 * options.h - table-driven command-line parsing and the --help text made from the same table.
 *
 * Each command declares its options once, as an array of struct option_spec; parse_options()
 * fills the destinations and prints help generated from the table, so the help never drifts
 * from what is parsed (the man page is checked against the table by the test suite).
 */
#ifndef NEURONOP_OPTIONS_H
#define NEURONOP_OPTIONS_H

#include <stdbool.h>

enum option_type {
    OPT_FLAG,     /* bool *: set to true */
    OPT_STRING,   /* const char **: the argument */
    OPT_INT,      /* long *: a whole number */
    OPT_DOUBLE,   /* double *: a number */
    OPT_LIST,     /* struct option_list *: the option may repeat; each argument appended */
};

struct option_list {
    const char **items;
    int n;
};

/* What shell completion offers for an option's value (`neuronop __complete`). */
enum option_complete {
    COMPLETE_DEFAULT,   /* file names for strings and lists, nothing for numbers */
    COMPLETE_VALUES,    /* the option's `values` */
    COMPLETE_DEVICES,   /* the device profiles in share/neuronop/devices */
    COMPLETE_NONE,      /* a value only the user knows (a pattern, I/N): offer nothing */
};

struct option_spec {
    char short_name;          /* 0 when none */
    const char *long_name;
    enum option_type type;
    void *dest;
    const char *arg_name;     /* for help: "N", "FILE"; NULL for flags */
    const char *help;
    enum option_complete complete;
    const char *const *values;   /* COMPLETE_VALUES: the accepted words, NULL-terminated (an
                                  * OPT_STRING's value must be one of them) */
    double min, max;          /* OPT_INT and OPT_DOUBLE: the accepted range, when min < max
                               * (OPT_DOUBLE must be finite in any case) */
};

/* A row of an option table whose value completes as COMPLETE_DEFAULT and has no range;
 * OPTION_RANGE gives a number's range; rows that complete otherwise spell out every field.
 * OPTIONS_END ends a table.  The parser enforces ranges, so every command checks its
 * numbers the same way, with the same message. */
#define OPTION(short_name, long_name, type, dest, arg_name, help) \
    { short_name, long_name, type, dest, arg_name, help, COMPLETE_DEFAULT, NULL, 0, 0 }
#define OPTION_RANGE(short_name, long_name, type, dest, arg_name, help, min, max) \
    { short_name, long_name, type, dest, arg_name, help, COMPLETE_DEFAULT, NULL, min, max }
#define OPTIONS_END { 0, NULL, 0, NULL, NULL, NULL, COMPLETE_DEFAULT, NULL, 0, 0 }

struct command_spec {
    const char *name;         /* "build" */
    const char *usage;        /* "[options] [DIR|MANIFEST]" */
    const char *summary;      /* one sentence, shown under the usage */
    const struct option_spec *options;   /* terminated by an entry with long_name NULL */
    int min_args, max_args;   /* positional arguments; max -1 for no limit */
    const char *brief;        /* a line for `neuronop --help`'s list of commands */
    const char *surplus_hint; /* said after "too many arguments" (what the user may have
                               * meant by the extra one); may be NULL */
};

/* Parses argv[1..] (argv[0] is the command name).  *args receives the positional arguments
 * (*nargs of them) in a malloc'd array the caller frees (on success only).  A lone "--" ends
 * options; an argument that looks like a negative number is positional.
 * Returns 0 to go on, 1 when --help was printed (exit 0), -1 after printing a usage error
 * (exit 2).  OPT_LIST storage is malloc'd: release it with free_option_lists(). */
int parse_options(const struct command_spec *spec, int argc, char **argv, char ***args,
                  int *nargs);
void free_option_lists(const struct command_spec *spec);

/* Prints a usage error of spec's command, in the parser's form ("neuronop CMD: error: ...",
 * then where to read about it), for what only the command can judge (options that go
 * together, a value of a form of its own); returns the usage exit status, 2. */
int command_usage_error(const struct command_spec *spec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints the generated help of a command to stdout. */
void print_command_help(const struct command_spec *spec);

#endif /* NEURONOP_OPTIONS_H */
