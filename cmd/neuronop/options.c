/*
 * options.c - table-driven option parsing and generated help (see options.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libneuronop.h"
#include "options.h"
#include "report.h"

/* "-3", "-.5", "-1e-3", "-inf", "-nan": a value in an argument position, not an option (no
 * option's name is a number, and none of the short ones is i or n) */
static bool looks_negative_number(const char *s)
{
    if (s[0] != '-' || !s[1])
        return false;
    char *end;
    (void)strtod(s, &end);
    return *end == '\0';
}

static const struct option_spec *find_long(const struct command_spec *spec, const char *name,
                                           size_t len)
{
    for (const struct option_spec *o = spec->options; o && o->long_name; o++)
        if (strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
            return o;
    return NULL;
}

static const struct option_spec *find_short(const struct command_spec *spec, char c)
{
    for (const struct option_spec *o = spec->options; o && o->long_name; o++)
        if (o->short_name == c)
            return o;
    return NULL;
}

static int usage_error(const struct command_spec *spec, const char *fmt, const char *what,
                       const char *hint)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what);
    if (hint)
        report_plain_error("%s %s: %s; did you mean '--%s'?", "neuronop", spec->name, msg,
                           hint);
    else
        report_plain_error("%s %s: %s", "neuronop", spec->name, msg);
    fprintf(stderr, "see 'neuronop %s --help'\n", spec->name);
    return -1;
}

int command_usage_error(const struct command_spec *spec, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    usage_error(spec, "%s", msg, NULL);
    return STATUS_USAGE;
}

/* Whether arg is one of o's words (an OPT_STRING with COMPLETE_VALUES); else prints the usage
 * error that lists them ("--schedule takes parallel, sequential, reversed or shuffle, not
 * 'random'"), with the closest, and returns false. */
