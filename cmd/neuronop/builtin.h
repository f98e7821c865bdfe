/*
 * builtin.h - the subcommands of neuronop, one file each (cmd-NAME.c), and what they share.
 *
 * Every command has the same entry signature: argv[0] is the command's name, the return value
 * is the process exit status (see the table in neuronop(1)).
 */
#ifndef NEURONOP_BUILTIN_H
#define NEURONOP_BUILTIN_H

#include "libneuronop.h"
#include "options.h"

/* Each command's entry point and its option table (name, usage, --help text, options). */
int cmd_bench(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_new(int argc, char **argv);
int cmd_python(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_test(int argc, char **argv);
extern const struct command_spec bench_spec, build_spec, inspect_spec, new_spec, python_spec,
    run_spec, test_spec;

/* The commands (neuronop.c), ending in a {NULL, NULL} entry. */
struct command {
    int (*fn)(int argc, char **argv);
    const struct command_spec *spec;
};
extern const struct command commands[];

/* cmd-complete.c: `neuronop __complete CWORD WORD...`, what shell completion offers. */
int cmd_complete(int argc, char **argv);

/* cmd-serve.c: `neuronop __serve FD`, the Python package's supervisor (not a command users
 * type: the package starts it). */
int cmd_serve(int argc, char **argv);
extern const struct command_spec serve_spec;

/* share.c: the share/neuronop folder: $NEURONOP_SHARE_DIR, else ../share/neuronop next to the
 * executable (so an installed and an in-tree neuronop both work). */
const char *share_dir(void);
/* How to run this neuronop from the current folder, for a command the user may copy:
 * "neuronop" when that name on PATH is this program, else its path (relative to the current
 * folder when inside it), in buf. */
const char *self_command(char *buf, size_t size);

/* target.c: LIB|DIR|MANIFEST as commands take it.  A .so is opened as it is; a folder or a
 * manifest is built first (into build_dir when not NULL, as neuronop build --build-dir;
 * saying nothing when it is up to date, unless verbose) and its library opened.  memcheck:
 * build the memcheck variant, or insist a .so is one.  Prints any error; returns 0 or the
 * exit status to return. */
int open_target(const char *arg, const char *build_dir, bool verbose, bool memcheck,
                nop_library **out);

/* The same, but the library is read for its description only (nop_library_describe): no
 * code of it is loaded or run.  For inspect. */
int describe_target(const char *arg, nop_library **out);

/* Whether arg names, as it is, what those take: a folder with a neuronop.yaml, a manifest
 * (.yaml, .yml), or a shared object (.so, or a file that starts as an ELF one does).  Any
 * other file (an op's folder, an .npy input) is none. */
bool names_target(const char *arg);

/* outfile.c: whether PATH, an output file's option value, names a file that can be made (its
 * folder exists, and it is no folder itself), found before the work whose result it keeps.
 * kind says what to name instead of a folder ("a .npy file").  0, or the exit status after
 * saying why. */
int check_output_file(const char *path, const char *kind);

/* leftovers.c: nop_build, then kills and reaps every child this process did not have before
 * it (the processes a compiler started that left its process group, adopted by this process
 * as their subreaper), so that no process of a build outlives it. */
int build_bounded(const nop_manifest *m, const nop_build_opts *o, nop_build_result *res,
                  nop_error *err);

/* Fills build options with the CLI's defaults (share dir, printing sink). */
void default_build_opts(nop_build_opts *o);

#endif /* NEURONOP_BUILTIN_H */
