/*
 * cmd-complete.c - `neuronop __complete CWORD WORD...`: what shell completion offers for word
 * CWORD of the command line WORD... (WORD 0 being neuronop itself), one candidate a line.
 *
 * share/bash-completion/completions/neuronop calls it on every Tab, so completion comes from
 * the same tables as --help and the parser: the command table, each command's option table
 * with the values its enumerated options take (schedules, checks, trace clocks), the device
 * profiles on disk, and the ops of a library already on the line.  A line "__files__" asks
 * the shell to offer file names too.  It never builds, loads or runs anything: ops come from
 * a built library's self-description, read from the file without loading it, or, for a
 * folder, from its manifest.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "options.h"

#define FILES "__files__"

/* The option of spec that word names ("--name", "--name=...", "-x"), or NULL. */
static const struct option_spec *find_option(const struct command_spec *spec, const char *word)
{
    for (const struct option_spec *o = spec->options; o->long_name; o++) {
        size_t n = strlen(o->long_name);
        if (word[0] == '-' && word[1] == '-' && strncmp(word + 2, o->long_name, n) == 0 &&
            (word[2 + n] == '\0' || word[2 + n] == '='))
            return o;
        if (o->short_name && word[0] == '-' && word[1] == o->short_name && word[2] == '\0')
            return o;
    }
    return NULL;
}

/* The device profiles: share/neuronop/devices/NAME.yaml, as NAME after prefix. */
static void print_devices(const char *prefix)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/devices", share_dir());
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0)
            printf("%s%.*s\n", prefix, (int)(n - 5), e->d_name);
    }
    closedir(d);
}

/* What the value of option o may be, each prefixed with prefix ("--check=" or "");
 * value: what is typed of it so far.  A list's value is words and commas: its last word is
 * completed, after the ones before it ("--check=race,un" offers "--check=race,unwritten"),
 * and the checks' lists take "all" too. */
static void print_values(const struct option_spec *o, const char *prefix, const char *value)
{
    if (o->complete == COMPLETE_VALUES) {
        const char *comma = o->type == OPT_LIST ? strrchr(value, ',') : NULL;
        int before = comma ? (int)(comma + 1 - value) : 0;
        for (const char *const *v = o->values; *v; v++)
            printf("%s%.*s%s\n", prefix, before, value, *v);
        if (o->values == nop_check_names)
            printf("%s%.*sall\n", prefix, before, value);
    } else if (o->complete == COMPLETE_DEVICES) {
        print_devices(prefix);
        if (strchr(value, '/'))   /* a profile given by its path, as --device takes too */
            printf(FILES "\n");
    } else if (o->complete == COMPLETE_DEFAULT && (o->type == OPT_STRING ||
                                                   o->type == OPT_LIST)) {
        printf(FILES "\n");
    }
}

/* The ops of the library at path: a built .so's self-description, read from the file
 * (a Tab must never run the library's code), or a folder's or manifest's declared ops;
 * nothing when there is no such library. */
static void print_ops(const char *path)
{
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, ".so") == 0) {
        nop_library *lib;
        if (nop_library_describe(&lib, path, NULL) != 0)
            return;
        for (int i = 0; i < nop_library_op_count(lib); i++) {
            nop_opinfo op;
            nop_library_op(lib, i, &op);
            printf("%s\n", op.name);
        }
        nop_library_close(lib);
        return;
    }
    nop_manifest *m;
    if (nop_manifest_load(&m, path, NULL) != 0)
        return;
    for (int i = 0; i < nop_manifest_op_count(m); i++) {
        nop_opinfo op;
        nop_manifest_op(m, i, &op);
        printf("%s\n", op.name);
    }
    /* a C++ library's ops are in its registration, not its manifest: its built library
     * (a docs audit's find: a folder of one offered none) */
    if (nop_manifest_op_count(m) == 0) {
        char so[4200];
        snprintf(so, sizeof so, "%s/lib%s.so", nop_manifest_build_dir(m), nop_manifest_name(m));
        print_ops(so);
    }
    nop_manifest_free(m);
}

/* Offers what may stand at word `cword` of a command's words (words[0] is the command). */
static void complete_command(const struct command_spec *spec, char **words, int cword)
{
    const char *cur = words[cword];
    const char *positional[8];
    int npos = 0;
    for (int i = 1; i < cword; i++) {
        const struct option_spec *o = find_option(spec, words[i]);
        if (o && o->type != OPT_FLAG && !strchr(words[i], '=')) {
            if (i + 1 == cword) {   /* the word is this option's value */
                print_values(o, "", cur);
                return;
            }
            i++;
        } else if (!o && words[i][0] != '-' && npos < 8) {
            positional[npos++] = words[i];
        }
    }
    /* after python's SCRIPT every word is the script's: offer files, not our options */
    if (strcmp(spec->name, "python") == 0 && npos >= 1) {
        printf(FILES "\n");
        return;
    }
    if (cur[0] == '-') {
        const struct option_spec *o = find_option(spec, cur);
        const char *eq = strchr(cur, '=');
        if (o && eq) {   /* --name=VALUE */
            char prefix[128];
            snprintf(prefix, sizeof prefix, "%.*s", (int)(eq - cur + 1), cur);
            print_values(o, prefix, eq + 1);
            return;
        }
        for (o = spec->options; o->long_name; o++)
            printf("--%s\n", o->long_name);
        printf("--help\n");
        if (cur[1] != '-') {   /* '-': the short names too (an auditor's find: never offered) */
            for (o = spec->options; o->long_name; o++)
                if (o->short_name)
                    printf("-%c\n", o->short_name);
            printf("-h\n");
        }
        return;
    }
    /* run and bench take LIB|DIR OP ARG...: the second positional word is an op */
    bool takes_op = strcmp(spec->name, "run") == 0 || strcmp(spec->name, "bench") == 0;
    if (takes_op && npos == 1)
        print_ops(positional[0]);
    else if (strcmp(spec->name, "new") != 0)   /* new's NAME is a new word */
        printf(FILES "\n");
}

int cmd_complete(int argc, char **argv)
{
    if (argc < 3)
        return 0;
    int cword = atoi(argv[1]);
    char **words = argv + 2;
    int nwords = argc - 2;
    if (cword < 1 || cword >= nwords)
        return 0;
    if (cword == 1 || (cword == 2 && strcmp(words[1], "help") == 0)) {   /* help COMMAND */
        for (size_t i = 0; commands[i].fn; i++)
            printf("%s\n", commands[i].spec->name);
        if (cword == 1)
            printf("help\n");
        if (cword == 1 && words[1][0] == '-')
            printf("--help\n--version\n");
        return 0;
    }
    for (size_t i = 0; commands[i].fn; i++)
        if (strcmp(commands[i].spec->name, words[1]) == 0)
            complete_command(commands[i].spec, words + 1, cword - 1);
    return 0;
}
