/*
 * check.c - what a built library must satisfy before it is linked (see builder.h): compute
 * objects need only device symbols, every op's kernel and shape function and every test's
 * reference function is defined, as a function, in the right sources.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "base/mangle.h"

/* The function a source of this role must define for op i (or test i, for references). */
static const char *role_function(const builder *b, nopi_role role, int i)
{
    if (role == NOPI_ROLE_REFERENCE)
        return i < b->m->ntests ? b->m->tests[i].reference : NULL;
    return i >= b->m->nops ? NULL : role == NOPI_ROLE_COMPUTE ? b->m->ops[i].kernel
                                                             : b->m->ops[i].shape;
}

/* When tcc refuses a definition because the prelude declared it otherwise, say which op
 * declared what. */
void nopi_build_explain_signature(builder *b, nopi_role role)
{
    const char *msg = b->err ? b->err->diag.msg : "";
    /* libtcc's wording, then gcc's */
    if (!strstr(msg, "redefinition of '") && !strstr(msg, "conflicting types for '"))
        return;
    int n = role == NOPI_ROLE_REFERENCE ? b->m->ntests : b->m->nops;
    for (int i = 0; i < n; i++) {
        const char *fname = role_function(b, role, i);
        if (!fname)
            continue;
        const nopi_op *op = role == NOPI_ROLE_REFERENCE ? &b->m->ops[b->m->tests[i].op]
                                                         : &b->m->ops[i];
        char quoted[300];
        snprintf(quoted, sizeof quoted, "'%s'", fname);
        if (!strstr(msg, quoted))
            continue;
        char *sig = nopi_gen_signature(op, fname);
        nopi_strbuf args = NOPI_STRBUF_INIT;
        for (int k = 0; k < op->nargs; k++)
            nopi_sb_printf(&args, "%s%s", k ? ", " : "", nopi_argtype_names[op->args[k]]);
        const char *file = b->m->path;
        nopi_pos pos = op->pos;
        if (role != NOPI_ROLE_REFERENCE)   /* the manifest's op, or its m.def */
            nopi_op_where(b, i, NOPI_ROLE_REFERENCE, &file, &pos);
        nopi_detail(b->err, "op '%s' declares args [%s] in %s:%d, so its %s function must be:",
                    op->name, args.s ? args.s : "", file, pos.line,
                    role == NOPI_ROLE_COMPUTE ? "kernel"
                    : role == NOPI_ROLE_SHAPE ? "shape" : "reference");
        nopi_detail(b->err, "    %s", sig ? sig : fname);
        nopi_detail(b->err, "fix the definition or the op's args");
        nopi_sb_free(&args);
        free(sig);
        return;
    }
}

static bool ident_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Whether the whole word `word` (n bytes) starts at p, in text. */
static bool word_at(const char *text, const char *p, const char *word, size_t n)
{
    return !(p > text && ident_char(p[-1])) && strncmp(p, word, n) == 0 && !ident_char(p[n]);
}

/* Finds where a source uses `word`, for pointing at a forbidden call: the first whole-word use
 * in code followed by '(' (a call), else the first in code, else the first in a preprocessor
 * line (a macro's body), else the first anywhere (a lexing this simple may get lost).
 * Comments and string and character literals are not code, nor is a directive (`#include
 * <time.h>` names no call of time).  0, 0 when there is none. */
