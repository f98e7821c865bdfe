/*
 * flags.c - which extra_cflags neuronop passes to libtcc, and STACK_SIZE values.
 *
 * libtcc exits the whole process on some bad options (a bare -D, an unknown -Wl, option) and
 * quietly accepts others that would break the device model (-m32).  So every user flag is
 * classified here against an allowlist before it reaches the compiler; anything else is a
 * manifest error that says what neuronop does accept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

const char *const nopi_argtype_ctypes[4] = { "const nt_tensor *", "nt_scalar", "double",
                                             "int64_t" };

bool nopi_is_identifier(const char *s)
{
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

bool nopi_is_glue_name(const char *s)
{
    return strncmp(s, "nt__", 4) == 0 || strcmp(s, "neuronop_library") == 0;
}

static const char accepted[] =
    "neuronop passes -DNAME[=VALUE], -UNAME, -IDIR, -O*, -g, -w, -W* and code generation -f* "
    "flags and -std= to the compiler";

/* -f options that are not code generation: each loads code into the compiler, reads or
 * writes files of its own, makes code call a runtime the device does not have, or changes
 * the messages neuronop reads.  A manifest is untrusted input (a pull request in CI): a
 * compiler plugin would run with the build's environment and network. */
static const struct {
    const char *prefix, *why;
} refused_f[] = {
    { "plugin", "it loads code into the compiler" },
    { "profile", "it reads or writes profile files and instruments code" },
    { "auto-profile", "it reads a profile file" },
    { "branch-probabilities", "it reads a profile file" },
    { "test-coverage", "it writes coverage files and instruments code" },
    { "create-profile", "it writes a profile file" },
    { "dump", "it writes files of its own" },
    { "opt-info", "it writes files of its own" },
    { "save-optimization-record", "it writes files of its own" },
    { "callgraph-info", "it writes files of its own" },
    { "stack-usage", "it writes files of its own" },
    { "sanitize", "its instrumentation calls a runtime the device does not have; use "
                  "'neuronop build --memcheck'" },
    { "instrument-functions", "its instrumentation calls functions the device does not have" },
    { "lto", "an op library is linked by neuronop" },
    { "module", "C++ modules read a module mapper, which may run a program or connect to a "
                "host, and write compiled modules where it says" },
    { "compare-debug", "it runs the compiler again and writes files of its own" },
    { "deps", "it writes files of its own" },
    { "diagnostics", "neuronop reads the compiler's messages in their plain form" },
    { "show-column", "neuronop reads the compiler's messages in their plain form" },
    { "message-length", "neuronop reads the compiler's messages in their plain form" },
};

/* The -f options that may name a path: they map the paths written into the object, and
 * read or write no file. */
static const char *const path_f[] = { "debug-prefix-map=", "macro-prefix-map=",
                                      "file-prefix-map=" };

/* Why the -f option text (without "-f") is refused, or NULL when it is accepted.  The -fno-
 * form of a refused family is refused too: -fno-show-column changes the messages as
 * -fdiagnostics-* does, and none is needed to build a kernel. */
static const char *refuse_f(const char *opt)
{
    const char *name = strncmp(opt, "no-", 3) == 0 ? opt + 3 : opt;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(refused_f); i++)
        if (strncmp(name, refused_f[i].prefix, strlen(refused_f[i].prefix)) == 0)
            return refused_f[i].why;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(path_f); i++)
        if (strncmp(opt, path_f[i], strlen(path_f[i])) == 0)
            return NULL;
    const char *eq = strchr(opt, '=');
    return eq && strchr(eq, '/') ? "it names a file, and neuronop gives the compiler no file "
                                   "but the sources" : NULL;
}