static bool one_of_values(const struct command_spec *spec, const struct option_spec *o,
                          const char *arg)
{
    size_t n = 0;
    while (o->values[n])
        n++;
    for (size_t i = 0; i < n; i++)
        if (strcmp(arg, o->values[i]) == 0)
            return true;
    char words[256] = "";
    size_t at = 0;
    for (size_t i = 0; i < n && at < sizeof words; i++)
        at += (size_t)snprintf(words + at, sizeof words - at, "%s%s",
                               i == 0 ? "" : i + 1 == n ? " or " : ", ", o->values[i]);
    /* words people type for a value: the system's C compilers are 'cc' (a new user's find:
     * gcc was closest to tcc) */
    static const char *const meant[][2] = { { "gcc", "cc" }, { "clang", "cc" } };
    const char *hint = NULL;
    for (size_t k = 0; k < sizeof meant / sizeof meant[0] && !hint; k++)
        for (size_t i = 0; i < n && !hint; i++)
            if (strcmp(arg, meant[k][0]) == 0 && strcmp(o->values[i], meant[k][1]) == 0)
                hint = o->values[i];
    if (!hint)
        hint = nop_closest(arg, o->values, n);
    command_usage_error(spec, "--%s takes %s, not '%s'%s%s%s", o->long_name, words, arg,
                        hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
    return false;
}

static int store(const struct command_spec *spec, const struct option_spec *o, const char *arg)
{
    char *end;
    switch (o->type) {
    case OPT_FLAG:
        *(bool *)o->dest = true;
        return 0;
    case OPT_STRING:
        if (o->complete == COMPLETE_VALUES && o->values && !one_of_values(spec, o, arg))
            return -1;
        *(const char **)o->dest = arg;
        return 0;
    case OPT_INT:
    case OPT_DOUBLE: {
        errno = 0;
        bool whole = o->type == OPT_INT;
        long l = whole ? strtol(arg, &end, 10) : 0;
        double v = whole ? (double)l : strtod(arg, &end);
        bool ranged = o->min < o->max;
        /* as written in decimal: strtod and strtol also take " 5" and strtod 0x10 */
        bool decimal = strchr("+-.0123456789", arg[0]) && arg[0] && !strpbrk(arg, "xXpP");
        if (errno || end == arg || *end || !decimal || !isfinite(v) ||
            (ranged && (v < o->min || v > o->max))) {
            char what[300];
            if (ranged)
                snprintf(what, sizeof what, whole ? "--%s takes a %s from %.0f to %.0f, not '%s'"
                                                  : "--%s takes a %s from %g to %g, not '%s'",
                         o->long_name, whole ? "whole number" : "number", o->min, o->max, arg);
            else
                snprintf(what, sizeof what, "--%s takes a %s, not '%s'", o->long_name,
                         whole ? "whole number" : "finite number", arg);
            return usage_error(spec, "%s", what, NULL);
        }
        if (whole)
            *(long *)o->dest = l;
        else
            *(double *)o->dest = v;
        return 0;
    }
    case OPT_LIST: {
        struct option_list *l = o->dest;
        const char **items = realloc(l->items, (size_t)(l->n + 1) * sizeof *items);
        if (!items)
            return usage_error(spec, "%s", "out of memory", NULL);
        items[l->n++] = arg;
        l->items = items;
        return 0;
    }
    }
    return 0;
}

static const char *suggest(const struct command_spec *spec, const char *word)
{
    const char *names[64];
    size_t n = 0;
    for (const struct option_spec *o = spec->options; o && o->long_name && n < 63; o++)
        names[n++] = o->long_name;
    names[n++] = "help";
    return nop_closest(word, names, n);
}

int parse_options(const struct command_spec *spec, int argc, char **argv, char ***args,
                  int *nargs)
{
    char **pos = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *pos);
    if (!pos)
        return usage_error(spec, "%s", "out of memory", NULL);
    int n = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == '\0' || looks_negative_number(a)) {
            pos[n++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_command_help(spec);
            free(pos);
            return 1;
        }
        const struct option_spec *o;
        const char *value = NULL;
        if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(spec, name, len);
            if (!o) {
                char word[128];
                snprintf(word, sizeof word, "%.*s", (int)(len < 100 ? len : 100), name);
                free(pos);
                return usage_error(spec, "unknown option '--%s'", word, suggest(spec, word));
            }
            if (eq && o->type == OPT_FLAG) {
                free(pos);
                return usage_error(spec, "option '--%s' takes no value", o->long_name, NULL);
            }
            value = eq ? eq + 1 : NULL;
        } else {
            o = find_short(spec, a[1]);
            if (!o) {
                free(pos);
                return usage_error(spec, "unknown option '%s'", a, NULL);
            }
            if (a[2] && o->type == OPT_FLAG) {
                free(pos);
                return usage_error(spec, "unknown option '%s'", a, NULL);
            }
            value = a[2] ? a + 2 : NULL;
        }
        if (o->type != OPT_FLAG && !value) {
            if (i + 1 >= argc) {
                free(pos);
                return usage_error(spec, "option '--%s' needs a value", o->long_name, NULL);
            }
            value = argv[++i];
        }
        if (store(spec, o, value) != 0) {
            free(pos);
            return -1;
        }
    }
    if (n < spec->min_args || (spec->max_args >= 0 && n > spec->max_args)) {
        if (n + 1 == spec->min_args)
            report_plain_error("neuronop %s: missing an argument", spec->name);
        else if (n < spec->min_args)
            report_plain_error("neuronop %s: missing %d arguments", spec->name,
                               spec->min_args - n);
        else   /* the first one too many, which is often what was meant otherwise */
            report_plain_error("neuronop %s: too many arguments: '%s'%s%s%s", spec->name,
                               pos[spec->max_args], spec->surplus_hint ? " (" : "",
                               spec->surplus_hint ? spec->surplus_hint : "",
                               spec->surplus_hint ? ")" : "");
        fprintf(stderr, "usage: neuronop %s %s\n", spec->name, spec->usage);
        fprintf(stderr, "see 'neuronop %s --help'\n", spec->name);   /* as every usage error */
        free(pos);
        return -1;
    }
    *args = pos;
    *nargs = n;
    return 0;
}

void free_option_lists(const struct command_spec *spec)
{
    for (const struct option_spec *o = spec->options; o && o->long_name; o++) {
        if (o->type == OPT_LIST) {
            struct option_list *l = o->dest;
            free(l->items);
            l->items = NULL;
            l->n = 0;
        }
    }
}

void print_command_help(const struct command_spec *spec)
{
    printf("usage: neuronop %s %s\n\n%s\n\noptions:\n", spec->name, spec->usage, spec->summary);
    for (const struct option_spec *o = spec->options; o && o->long_name; o++) {
        char left[64];
        int n = snprintf(left, sizeof left, "%c%c%s--%s%s%s", o->short_name ? '-' : ' ',
                         o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ",
                         o->long_name, o->arg_name ? " " : "", o->arg_name ? o->arg_name : "");
        printf("  %s%*s %s\n", left, n < 26 ? 26 - n : 0, "", o->help);
    }
    printf("  -h, --help%*s show this help\n\nSee neuronop-%s(1).\n", 16, "", spec->name);
}
