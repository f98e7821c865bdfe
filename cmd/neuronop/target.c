/*
 * target.c - resolves a LIB|DIR|MANIFEST argument to a loaded op library, or to one read
 * for its description only (inspect, which never runs library code).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "devopts.h"
#include "report.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

static bool is_manifest_name(const char *arg)
{
    return ends_with(arg, ".yaml") || ends_with(arg, ".yml");
}

/* A file that is not a manifest is opened as a library (and refused there if it is none). */
static bool is_shared_object(const char *arg)
{
    struct stat st;
    return ends_with(arg, ".so") ||
           (stat(arg, &st) == 0 && S_ISREG(st.st_mode) && !is_manifest_name(arg));
}

bool names_target(const char *arg)
{
    struct stat st;
    if (stat(arg, &st) != 0)
        return false;
    if (S_ISDIR(st.st_mode)) {
        char manifest[4200];
        return snprintf(manifest, sizeof manifest, "%s/neuronop.yaml", arg) <
                   (int)sizeof manifest && stat(manifest, &st) == 0 && S_ISREG(st.st_mode);
    }
    if (!S_ISREG(st.st_mode))
        return false;
    if (is_manifest_name(arg) || ends_with(arg, ".so"))
        return true;
    char magic[4] = { 0 };   /* a shared object by another name */
    FILE *f = fopen(arg, "rb");
    bool elf = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "\177ELF", 4) == 0;
    if (f)
        fclose(f);
    return elf;
}

/* A library given as a file must already be what --memcheck asks for. */
static int check_memcheck(nop_library **lib, const char *arg)
{
    if (nop_library_memcheck(*lib))
        return 0;
    report_plain_error("'%s' was built without --memcheck", arg);
    fprintf(stderr, "build it with 'neuronop build --memcheck', or give its folder instead\n");
    nop_library_close(*lib);
    *lib = NULL;
    return STATUS_USAGE;
}

/* The folder of the library source file src belongs to, into out: the nearest of its folders,
 * going up the path as given, that holds a neuronop.yaml, else its own (a reviewer's find:
 * a source in a subfolder named the subfolder). */
static void library_folder_of(const char *src, char *out, size_t size)
{
    const char *slash = strrchr(src, '/');
    struct stat st;
    if (!slash) {   /* in the folder itself, or in a subfolder of the library's */
        snprintf(out, size, "%s", stat("neuronop.yaml", &st) != 0 &&
                 stat("../neuronop.yaml", &st) == 0 ? ".." : ".");
        return;
    }
    snprintf(out, size, "%.*s", slash == src ? 1 : (int)(slash - src), src);
    char try[4096], manifest[4200];
    snprintf(try, sizeof try, "%s", out);
    for (int up = 0; up < 8; up++) {
        if (snprintf(manifest, sizeof manifest, "%s/neuronop.yaml", try) < (int)sizeof manifest &&
            stat(manifest, &st) == 0) {
            snprintf(out, size, "%s", try);
            return;
        }
        char *cut = strrchr(try, '/');
        if (!cut && strcmp(try, ".") != 0 && stat("neuronop.yaml", &st) == 0) {
            snprintf(out, size, ".");   /* 'src/relu.c' given in the library's folder */
            return;
        }
        if (!cut || cut == try)
            return;
        *cut = '\0';
    }
}

/* What a new user gives in place of a library (a new user's finds): a source file, or the
 * build folder.  Says what to give instead and returns STATUS_USAGE; 0 when arg is neither. */
