/*
 * cmd-new.c - `neuronop new NAME`: starts an op library from a template (templates.c), the
 * way `cargo new` starts a crate: a folder that builds, runs and passes `neuronop test` as it
 * is, for the user to edit.
 *
 * Nothing is ever overwritten: the files are written into a temporary folder beside the
 * target, which is then renamed into place only if nothing is there (RENAME_NOREPLACE), so
 * an existing folder or file is left alone and an interrupted run leaves no half library.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "report.h"
#include "templates.h"

#define MAX_NAME 64

static bool multicore, cxx;
static const char *dir;

static const struct option_spec options[] = {
    OPTION(0, "multicore", OPT_FLAG, &multicore, NULL,
           "a library whose kernel runs on all the device's cores"),
    OPTION(0, "cxx", OPT_FLAG, &cxx, NULL, "write torch-style C++ sources instead of C"),
    OPTION(0, "dir", OPT_STRING, &dir, "DIR", "the folder to create (default: NAME)"),
    OPTIONS_END,
};

const struct command_spec new_spec = {
    "new", "[options] NAME",
    "Start an op library called NAME: a folder with a manifest, a TCM kernel, a shape\n"
    "function, a reference function and tests, which builds, runs and passes\n"
    "'neuronop test' as it is, in C or (--cxx) the device's torch-style C++.  Never\n"
    "overwrites anything.",
    options, 1, 1,
    "start a new op library from a template",
    NULL,
};

/* text with every key replaced by value; malloc'd, NULL on no memory. */
static char *replace_all(const char *text, const char *key, const char *value)
{
    size_t n = 0, klen = strlen(key), nlen = strlen(value);
    for (const char *p = strstr(text, key); p; p = strstr(p + klen, key))
        n++;
    char *out = malloc(strlen(text) + n * nlen + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = text, *q; *p; p = q + klen) {
        q = strstr(p, key);
        size_t len = q ? (size_t)(q - p) : strlen(p);
        memcpy(o, p, len);
        o += len;
        if (!q)
            break;
        memcpy(o, value, nlen);
        o += nlen;
    }
    *o = '\0';
    return out;
}

/* path as one shell word: itself when it has only characters a shell takes as they are,
 * else in single quotes ('\'' for a quote); malloc'd, NULL on no memory. */