void nopi_locate_word(const char *path, const char *word, int *line, int *col)
{
    *line = *col = 0;
    char *text;
    if (nopi_read_file(path, &text, NULL) != 0)
        return;
    enum { CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, CHAR } state = CODE;
    enum { CALL, IN_CODE, IN_DIRECTIVE, ANYWHERE, KINDS };
    struct { int line, col; } found[KINDS] = { { 0, 0 } };
    size_t n = strlen(word);
    int l = 1;
    bool directive = false, line_start = true;
    const char *bol = text;
    for (const char *p = text; *p; p++) {
        if (*p == '\n') {
            if (state != BLOCK_COMMENT)   /* a literal does not span lines: a stray quote
                                           * (an apostrophe in #if 0 text) ends here */
                state = CODE;
            directive = directive && p > text && p[-1] == '\\';   /* continued */
            line_start = true;
            l++;
            bol = p + 1;
            continue;
        }
        if (!found[ANYWHERE].line && word_at(text, p, word, n))
            found[ANYWHERE].line = l, found[ANYWHERE].col = (int)(p - bol) + 1;
        switch (state) {
        case LINE_COMMENT:
            continue;
        case BLOCK_COMMENT:
            if (p[0] == '*' && p[1] == '/')
                state = CODE, p++;
            continue;
        case STRING:
        case CHAR:
            if (*p == '\\' && p[1] && p[1] != '\n')
                p++;
            else if (*p == (state == STRING ? '"' : '\''))
                state = CODE;
            continue;
        case CODE:
            break;
        }
        if (line_start && *p == '#')
            directive = true;
        if (*p != ' ' && *p != '\t')
            line_start = false;
        if (p[0] == '/' && p[1] == '/') {
            state = LINE_COMMENT;
            continue;
        }
        if (p[0] == '/' && p[1] == '*') {
            state = BLOCK_COMMENT, p++;
            continue;
        }
        /* no literal opens in a directive (#include <it's.h>), nor at a quote after a
         * digit or letter: C++14's digit separator (10'000) or a suffix's prefix (u8'x' is
         * rare enough to be read as code) */
        if ((*p == '"' || *p == '\'') && !directive &&
            !(*p == '\'' && p > text && ident_char(p[-1]))) {
            state = *p == '"' ? STRING : CHAR;
            continue;
        }
        if (!word_at(text, p, word, n))
            continue;
        const char *after = p + n;
        while (*after == ' ' || *after == '\t')
            after++;
        int kind = directive ? IN_DIRECTIVE : *after == '(' ? CALL : IN_CODE;
        if (!found[kind].line)
            found[kind].line = l, found[kind].col = (int)(p - bol) + 1;
        if (kind == CALL)
            break;
        p += n - 1;
    }
    for (int k = 0; k < KINDS && !*line; k++) {
        *line = found[k].line;
        *col = found[k].col;
    }
    free(text);
}

bool nopi_object_defines(const object *o, const char *name, bool *is_function)
{
    for (size_t i = 0; i < o->nsyms; i++) {
        if (o->syms[i].defined && strcmp(o->syms[i].name, name) == 0) {
            *is_function = o->syms[i].function;
            return true;
        }
    }
    return false;
}

/* What the C++ runtime offers a kernel, by mangled or runtime name: nothing (neuronop-build(1):
 * -fno-exceptions -fno-rtti, no operator new or delete, no static initialisers).  Each
 * refused name gets a message naming the language feature behind it. */
static const struct { const char *prefix; const char *what; const char *word; } cxx_runtime[] = {
    { "_Znw", "operator new", "new" }, { "_Zna", "operator new[]", "new" },
    { "_Zdl", "operator delete", "delete" }, { "_Zda", "operator delete[]", "delete" },
    { "__cxa_atexit", "a static object with a destructor", "static" },
    { "__cxa_guard", "a function-local static initialised at run time", "static" },
    { "__cxa_pure_virtual", "a pure virtual function", "virtual" },
    { "__cxa_", "the C++ exception runtime", "throw" },
    { "__gxx_personality", "the C++ exception runtime", "throw" },
    { "_ZTV", "RTTI (typeid, dynamic_cast)", "typeid" },
    { "_ZTI", "RTTI (typeid, dynamic_cast)", "typeid" },
    { "__dso_handle", "a static object with a destructor", "static" },
    { "_ZSt", "the C++ standard library", "std" },
    { "_ZNSt", "the C++ standard library", "std" },
    { "_ZNKSt", "the C++ standard library", "std" },
};

/* What to do instead of calling name, which the device does not have. */
static const char *refused_why(const char *name)
{
    static const struct { const char *name, *why; } special[] = {
        { "assert", "assert is a macro of <assert.h>, which the device has: include it "
                    "(without it, C takes assert for a function)" },
        { "strtok", "strtok keeps its place in memory every core shares; split with strspn "
                    "and strcspn, which the device has" },
    };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(special); i++)
        if (strcmp(name, special[i].name) == 0)
            return special[i].why;
    return "compute sources run on GPSIMD cores and may use only the neuronop kernel API, "
           "printf, memory and string functions and math.h; move host work into a shape "
           "function";
}

