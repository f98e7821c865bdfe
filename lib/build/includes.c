/*
 * includes.c - the files of the user's own folders that a build's sources include, found by
 * reading their #include lines: what the build key hashes besides the sources (a header in a
 * subfolder, or a table.inc, changed without a rebuild: the library stayed what the old text
 * made), and what a libtcc build looks at for the option pragmas libtcc would obey.
 *
 * No preprocessor runs: every #include line counts, in any #if branch or comment (a file
 * more is harmless), and a name is looked up in the including file's folder (quoted names)
 * and in each of the user's include folders; every file found is read for its own includes
 * in turn.  A file of the toolchain's (<stdio.h>, <torch/torch.h>) is in none of them and
 * is not followed.  An #include whose name is a macro's is marked: only the compiler knows
 * what it names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builder.h"

enum {
    MAX_INCLUDED = 4096,     /* past this many files, the scan gives up (computed) */
    LINE_BYTES = 4096,       /* a line is read this much at a time: a file of any size is
                              * scanned whole in a few KB (a reviewer's 1 GB table) */
};

typedef struct scan {
    const char *const *dirs;
    size_t ndirs;
    char **paths;   /* resolved; the first nsources are the sources themselves */
    char **spelled; /* the folder of each as it was found: a symlink's, not its target's */
    size_t n, cap;
    bool computed;
} scan;

/* Adds the resolved path of file (a regular file) unless it is there; 1 when added, 0 when
 * not (no such file, or known), -1 on no memory. */
static int add(scan *s, const char *file)
{
    struct stat st;
    if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    char *real = realpath(file, NULL);
    if (!real)
        return errno == ENOMEM ? -1 : 0;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->paths[i], real) == 0) {
            free(real);
            return 0;
        }
    if (s->n == MAX_INCLUDED) {
        free(real);
        s->computed = true;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **p = realloc(s->paths, cap * sizeof *p);
        char **d = p ? realloc(s->spelled, cap * sizeof *d) : NULL;
        if (p)
            s->paths = p;
        if (!p || !d) {
            free(real);
            return -1;
        }
        s->spelled = d;
        s->cap = cap;
    }
    char *dir = nopi_dirname(file);
    if (!dir) {
        free(real);
        return -1;
    }
    s->paths[s->n] = real;
    s->spelled[s->n++] = dir;
    return 1;
}

/* Adds each file name may be: in dir (a quoted name's own folder; NULL for <name>) and in
 * the include folders.  0, or -1 on no memory. */