int nopi_flag_parse(const char *text, const char *dir, nopi_flag *f, char *why, size_t whysize)
{
    memset(f, 0, sizeof *f);
    /* a -D value reaches libtcc whole (tcc_define_symbol), so it may hold spaces; anywhere
     * else a space means two flags were written as one */
    const char *dvalue = strncmp(text, "-D", 2) == 0 ? strchr(text, '=') : NULL;
    for (const char *p = text; *p && !(dvalue && p > dvalue); p++) {
        if (isspace((unsigned char)*p)) {
            snprintf(why, whysize, "flag '%s' contains a space: give each flag as its own "
                     "list item, with its argument attached (-DNAME=VALUE, -Iinclude)", text);
            return -1;
        }
    }
    if (text[0] != '-' || text[1] == '\0') {
        snprintf(why, whysize, "'%s' is not a flag; %s", text, accepted);
        return -1;
    }
    const char *arg = text + 2;
    switch (text[1]) {
    case 'D': {
        const char *eq = strchr(arg, '=');
        size_t namelen = eq ? (size_t)(eq - arg) : strlen(arg);
        char *name = strndup(arg, namelen);
        if (!name || !nopi_is_identifier(name)) {
            snprintf(why, whysize, "'%s' defines no macro: write -DNAME or -DNAME=VALUE",
                     text);
            free(name);
            return -1;
        }
        f->kind = NOPI_FLAG_DEFINE;
        f->name = name;
        f->value = eq ? strdup(eq + 1) : NULL;
        break;
    }
    case 'U':
        if (!nopi_is_identifier(arg)) {
            snprintf(why, whysize, "'%s' names no macro: write -UNAME", text);
            return -1;
        }
        f->kind = NOPI_FLAG_UNDEF;
        f->name = strdup(arg);
        break;
    case 'I':
        if (!arg[0]) {
            snprintf(why, whysize, "'-I' needs its folder attached: write -Iinclude, or use "
                     "extra_include_paths");
            return -1;
        }
        f->kind = NOPI_FLAG_INCLUDE;
        f->value = nopi_path_join(dir, arg);
        break;
    case 'O':
    case 'g':
    case 'w':
    case 'f':
        if ((text[1] == 'g' || text[1] == 'w') && arg[0]) {
            snprintf(why, whysize, "unsupported flag '%s'; %s", text, accepted);
            return -1;
        }
        if (text[1] == 'f' && refuse_f(arg)) {
            snprintf(why, whysize, "unsupported flag '%s': %s", text, refuse_f(arg));
            return -1;
        }
        f->kind = NOPI_FLAG_OPTION;
        break;
    case 'W':
        if ((text[2] == 'l' || text[2] == 'p' || text[2] == 'a') &&
            (text[3] == ',' || text[3] == '\0')) {   /* -Wl, -Wp, -Wa, with or without "," */
            snprintf(why, whysize, "unsupported flag '%s': an op library is linked by "
                     "neuronop and takes no linker, assembler or preprocessor options", text);
            return -1;
        }
        f->kind = NOPI_FLAG_OPTION;
        break;
    case 's':
        if (strncmp(text, "-std=", 5) == 0 && text[5]) {
            f->kind = NOPI_FLAG_OPTION;
            break;
        }
        /* fall through */
    default:
        if (text[1] == 'l' || text[1] == 'L')
            snprintf(why, whysize, "unsupported flag '%s': kernels run on the device and "
                     "cannot link libraries; %s", text, accepted);
        else if (strcmp(text, "-b") == 0)
            snprintf(why, whysize, "unsupported flag '-b': use 'neuronop build --memcheck' "
                     "for bounds checking");
        else
            snprintf(why, whysize, "unsupported flag '%s'; %s", text, accepted);
        return -1;
    }
    f->text = strdup(text);
    if (!f->text || (f->kind != NOPI_FLAG_OPTION && !f->name && !f->value)) {
        nopi_flag_clear(f);
        snprintf(why, whysize, "out of memory");
        return -1;
    }
    return 0;
}

void nopi_flag_clear(nopi_flag *f)
{
    free(f->text);
    free(f->name);
    free(f->value);
    memset(f, 0, sizeof *f);
}

int nopi_stack_size_parse(const char *text, const char *name, int64_t *out, char *why,
                          size_t whysize)
{
    char *end;
    errno = 0;
    long long v = text && isdigit((unsigned char)text[0]) ? strtoll(text, &end, 10) : -1;
    if (v < 0 || errno || *end) {
        snprintf(why, whysize, "%s must be a whole number of bytes, not '%s'", name,
                 text ? text : "");
        return -1;
    }
    if (text[0] == '0' && text[1]) {   /* C reads 010000 as octal: the kernel would see 4096 */
        snprintf(why, whysize, "%s must be a whole number of bytes without a leading 0, not "
                 "'%s' (a leading 0 is octal in C and in YAML 1.1)", name, text);
        return -1;
    }
    if (v < 1 || v > NOP_STACK_MAX_BYTES) {
        snprintf(why, whysize, "%s %lld is outside 1..%d (the device's largest stack is 400 "
                 "KB)", name, v, NOP_STACK_MAX_BYTES);
        return -1;
    }
    *out = v;
    return 0;
}