static int cxx_runtime_error(builder *b, const object *o, const char *name)
{
    for (size_t i = 0; i < NOPI_ARRAY_LEN(cxx_runtime); i++) {
        if (strncmp(name, cxx_runtime[i].prefix, strlen(cxx_runtime[i].prefix)) != 0)
            continue;
        int line, col;
        nopi_locate_word(o->source, cxx_runtime[i].word, &line, &col);
        nopi_fail(b->err, NOP_ERR_COMPILE, o->source, line, col, "kernel code uses %s "
                  "('%s'), which the device's C++ runtime does not have", cxx_runtime[i].what,
                  name);
        nopi_detail(b->err, "kernels are C++14 without exceptions, RTTI, operator new/delete "
                    "or static initialisers; allocate with tcm_malloc or torch's tensor "
                    "factories (neuronop-build(1))");
        return -1;
    }
    return 0;
}

/* No object has code that runs when the library loads: the device runs none, and a
 * library is loaded in the references' worker too, where load-time code of the op under
 * test could change the answer it is judged against (and a reference's, the kernel). */
int nopi_check_load_time_code(builder *b, const object *objs, int nobjs)
{
    static const char *const whose[] = { "kernel code", "shape function code",
                                         "reference code" };
    /* the attribute, not the word in a comment, where there is one */
    static const char *const ctor_words[] = { "__attribute__((constructor", "constructor)",
                                              "constructor", "ifunc" };
    static const char *const dtor_words[] = { "__attribute__((destructor", "destructor)",
                                              "destructor" };
    for (int i = 0; i < nobjs; i++) {
        const object *o = &objs[i];
        if (!o->static_init)
            continue;
        /* C++'s static initialisers are the function g++ names _GLOBAL__sub_I_; any other
         * function an array calls is a constructor (or destructor) of the user's own */
        bool init = o->lang == NOPI_LANG_CXX && !o->at_unload &&
                    (!o->load_fn[0] || strncmp(o->load_fn, "_GLOBAL__sub_I_", 15) == 0);
        /* a static's variable or an ifunc's name is shown; a constructor's or destructor's
         * function is only looked for (the line shows it, and its message names none) */
        bool named = init || !o->load_fn[0];
        nopi_cxxfn var;   /* a static's symbol may be mangled: _ZL5start */
        nopi_cxx_read(named ? o->init_var : o->load_fn, &var);
        int line = 0, col = 0;
        if (named && var.name[0])
            nopi_locate_word(o->source, var.name, &line, &col);
        const char *const *words = o->at_unload ? dtor_words : ctor_words;
        size_t nwords = o->at_unload ? NOPI_ARRAY_LEN(dtor_words) : NOPI_ARRAY_LEN(ctor_words);
        for (size_t k = 0; !init && k < nwords && !line; k++)
            nopi_locate_word(o->source, words[k], &line, &col);
        if (!line && var.name[0])
            nopi_locate_word(o->source, var.name, &line, &col);
        /* <iostream>'s own std::ios_base::Init object has no name in the source: its include
         * is the line to show (a new user's find: the message had none) */
        if (!line && init)
            nopi_locate_word(o->source, "iostream", &line, &col);
        bool kernel = o->role == NOPI_ROLE_COMPUTE;
        const char *hint = kernel ? "the device runs no code at load"
                                  : "every worker loads the whole library, the kernels' and "
                                    "the reference's alike, and runs none of its code but the "
                                    "function it calls";
        if (o->at_unload) {
            nopi_fail(b->err, NOP_ERR_COMPILE, o->source, line, col, "%s has a destructor%s%s%s: "
                      "code that runs when the library unloads", whose[o->role],
                      var.name[0] ? " ('" : "", var.name, var.name[0] ? "')" : "");
            nopi_detail(b->err, "%s; remove the destructor, or do its work inside the %s",
                        kernel ? "the device runs no code at load or unload" : hint,
                        kernel ? "kernel" : "function");
            return -1;
        }
        nopi_fail(b->err, NOP_ERR_COMPILE, o->source, line, col, "%s has %s%s%s%s: %s",
                  whose[o->role],
                  init ? "a static initialiser" : "a constructor or an indirect function",
                  named && var.name[0] ? " ('" : "", named ? var.name : "",
                  named && var.name[0] ? "')" : "",
                  init ? "a global or static object whose value is computed when the library "
                         "loads"
                       : "code that runs when the library loads");
        nopi_detail(b->err, "%s; %s, or %s inside the %s%s", hint,
                    init ? "make it constexpr" : "remove the constructor",
                    init ? "compute it" : "do its work", kernel ? "kernel" : "function",
                    init && !var.name[0] ? " (including <iostream> makes one: use printf)"
                                         : "");
        return -1;
    }
    return 0;
}