static char *shell_word(const char *path)
{
    if (path[0] && strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789_./-+=:,@%") == strlen(path))
        return strdup(path);
    char *quoted = replace_all(path, "'", "'\\''"), *out = NULL;
    if (quoted && asprintf(&out, "'%s'", quoted) < 0)
        out = NULL;
    free(quoted);
    return out;
}

/* text with every @NAME@ replaced by name; malloc'd, NULL on no memory. */
static char *expand(const char *text, const char *name)
{
    return replace_all(text, "@NAME@", name);
}

/* Whether name can name a library: it names the library's C functions (NAME_forward,
 * NAME_forward_shape) and its .so, so a C identifier of at most MAX_NAME characters that
 * starts with a letter (a leading underscore makes the functions' names reserved,
 * _X_forward or __forward, which a build refuses), not with nt_ (the device API's prefix,
 * nt__ the glue's), with no double underscore and no underscore at its end (NAME__forward:
 * reserved in C++), and not 'builtin', which the device reserves. */
static bool good_name(const char *name)
{
    size_t n = strlen(name);
    bool ok = isalpha((unsigned char)name[0]) && n <= MAX_NAME && name[n - 1] != '_' &&
              strncmp(name, "nt_", 3) != 0 && !strstr(name, "__") &&
              strcmp(name, "builtin") != 0;
    for (const char *p = name; ok && *p; p++)
        ok = isalnum((unsigned char)*p) || *p == '_';
    return ok;
}

/* A name good_name accepts, made from name, into fixed (MAX_NAME + 1 bytes): its letters and
 * digits from the first, any run of other characters as one '_', "my_" in front when what
 * is left would not do. */
static void suggest_name(const char *name, char *fixed)
{
    size_t k = 0;
    const char *p = name;
    while (*p && !isalnum((unsigned char)*p))
        p++;
    for (; *p && k < MAX_NAME - 3; p++)
        if (isalnum((unsigned char)*p))
            fixed[k++] = *p;
        else if (fixed[k - 1] != '_')
            fixed[k++] = '_';
    while (k > 0 && fixed[k - 1] == '_')
        k--;
    fixed[k] = '\0';
    if (!good_name(fixed)) {
        memmove(fixed + 3, fixed, k + 1);
        memcpy(fixed, "my_", 3);
    }
    if (!good_name(fixed))
        strcpy(fixed, "my_ops");
}

/* 0 when name can be a library's name (good_name); otherwise prints why and a name that
 * would do, as the command's usage error ("neuronop new: error:", neuronop(1)). */
static int check_name(const char *name)
{
    if (good_name(name))
        return 0;
    if (strcmp(name, "builtin") == 0) {
        report_plain_error("neuronop new: 'builtin' is reserved for the device's own ops; pick "
                           "another name");
        return STATUS_USAGE;
    }
    char fixed[MAX_NAME + 1];
    /* a path: the folder is --dir's, and its last part the name meant */
    const char *slash = strrchr(name, '/');
    suggest_name(slash && slash[1] ? slash + 1 : name, fixed);
    report_plain_error("neuronop new: '%s' cannot name a library: use at most %d letters, "
                       "digits and single underscores, starting with a letter and not with "
                       "'nt_', ending in a letter or digit", name, MAX_NAME);
    if (slash)
        fprintf(stderr, "to make the library in that folder: neuronop new --dir %s %s\n", name,
                fixed);
    else   /* (a new user's find: a folder of that name was here already) */
        fprintf(stderr, "it names the library's C functions and its .so; for example: "
                "neuronop new %s%s%s%s\n", fixed, access(fixed, F_OK) == 0 ? " ('" : "",
                access(fixed, F_OK) == 0 ? fixed : "",
                access(fixed, F_OK) == 0 ? "' is here already: add --dir FOLDER)" : "");
    return STATUS_USAGE;
}

/* Writes one expanded template file into folder tmp; 0 or an exit status after printing. */
static int write_file(const char *tmp, const struct template_file *f, const char *name,
                      const char *target)
{
    /* @DIR@: the folder as the command line named it, which the README's commands take (a
     * new user's find: with --dir they named NAME, which is no folder) */
    char *named = expand(f->text, name), *word = shell_word(target), *path = NULL;
    char *rel = expand(f->path, name);
    char *text = named && word ? replace_all(named, "@DIR@", word) : NULL;
    free(named);
    free(word);
    int rc = 0;
    if (!rel || !text || asprintf(&path, "%s/%s", tmp, rel) < 0) {
        path = NULL;
        rc = report_nomem();
        goto out;
    }
    FILE *out = fopen(path, "wx");
    bool ok = out && fputs(text, out) >= 0;
    ok = out && fclose(out) == 0 && ok;
    if (!ok) {
        report_plain_error("cannot write '%s': %s", path, strerror(errno));
        rc = STATUS_USAGE;
    }
out:
    free(rel);
    free(text);
    free(path);
    return rc;
}

/* Removes the temporary folder and what was written into it. */
static void remove_partial(const char *tmp, const struct template_flavour *fl, const char *name)
{
    const struct template_file *lists[] = { fl->common, fl->own };
    for (int l = 0; l < 2; l++) {
        for (const struct template_file *f = lists[l]; f->path; f++) {
            char *rel = expand(f->path, name), *path = NULL;
            if (rel && asprintf(&path, "%s/%s", tmp, rel) >= 0) {
                unlink(path);
                free(path);
            }
            free(rel);
        }
    }
    rmdir(tmp);
}

/* Makes the folders of path that are missing, outermost first, as mkdir -p does, and records
 * how many it made in *made (the last *made prefixes of path, which remove_parents removes
 * again).  0, or -1 with errno set and *made those made before the failure. */
static int make_parents(char *path, int *made)
{
    *made = 0;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0777);
        *p = c;
        if (rc == 0)
            (*made)++;
        else if (errno != EEXIST)
            return -1;
        if (c == '\0')
            return 0;
    }
}

