/*
 * argnames.c - the names of each op's parameters, read from the source that defines its
 * kernel (or, failing that, its shape function), so a built library can say them: the
 * Python package declares `relu_backward(Tensor grad, Tensor x)` and torch then takes
 * keyword calls.  They are a convenience, not a contract: an op whose definition is not
 * found simply has none recorded, and a parameter left unnamed in both definitions (an
 * unused one: `double`) has an empty name, its neighbours keeping theirs.
 *
 * The result is one line per op, in manifest order: its names separated by commas (an
 * unnamed one empty), or an empty line.  gen.c puts it in the glue as `neuronop_argnames`; the library readers
 * (device/describe.c, device/library.c) pick it up when it is there.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The name of one parameter "const torch::Tensor &t_in" -> "t_in" (into out), or false
 * when it has none ("int64_t", "const torch::Tensor&", "void"). */
static bool param_name(const char *p, const char *end, char *out, size_t size)
{
    const char *eq = memchr(p, '=', (size_t)(end - p));   /* a default value */
    if (eq)
        end = eq;
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    while (end > p && end[-1] == ']') {   /* an array parameter: x[4] */
        const char *open = end;
        while (open > p && *open != '[')
            open--;
        end = open;
        while (end > p && isspace((unsigned char)end[-1]))
            end--;
    }
    const char *start = end;
    while (start > p && ident_char(start[-1]))
        start--;
    if (start == end || isdigit((unsigned char)*start))
        return false;
    /* something must come before it, and not '::' (then it was a type: "torch::Tensor") */
    const char *before = start;
    while (before > p && isspace((unsigned char)before[-1]))
        before--;
    if (before == p || before[-1] == ':' || (size_t)(end - start) >= size)
        return false;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return true;
}

/* The names of the parameters of the definition of fn in text into names[0..nargs) ("" for
 * one it leaves unnamed), if it has a definition of nargs parameters; false otherwise. */
static bool names_in(const char *text, const char *fn, int nargs, char names[][64])
{
    size_t n = strlen(fn);
    for (const char *s = strstr(text, fn); s; s = strstr(s + 1, fn)) {
        if ((s > text && ident_char(s[-1])) || ident_char(s[n]))
            continue;
        const char *p = s + n;
        while (isspace((unsigned char)*p))
            p++;
        if (*p != '(')
            continue;
        const char *open = ++p;
        int depth = 0;
        for (; *p && (depth > 0 || *p != ')'); p++)
            depth += (*p == '(' || *p == '<' || *p == '[') - (*p == ')' || *p == '>' ||
                                                              *p == ']');
        if (!*p)
            return false;
        const char *close = p++;
        while (isspace((unsigned char)*p))
            p++;
        if (*p != '{')   /* a declaration or a call, not the definition */
            continue;
        int count = 0;
        const char *from = open;
        depth = 0;
        for (const char *q = open; q <= close; q++) {
            if (q < close && *q != ',') {
                depth += (*q == '(' || *q == '<' || *q == '[') - (*q == ')' || *q == '>' ||
                                                                  *q == ']');
                continue;
            }
            if (q < close && depth > 0)
                continue;
            bool blank = true;
            for (const char *r = from; r < q; r++)
                blank &= isspace((unsigned char)*r) != 0;
            if (!(blank && q == close && count == 0)) {
                if (count == NOP_MAX_ARGS)
                    return false;
                if (!param_name(from, q, names[count], 64))
                    names[count][0] = '\0';   /* unnamed ("int64_t", "const T &") */
                count++;
            }
            from = q + 1;
        }
        if (count == 1 && strcmp(names[0], "void") == 0)
            count = 0;
        return count == nargs;
    }
    return false;
}

/* Whether names[0..nargs) has a name, and no name twice. */
static bool usable(char names[][64], int nargs)
{
    bool any = false;
    for (int k = 0; k < nargs; k++) {
        any |= names[k][0] != '\0';
        for (int j = 0; j < k; j++)
            if (names[k][0] && strcmp(names[j], names[k]) == 0)
                return false;
    }
    return any;
}

char *nopi_argnames_scan(const nop_manifest *m, const nopi_gen_source *sources, int nsources)
{
    char *text[64] = { 0 };
    int ntext = nsources < 64 ? nsources : 64;
    for (int i = 0; i < ntext; i++) {
        size_t len;
        if (sources[i].role != NOPI_ROLE_REFERENCE &&
            nopi_read_file(sources[i].file, &text[i], &len) != 0)
            text[i] = NULL;
    }
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, "");
    for (int o = 0; o < m->nops; o++) {
        const nopi_op *op = &m->ops[o];
        /* each parameter as the kernel's definition (in a compute source) names it, else as
         * the shape function's does (a found definition fills what it names) */
        char names[NOP_MAX_ARGS][64] = { { 0 } }, other[NOP_MAX_ARGS][64];
        for (int pass = 0; pass < 2; pass++) {
            nopi_role role = pass == 0 ? NOPI_ROLE_COMPUTE : NOPI_ROLE_SHAPE;
            const char *fn = pass == 0 ? op->kernel : op->shape;
            bool found = false;
            for (int i = 0; i < ntext && !found; i++)
                found = text[i] && sources[i].role == role &&
                        names_in(text[i], fn, op->nargs, other);
            for (int k = 0; found && k < op->nargs; k++)
                if (!names[k][0])
                    memcpy(names[k], other[k], sizeof other[k]);
        }
        for (int k = 0; usable(names, op->nargs) && k < op->nargs; k++) {
            nopi_sb_puts(&sb, k ? "," : "");
            nopi_sb_puts(&sb, names[k]);
        }
        nopi_sb_puts(&sb, "\n");
    }
    for (int i = 0; i < ntext; i++)
        free(text[i]);
    return nopi_sb_take(&sb);
}