/* Compute objects may need only device symbols or what other compute objects define, and
 * no object has code that runs at load. */
int nopi_check_device_symbols(builder *b, const object *objs, int nobjs)
{
    if (nopi_check_load_time_code(b, objs, nobjs) != 0)
        return -1;
    for (int i = 0; i < nobjs; i++) {
        if (objs[i].role != NOPI_ROLE_COMPUTE)
            continue;
        for (size_t k = 0; k < objs[i].nsyms; k++) {
            const nopi_elfsym *s = &objs[i].syms[k];
            if (s->defined || nopi_device_symbol_allowed(s->name) ||
                (objs[i].lang != NOPI_LANG_TCC && strcmp(s->name, "_GLOBAL_OFFSET_TABLE_") == 0))
                continue;
            bool found = false, fn;
            for (int j = 0; j < nobjs && !found; j++)
                found = objs[j].role == NOPI_ROLE_COMPUTE &&
                        nopi_object_defines(&objs[j], s->name, &fn);
            if (found)
                continue;
            if (objs[i].lang == NOPI_LANG_CXX && cxx_runtime_error(b, &objs[i], s->name) != 0)
                return -1;
            nopi_cxxfn f;
            nopi_cxx_read(s->name, &f);
            int line, col;
            nopi_locate_word(objs[i].source, f.name[0] ? f.name : s->name, &line, &col);
            nopi_fail(b->err, NOP_ERR_COMPILE, objs[i].source, line, col,
                      "kernel code uses '%s', which the device does not have",
                      f.cxx && f.nparams >= 0 ? f.display : s->name);
            char near[64];
            if (!f.cxx && nopi_device_symbol_closest(s->name, near, sizeof near))
                /* a misspelt call: C takes a function it was not told of for another's */
                nopi_detail(b->err, "did you mean '%s'?", near);
            else
                nopi_detail(b->err, "%s", refused_why(s->name));
            return -1;
        }
    }
    return 0;
}

/* The function names the objects of `role` define, for "did you mean". */
static const char *closest_function(const object *objs, int nobjs, nopi_role role,
                                    const char *fname, char *buf, size_t size)
{
    const char *names[256] = { NULL };
    size_t n = 0;
    char (*keep)[256] = calloc(256, sizeof *keep);
    if (!keep)
        return NULL;
    for (int j = 0; j < nobjs; j++) {
        for (size_t k = 0; objs[j].role == role && k < objs[j].nsyms && n < 256; k++) {
            const nopi_elfsym *s = &objs[j].syms[k];
            nopi_cxxfn f;
            if (!s->defined || !s->function || !nopi_cxx_read(s->name, &f) ||
                strncmp(f.name, "nt__", 4) == 0)
                continue;
            nopi_strlcpy(keep[n], f.name, sizeof keep[n]);
            names[n] = keep[n];
            n++;
        }
    }
    const char *hint = nop_closest(fname, names, n);
    /* a name that is the other's stem: forward_cpu for forward_cpu_compute */
    for (size_t i = 0; !hint && i < n; i++) {
        size_t a = strlen(names[i]), f = strlen(fname);
        if (a >= 4 && f >= 4 && (strncmp(names[i], fname, a < f ? a : f) == 0))
            hint = names[i];
    }
    if (hint)
        nopi_strlcpy(buf, hint, size);
    free(keep);
    return hint ? buf : NULL;
}

/* Every declared kernel is defined as a function in a compute source, every shape function
 * in a shape source (C++ ones were found by resolve.c). */