/* Removes the folders make_parents made (empty again: nothing was left in them), innermost
 * first. */
static void remove_parents(char *path, int made)
{
    for (; made > 0; made--) {
        rmdir(path);
        char *slash = strrchr(path, '/');
        if (!slash || slash == path)
            return;
        *slash = '\0';
    }
}

/* Writes the flavour's files for name into a temporary folder beside target (making the
 * folders above it that are missing) and renames it to target, which must not exist.
 * Returns 0 or an exit status after printing; on a failure nothing it made is left. */
static int create(const char *target, const struct template_flavour *fl, const char *name)
{
    char *copy = strdup(target), *tmp = NULL;
    if (!copy)
        return report_nomem();
    for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
        copy[n - 1] = '\0';   /* "ops/" names the folder ops, whose parent is "." */
    char *slash = strrchr(copy, '/');
    const char *parent = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
    int made = 0;
    if ((slash && slash != copy && make_parents(copy, &made) != 0) ||
        asprintf(&tmp, "%s/.neuronop-new-XXXXXX", parent) < 0 || !mkdtemp(tmp)) {
        report_plain_error("cannot create a folder in '%s': %s", parent, strerror(errno));
        remove_parents(copy, made);
        free(copy);
        free(tmp);
        return STATUS_USAGE;
    }
    int rc = 0;
    const struct template_file *lists[] = { fl->common, fl->own };
    for (int l = 0; l < 2 && rc == 0; l++)
        for (const struct template_file *f = lists[l]; f->path && rc == 0; f++)
            rc = write_file(tmp, f, name, target);
    mode_t mask = umask(0);   /* mkdtemp made it 0700: give it a folder's usual mode */
    umask(mask);
    if (rc == 0 && chmod(tmp, 0777 & ~mask) != 0) {
        report_plain_error("cannot set the mode of '%s': %s", tmp, strerror(errno));
        rc = STATUS_USAGE;
    }
    if (rc == 0 && renameat2(AT_FDCWD, tmp, AT_FDCWD, target, RENAME_NOREPLACE) != 0) {
        if (errno == EEXIST)
            report_plain_error("'%s' already exists; neuronop new never overwrites: pick "
                               "another name, or a folder with --dir", target);
        else
            report_plain_error("cannot create '%s': %s", target, strerror(errno));
        rc = STATUS_USAGE;
    }
    if (rc != 0) {
        remove_partial(tmp, fl, name);
        remove_parents(copy, made);
    }
    free(copy);
    free(tmp);
    return rc;
}

int cmd_new(int argc, char **argv)
{
    char **args;
    int nargs;
    int rc = parse_options(&new_spec, argc, argv, &args, &nargs);
    if (rc != 0)
        return rc > 0 ? 0 : STATUS_USAGE;
    const char *name = args[0];
    const char *target = dir ? dir : name;
    struct stat st;
    if ((rc = check_name(name)) != 0) {
        /* reported */
    } else if (lstat(target, &st) == 0) {
        report_plain_error("'%s' already exists; neuronop new never overwrites: pick another "
                           "name, or a folder with --dir", target);
        rc = STATUS_USAGE;
    } else {
        const struct template_flavour *fl = &template_flavours[(cxx ? 2 : 0) + multicore];
        rc = create(target, fl, name);
        char self[PATH_MAX];
        const char *cmd = self_command(self, sizeof self);   /* bin/neuronop in the tree */
        char *word = rc == 0 ? shell_word(target) : NULL;   /* commands to paste */
        if (rc == 0 && !word)
            rc = report_nomem();
        if (rc == 0)
            printf("created '%s': op library '%s' with op '%s_forward' (%s)\n"
                   "next:\n  %s build %s\n  %s run %s %s_forward randn:4x1024\n"
                   "  %s test %s\n", target, name, name,
                   cxx ? (multicore ? "C++, multicore" : "C++, one core")
                       : (multicore ? "multicore" : "one core"), cmd, word, cmd, word,
                   name, cmd, word);
        free(word);
    }
    free_option_lists(&new_spec);
    free(args);
    return rc;
}