static int not_a_target(const char *arg)
{
    static const char *const sources[] = { ".c", ".h", ".cpp", ".cc", ".cxx", ".hpp" };
    struct stat st;
    for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
        if (!ends_with(arg, sources[i]) || stat(arg, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        report_plain_error("'%s' is a source file, not a library", arg);
        char folder[4096];
        library_folder_of(arg, folder, sizeof folder);
        fprintf(stderr, "give its library's folder ('%s') or manifest, which is built first, "
                "or a built library (build/lib<name>.so)\n", folder);
        return STATUS_USAGE;
    }
    char manifest[4200];
    if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode) ||
        snprintf(manifest, sizeof manifest, "%s/neuronop.yaml", arg) >= (int)sizeof manifest ||
        stat(manifest, &st) == 0)
        return 0;
    DIR *d = opendir(arg);   /* a folder of built libraries: name the one to give */
    struct dirent *e;
    char lib[256] = "";
    int n = 0;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "lib", 3) == 0 && ends_with(e->d_name, ".so") &&
            !ends_with(e->d_name, ".memcheck.so") && n++ == 0)
            snprintf(lib, sizeof lib, "%s", e->d_name);
    if (d)
        closedir(d);
    if (n != 1)
        return 0;
    int len = (int)strlen(arg);
    while (len > 1 && arg[len - 1] == '/')   /* 'build/' is 'build' (a reviewer's find) */
        len--;
    report_plain_error("no neuronop.yaml in '%.*s', which holds the built library '%s'", len,
                       arg, lib);
    fprintf(stderr, "give the library ('%.*s/%s'), or its source folder\n", len, arg, lib);
    return STATUS_USAGE;
}

typedef int opener(nop_library **out, const char *path, nop_error *err);

/* open_target and describe_target: build a folder or manifest, then open its library with
 * open. */
static int resolve(const char *arg, const char *build_dir, bool verbose, bool memcheck,
                   opener *open, nop_library **out)
{
    nop_error err;
    *out = NULL;
    int rc = not_a_target(arg);
    if (rc != 0)
        return rc;
    if (is_shared_object(arg)) {
        if (open(out, arg, &err) != 0)
            return report_error(&err);
        return memcheck ? check_memcheck(out, arg) : 0;
    }
    nop_manifest *m;
    if (nop_manifest_load(&m, arg, &err) != 0)
        return report_error(&err);
    nop_build_opts o;
    default_build_opts(&o);
    o.verbose = verbose;
    o.memcheck = memcheck;
    o.build_dir = build_dir;
    nop_build_result res;
    if (build_bounded(m, &o, &res, &err) != 0)
        rc = report_error(&err);
    else if (open(out, res.lib_path, &err) != 0)
        rc = report_error(&err);
    else if (!res.up_to_date || verbose)
        fprintf(stderr, "neuronop: %s '%s' (%s)\n", res.up_to_date ? "up to date" : "built",
                nop_manifest_name(m), res.lib_path);
    nop_manifest_free(m);
    return rc;
}

/* With -v: where user code will run, and whether its file reads are confined, which
 * depends on the kernel (neuronop-run(1), TRUST). */
static void note_confinement(void)
{
    if (!sandbox_on()) {
        report_note("user code runs in neuronop's own process (NEURONOP_SANDBOX=off)");
        return;
    }
    int abi = nop_landlock_abi();
    if (abi > 0)
        report_note("user code runs in workers under a seccomp allow-list, reading only its "
                    "library folder and the system's libraries (Landlock ABI %d)", abi);
    else
        report_note("user code runs in workers under a seccomp allow-list, but may read every "
                    "file the user can: %s", abi < 0 ? "NEURONOP_LANDLOCK=off"
                    : "this kernel has no Landlock (Linux 5.13 or later, enabled in its lsm= list)");
}

int open_target(const char *arg, const char *build_dir, bool verbose, bool memcheck,
                nop_library **out)
{
    if (verbose)
        note_confinement();
    /* with the worker process, neuronop itself never loads the library: the worker does */
    return resolve(arg, build_dir, verbose, memcheck,
                   sandbox_on() ? nop_library_describe : nop_library_open, out);
}

int describe_target(const char *arg, nop_library **out)
{
    return resolve(arg, NULL, false, false, nop_library_describe, out);
}