int nopi_check_definitions(builder *b, const object *objs, int nobjs)
{
    for (int i = 0; i < b->m->nops; i++) {
        const nopi_op *op = &b->m->ops[i];
        for (int r = 0; r < 2; r++) {
            nopi_role role = r == 0 ? NOPI_ROLE_COMPUTE : NOPI_ROLE_SHAPE;
            if (b->fns[i][r].sym)
                continue;
            const char *fname = role == NOPI_ROLE_COMPUTE ? op->kernel : op->shape;
            const char *file;
            nopi_pos pos;
            nopi_op_where(b, i, role, &file, &pos);
            const char *where = role == NOPI_ROLE_COMPUTE ? "compute_srcs" : "shape_srcs";
            bool found = false, fn = false, elsewhere = false, cxx = false;
            for (int j = 0; j < nobjs && !found; j++) {
                if (objs[j].role == role) {
                    found = nopi_object_defines(&objs[j], fname, &fn);
                    cxx = cxx || objs[j].lang == NOPI_LANG_CXX;
                } else if (nopi_object_defines(&objs[j], fname, &fn)) {
                    elsewhere = true;
                }
            }
            if (found && fn)
                continue;
            if (found) {
                nopi_fail(b->err, NOP_ERR_COMPILE, file, pos.line, pos.col,
                          "'%s' of op '%s' is defined, but not as a function", fname, op->name);
                nopi_detail(b->err, "name the op's %s function here, or define '%s' in %s as "
                            "one", role == NOPI_ROLE_COMPUTE ? "kernel" : "shape", fname, where);
                return -1;
            }
            char hint[256];
            const char *near = closest_function(objs, nobjs, role, fname, hint, sizeof hint);
            nopi_fail(b->err, NOP_ERR_COMPILE, file, pos.line, pos.col,
                      "%s function '%s' of op '%s' is not defined in %s%s%s%s",
                      role == NOPI_ROLE_COMPUTE ? "kernel" : "shape", fname, op->name, where,
                      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
            if (elsewhere) {
                nopi_detail(b->err, "it is defined in %s; %s",
                            role == NOPI_ROLE_COMPUTE ? "shape_srcs" : "compute_srcs",
                            role == NOPI_ROLE_COMPUTE
                                ? "kernels run on the device: move it to a compute source"
                                : "shape functions run on the host: move it to a shape "
                                  "source");
            } else if (cxx) {
                char sig[600];
                int kinds[NOP_MAX_ARGS];
                for (int k = 0; k < op->nargs; k++)
                    kinds[k] = (int)op->args[k];
                nopi_cxx_signature(fname, op->nargs, kinds, b->fns[i][1].byref, sig,
                                   sizeof sig);
                nopi_detail(b->err, "define it, with this signature:\n    torch::Tensor %s",
                            sig);
            } else {
                char *sig = nopi_gen_signature(op, fname);
                nopi_detail(b->err, "define it, with this signature:\n    %s", sig ? sig : "");
                free(sig);
            }
            return -1;
        }
    }
    return 0;
}

/* Whether object o needs name from elsewhere (calls or reads it without defining it). */
static bool object_needs(const object *o, const char *name)
{
    for (size_t i = 0; i < o->nsyms; i++)
        if (!o->syms[i].defined && strcmp(o->syms[i].name, name) == 0)
            return true;
    return false;
}

/* The library is one shared object, linked so that its own definitions bind first: a name
 * that kernel or shape code defines is what every call to it in the library runs, the
 * references' included.  So op code defines no name of the C library, math.h or the device
 * API, and none that reference code calls, nor one it defines unless both copies are weak
 * (a template's or an inline function's, which each source that uses it has): the
 * references' objects are linked first, so theirs is the copy kept.  A reference must run
 * none of the code of the op it judges (a review passed wrong kernels with an expf of the
 * shape source's that an honest reference called). */
/* Whether something other than the library's own code may call name, so that a definition
 * of it in op code would run where it is called: a name of the device API, of the C
 * library or math.h (the devsyms lists, and whatever the C libraries this process has
 * loaded define), or a reserved identifier (__x or _X, but C++'s _Z mangling), which is
 * what the toolchain's own code calls: the C runtime's start files call __gmon_start__ and
 * _ITM_registerTMCloneTable as the library loads, libgcc's __divtf3 calls
 * __sfp_handle_exceptions, libstdc++ calls operator new (_Znwm) for a reference's
 * std::string (reviews ran op code in the reference's worker through each). */
static bool runtime_name(const char *name)
{
    /* the C++ runtime's replaceable functions, which libstdc++ calls through its own PLT
     * (std::string's allocation: operator new, operator delete), and std::terminate */
    static const char *const cxx_runtime_defs[] = { "_Znw", "_Zna", "_Zdl", "_Zda",
                                                    "_ZSt9terminate" };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(cxx_runtime_defs); i++)
        if (strncmp(name, cxx_runtime_defs[i], strlen(cxx_runtime_defs[i])) == 0)
            return true;
    if (nopi_device_symbol_allowed(name))
        return true;
    if (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Y')))
        return true;
    return dlsym(RTLD_DEFAULT, name) != NULL;
}

static int check_reference_reach(builder *b, const object *objs, int nobjs)
{
    static const char *const whose[] = { "kernel code", "shape function code" };
    for (int i = 0; i < nobjs; i++) {
        const object *o = &objs[i];
        if (o->role == NOPI_ROLE_REFERENCE)
            continue;
        for (size_t k = 0; k < o->nsyms; k++) {
            const char *name = o->syms[k].name;
            if (!o->syms[k].defined)
                continue;
            bool runtime = runtime_name(name);
            const object *ref = NULL;
            for (int j = 0; j < nobjs && !runtime && !ref; j++) {
                bool fn;
                if (objs[j].role == NOPI_ROLE_REFERENCE &&
                    (object_needs(&objs[j], name) ||
                     (!o->syms[k].weak && nopi_object_defines(&objs[j], name, &fn))))
                    ref = &objs[j];
            }
            if (!runtime && !ref)
                continue;
            nopi_cxxfn f;   /* a C++ name as its source spells it */
            nopi_cxx_read(name, &f);
            const char *shown = f.display[0] ? f.display : name;
            int line, col;
            nopi_locate_word(o->source, f.name[0] ? f.name : name, &line, &col);
            if (runtime) {
                nopi_fail(b->err, NOP_ERR_COMPILE, o->source, line, col, "%s defines '%s', "
                          "a name of the C library, math.h, the device API or the toolchain",
                          whose[o->role], shown);
                nopi_detail(b->err, "the library is one shared object: every call to '%s' in "
                            "it, its references' included, would run this definition; give "
                            "it a name of its own", name);
            } else {
                nopi_fail(b->err, NOP_ERR_COMPILE, o->source, line, col, "%s defines '%s', "
                          "which reference code in '%s' uses too", whose[o->role], shown,
                          ref->source);
                nopi_detail(b->err, "a reference runs none of the code of the op it judges; "
                            "give the reference its own copy under another name");
            }
            return -1;
        }
    }
    return 0;
}

int nopi_check_references(builder *b, const object *objs, int nobjs)
{
    if (check_reference_reach(b, objs, nobjs) != 0)
        return -1;
    for (int i = 0; i < b->m->ntests; i++) {
        const nopi_test *t = &b->m->tests[i];
        if (!t->reference)
            continue;
        bool found = b->refs && b->refs[i].sym, fn = found;
        for (int j = 0; j < nobjs && !found; j++)
            if (objs[j].role == NOPI_ROLE_REFERENCE)
                found = nopi_object_defines(&objs[j], t->reference, &fn);
        if (found && fn)
            continue;
        char hint[256];
        const char *near = found ? NULL : closest_function(objs, nobjs, NOPI_ROLE_REFERENCE,
                                                           t->reference, hint, sizeof hint);
        nopi_fail(b->err, NOP_ERR_COMPILE, b->m->path, t->reference_pos.line,
                  t->reference_pos.col, "reference function '%s' of test '%s' is not defined "
                  "in reference_srcs%s%s%s", t->reference, t->name,
                  near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        char *sig = nopi_gen_signature(&b->m->ops[t->op], t->reference);
        nopi_detail(b->err, "define it, with its op's signature:\n    %s", sig ? sig : "");
        free(sig);
        return -1;
    }
    return 0;
}

