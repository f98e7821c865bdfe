/*
 * cmd-build.c - `neuronop build [DIR|MANIFEST]`: builds an op library, says what was built.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "options.h"
#include "report.h"

static bool force, verbose, json, memcheck;
static const char *compiler, *build_dir, *library_dir;
static const char *const compiler_names[] = { "tcc", "cc", NULL };
static long compile_time, compile_memory;

static const struct option_spec options[] = {
    OPTION('f', "force", OPT_FLAG, &force, NULL, "rebuild even when the library is up to date"),
    OPTION('v', "verbose", OPT_FLAG, &verbose, NULL, "show each compile step and its flags"),
    OPTION(0, "json", OPT_FLAG, &json, NULL, "print the result and the library's metadata as JSON"),
    OPTION(0, "memcheck", OPT_FLAG, &memcheck, NULL,
           "instrument the kernels for memcheck, into libNAME.memcheck.so"),
    { 0, "compiler", OPT_STRING, &compiler, "tcc|cc",
      "compile C sources with libtcc or the system C compiler at -O2 (overrides 'compiler:')",
      COMPLETE_VALUES, compiler_names, 0, 0 },
    OPTION(0, "build-dir", OPT_STRING, &build_dir, "DIR",
           "build into DIR, anywhere (overrides build_directory, which must stay in the folder)"),
    OPTION(0, "library-dir", OPT_STRING, &library_dir, "DIR",
           "let the build read sources and headers anywhere in DIR, not only the manifest's folder"),
    OPTION_RANGE(0, "compile-time", OPT_INT, &compile_time, "SECONDS",
                 "stop a compile past this much CPU or wall time (default 60)", 1, 86400),
    OPTION_RANGE(0, "compile-memory", OPT_INT, &compile_memory, "MB",
                 "stop a compile past this much memory (default 2048)", 16, 1048576),
    OPTIONS_END,
};

const struct command_spec build_spec = {
    "build", "[options] [DIR|MANIFEST]",
    "Build the op library a manifest (neuronop.yaml) describes into\n"
    "BUILD_DIRECTORY/libNAME.so, or say it is up to date: C sources with libtcc (or,\n"
    "with compiler: cc, the system C compiler), C++ sources with g++ -std=c++14.",
    options, 0, 1,
    "build an op library from its manifest",
    NULL,
};

static void print_signature(const nop_opinfo *op)
{
    printf("%s(", op->name);
    for (int k = 0; k < op->nargs; k++)
        printf("%s%s", k ? ", " : "", nop_argtype_name(op->args[k]));
    printf(")");
}

/* The ops as built: a manifest without ops: has them from its NEURON_LIBRARY. */
static void print_ops(const nop_manifest *m, const nop_build_result *res)
{
    nop_library *lib = NULL;
    nop_error err;
    int n = nop_manifest_op_count(m);
    /* from the file, never by loading it: a library's constructors are user code */
    if (n == 0 && nop_library_describe(&lib, res->lib_path, &err) == 0) {
        n = nop_library_op_count(lib);
        if (nop_library_namespace(lib))
            printf("  namespace: %s\n", nop_library_namespace(lib));
    }
    printf("  ops:");
    for (int i = 0; i < n; i++) {
        nop_opinfo op;
        if (lib)
            nop_library_op(lib, i, &op);
        else
            nop_manifest_op(m, i, &op);
        printf(i ? ", " : " ");
        print_signature(&op);
    }
    nop_library_close(lib);
}

static void print_human(const nop_manifest *m, const nop_build_result *res)
{
    if (res->up_to_date)
        printf("%s: up to date: %s (%.1f ms)\n", nop_manifest_name(m), res->lib_path,
               res->seconds * 1e3);
    else if (res->cached)   /* NEURONOP_CACHE_DIR */
        printf("%s: built %s in %.1f ms (%d file%s compiled, %d from the cache)\n",
               nop_manifest_name(m), res->lib_path, res->seconds * 1e3, res->compiled,
               res->compiled == 1 ? "" : "s", res->cached);
    else
        printf("%s: built %s in %.1f ms (%d file%s compiled)\n", nop_manifest_name(m),
               res->lib_path, res->seconds * 1e3, res->compiled, res->compiled == 1 ? "" : "s");
    print_ops(m, res);
    static const char *const from[] = { "default", "from extra_cflags", "from stack_size" };
    printf("\n  multicore: %s, stack: %lld bytes (%s)\n",
           nop_manifest_multicore(m) ? "yes" : "no", (long long)nop_manifest_stack_size(m),
           from[nop_manifest_stack_from(m)]);
}

static int print_json(const nop_build_result *res)
{
    nop_library *lib;
    nop_error err;
    if (nop_library_describe(&lib, res->lib_path, &err) != 0)   /* never loaded: see print_ops */
        return report_error(&err);
    char *meta = nop_library_json(lib);
    nop_library_close(lib);
    if (!meta) {
        return report_nomem();
    }
    printf("{\n\"status\": \"%s\",\n\"seconds\": %.6f,\n\"compiled\": %d,\n\"cached\": %d,\n"
           "\"library\": %s}\n", res->up_to_date ? "up to date" : "built", res->seconds,
           res->compiled, res->cached, meta);
    free(meta);
    return 0;
}

int cmd_build(int argc, char **argv)
{
    char **args;
    int nargs;
    int rc = parse_options(&build_spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    const char *target = nargs ? args[0] : ".";
    free(args);
    if (build_dir && !build_dir[0])
        return command_usage_error(&build_spec, "--build-dir needs a folder, not ''");
    if (library_dir) {   /* (else every source was 'outside' a folder that is not there) */
        struct stat st;
        int e = stat(library_dir, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
        if (e)
            return command_usage_error(&build_spec, "--library-dir '%s': %s", library_dir,
                                       strerror(e));
    }

    nop_error err;
    nop_manifest *m;
    if (nop_manifest_load(&m, target, &err) != 0)
        return report_error(&err);
    nop_build_opts o;
    default_build_opts(&o);
    o.force = force;
    o.verbose = verbose;
    o.memcheck = memcheck;
    o.compiler = compiler;
    o.build_dir = build_dir;
    o.library_dir = library_dir;
    o.compile_seconds = (unsigned)compile_time;
    o.compile_mb = (unsigned)compile_memory;
    nop_build_result res;
    rc = 0;
    if (build_bounded(m, &o, &res, &err) != 0)
        rc = report_error(&err);
    else if (json)
        rc = print_json(&res);
    else
        print_human(m, &res);
    nop_manifest_free(m);
    return rc;
}