static int look_up(scan *s, const char *name, const char *dir)
{
    if (name[0] == '/')
        return add(s, name) < 0 ? -1 : 0;
    for (size_t i = 0; i <= s->ndirs; i++) {
        const char *d = i == 0 ? dir : s->dirs[i - 1];
        if (!d)
            continue;
        char *path = nopi_path_join(d, name);
        int rc = path ? add(s, path) : -1;
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The name of the #include (or #include_next, #import) that the line at p begins, copied
 * into name with *quoted set; 0 when there is none, -1 when a macro names it. */
static int include_on(const char *p, char *name, size_t size, bool *quoted)
{
    p += strspn(p, " \t");
    if (*p != '#')
        return 0;
    p += 1 + strspn(p + 1, " \t");
    size_t word = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
    if (!((word == 7 && strncmp(p, "include", 7) == 0) ||
          (word == 12 && strncmp(p, "include_next", 12) == 0) ||
          (word == 6 && strncmp(p, "import", 6) == 0)))
        return 0;
    p += word + strspn(p + word, " \t");
    if (*p != '"' && *p != '<')
        return *p == '\n' || *p == '\0' ? 0 : -1;
    *quoted = *p == '"';
    const char *end = strchr(p + 1, *quoted ? '"' : '>');
    const char *eol = strchr(p, '\n');
    if (!end || (eol && end > eol) || end == p + 1 || (size_t)(end - p) > size)
        return 0;
    memcpy(name, p + 1, (size_t)(end - p - 1));
    name[end - p - 1] = '\0';
    return 1;
}

/* Reads the file s->paths[i] for its includes; 0, or -1 on no memory.  A quoted name is
 * looked for beside the file as it was named (the compilers' way: beside a symlink, not its
 * target; a reviewer's find), and beside its target too (more is harmless). */
static int follow(scan *s, size_t i)
{
    FILE *f = fopen(s->paths[i], "rb");   /* (a regular file: add's) */
    if (!f)
        return errno == ENOMEM ? -1 : 0;   /* unreadable: the compiler will say so */
    char *dir = nopi_dirname(s->paths[i]);
    int rc = dir ? 0 : -1;
    bool other = dir && strcmp(dir, s->spelled[i]) != 0, start = true, first = true;
    char line[LINE_BYTES];
    while (rc == 0 && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        bool whole = n > 0 && line[n - 1] == '\n';
        const char *p = line;
        if (first && n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
            p += 3;   /* a UTF-8 byte order mark, which the compilers skip */
        char name[1024];
        bool quoted = false;
        int kind = start ? include_on(p, name, sizeof name, &quoted) : 0;   /* a line's own */
        if (kind < 0)
            s->computed = true;
        else if (kind > 0 && quoted)
            rc = look_up(s, name, s->spelled[i]) ||
                 (other ? look_up(s, name, dir) : 0) ? -1 : 0;
        else if (kind > 0)
            rc = look_up(s, name, NULL);
        start = whole;
        first = false;
    }
    fclose(f);
    free(dir);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int nopi_user_includes(const char *const *sources, size_t nsources, const char *const *dirs,
                       size_t ndirs, char ***paths, size_t *n, bool *computed)
{
    scan s = { dirs, ndirs, NULL, NULL, 0, 0, false };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nsources; i++)
        rc = add(&s, sources[i]) < 0 ? -1 : 0;
    size_t first = s.n;   /* the sources found; their own paths are not includes */
    for (size_t i = 0; rc == 0 && i < s.n; i++)
        rc = follow(&s, i);
    for (size_t i = 0; i < s.n; i++)
        free(s.spelled[i]);
    free(s.spelled);
    if (rc != 0) {
        for (size_t i = 0; i < s.n; i++)
            free(s.paths[i]);
        free(s.paths);
        return -1;
    }
    for (size_t i = 0; i < first; i++)
        free(s.paths[i]);
    *n = s.n - first;
    if (*n)
        memmove(s.paths, s.paths + first, *n * sizeof *s.paths);
    if (*n > 1)
        qsort(s.paths, *n, sizeof *s.paths, cmp_str);
    *paths = s.paths;
    *computed = s.computed;
    return 0;
}

char **nopi_build_user_dirs(const builder *b, size_t *n, size_t *nown)
{
    const nop_manifest *m = b->m;
    size_t cap = (size_t)b->nsources + (size_t)m->nincludes + (size_t)m->nflags + 1;
    char **dirs = malloc(cap * sizeof *dirs);
    *n = *nown = 0;
    if (!dirs)
        return NULL;
    for (int i = 0; i < b->nsources; i++) {
        char *dir = nopi_dirname(b->sources[i].file);
        if (!dir) {
            for (size_t k = 0; k < *nown; k++)
                free(dirs[k]);
            free(dirs);
            return NULL;
        }
        dirs[(*nown)++] = dir;
    }
    *n = *nown;
    for (int i = 0; i < m->nincludes; i++)
        dirs[(*n)++] = m->includes[i].resolved;
    for (int i = 0; i < m->nflags; i++)
        if (m->flags[i].kind == NOPI_FLAG_INCLUDE)
            dirs[(*n)++] = m->flags[i].value;
    return dirs;
}

int nopi_build_included(const builder *b, const char *const *sources, size_t nsources,
                        char ***paths, size_t *n, bool *computed)
{
    size_t ndirs, nown;
    char **dirs = nopi_build_user_dirs(b, &ndirs, &nown);
    if (!dirs)
        return -1;
    int rc = nopi_user_includes(sources, nsources, (const char *const *)dirs, ndirs, paths, n,
                                computed);
    nopi_build_user_dirs_free(dirs, nown);
    return rc;
}

void nopi_build_user_dirs_free(char **dirs, size_t nown)
{
    for (size_t i = 0; dirs && i < nown; i++)
        free(dirs[i]);
    free(dirs);
}
