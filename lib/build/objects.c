/*
 * objects.c - compiles each source to an object and links the library (see builder.h).
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder.h"
#include "neuronop/abi.h"
#include "objcache.h"
#include "syscc.h"
/* ---- libtcc ----------------------------------------------------------------------------- */

static void note_step(builder *b, const char *what, const char *path, bool instrument)
{
    if (!b->o->verbose && !b->m->verbose)
        return;
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_printf(&sb, "%s %s: libtcc -I%s/libtcc -I%s", what, path, b->include_dir,
                   b->include_dir);
    for (int i = 0; i < b->m->nincludes; i++)
        nopi_sb_printf(&sb, " -I%s", b->m->includes[i].resolved);
    for (int i = 0; i < b->m->nflags; i++)
        nopi_sb_printf(&sb, " %s", b->m->flags[i].text);
    if (instrument)
        nopi_sb_puts(&sb, " -b -g");
    nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_NOTE, NULL, 0, 0, "%s",
              sb.s ? sb.s : what);
    nopi_sb_free(&sb);
}

/* instrument: compile with libtcc's bounds checking and the debug info that maps an access
 * back to its line (memcheck builds, kernel sources only: shape functions and references
 * are host code, and the glue must stay uninstrumented). */
static nopi_cc *new_cc(builder *b, nopi_cc_kind kind, const char *source_dir, bool instrument)
{
    nopi_cc *cc = nopi_cc_new(kind, b->tcc_dir, b->o->compile_in_process ? NULL : &b->confine,
                              b->o->diag, b->o->diag_ctx);
    if (!cc)
        return NULL;
    /* first: its sys/cdefs.h gives back the __attribute__ glibc's defines away for libtcc */
    char *tcc_only = nopi_path_join(b->include_dir, "libtcc");
    if (tcc_only)
        nopi_cc_include_dir(cc, tcc_only);
    free(tcc_only);
    nopi_cc_include_dir(cc, b->include_dir);
    if (source_dir)   /* #include "x.h" next to the source, as a compiler would */
        nopi_cc_include_dir(cc, source_dir);
    for (int i = 0; i < b->m->nincludes; i++)
        nopi_cc_include_dir(cc, b->m->includes[i].resolved);
    for (int i = 0; i < b->m->nflags; i++) {
        const nopi_flag *f = &b->m->flags[i];
        switch (f->kind) {
        case NOPI_FLAG_DEFINE: nopi_cc_define(cc, f->name, f->value); break;
        case NOPI_FLAG_UNDEF: nopi_cc_undefine(cc, f->name); break;
        case NOPI_FLAG_INCLUDE: nopi_cc_include_dir(cc, f->value); break;
        case NOPI_FLAG_OPTION: nopi_cc_option(cc, f->text); break;
        }
    }
    if (b->m->stack_from == NOP_STACK_KEY) {   /* kernels see STACK_SIZE either way */
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)b->m->stack_size);
        nopi_cc_define(cc, "STACK_SIZE", v);
    }
    if (instrument)
        nopi_cc_option(cc, "-b -g");
    if (kind == NOPI_CC_SHARED) {
        /* A library's own definitions (its trampolines) bind before any same-named symbol
         * in the process: kernel calls reach the device, never the host's libc by accident. */
        nopi_cc_option(cc, "-Wl,-Bsymbolic");
        /* Do not link against libc or the C runtime's start files: the library is only ever
         * loaded into neuronop, which has libc and libm, and reading libc's symbol table was
         * a fifth of a build.  link_library adds libtcc1.a, tcc's own helpers. */
        nopi_cc_option(cc, "-nostdlib");
    }
    return cc;
}

static const char *const role_names[] = { "compute", "shape", "reference" };

static int object_path(builder *b, object *obj, int index, const char *source, nopi_role role)
{
    obj->role = role;
    obj->source = source;
    obj->lang = nopi_build_lang(b, index);
    char name[64];
    snprintf(name, sizeof name, "%s%d.o", role_names[role], index);
    if (!(obj->path = nopi_path_join(b->tmpdir, name)))
        return nopi_nomem(b->err);
    return 0;
}

/* Whether the line at p is a #pragma comment directive. */
static bool pragma_directive(const char *p)
{
    const char *q = p + strspn(p, " \t");
    if (*q != '#')
        return false;
    q += 1 + strspn(q + 1, " \t");
    if (strncmp(q, "pragma", 6) != 0)
        return false;
    q += 6 + strspn(q + 6, " \t");
    return strncmp(q, "comment", 7) == 0;
}

/* Whether the len bytes at p (a NUL after them, or more text) hold _Pragma("comment ...):
 * looked for in those bytes alone, so a long text costs its length, not its square (a
 * reviewer's find: 80 s for a 17 MB header). */
static bool underscore_pragma(const char *p, size_t len)
{
    const char *end = p + len;
    for (const char *op = memmem(p, len, "_Pragma", 7); op;
         op = memmem(op + 1, (size_t)(end - op - 1), "_Pragma", 7)) {
        const char *q = op + 7;
        while (q < end && (*q == ' ' || *q == '\t' || *q == '('))
            q++;
        if (q < end && *q == '"')
            for (q++; q < end && (*q == ' ' || *q == '\t'); q++)
                ;
        if ((size_t)(end - q) >= 7 && strncmp(q, "comment", 7) == 0)
            return true;
    }
    return false;
}

/* The line of a libtcc option pragma in text, #pragma comment(option, ...) or (lib, ...), or
 * _Pragma("comment(...)"), which libtcc obeys while it compiles: past the manifest's flags
 * and their allow-list (a reviewer's find: "-w" so silenced the implicit-declaration
 * error); 0 when there is none.  A rough scan of the text (a line a block comment holds
 * counts). */
static int option_pragma(const char *text)
{
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (pragma_directive(p) || underscore_pragma(p, len))
            return line;
        if (!eol)
            break;
        p = eol + 1;
    }
    return 0;
}

/* The same of the file at path, read a few KB at a time: a header of any size is looked at
 * whole, as libtcc reads it (a reviewer's find: one past the first 16 MB was missed), in
 * time linear in its size.  0 also when it cannot be read (the compile will say so). */
static int file_option_pragma(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    enum { OVERLAP = 32 };   /* a line's previous part kept: "_Pra" + "gma(" across parts */
    char buf[OVERLAP + 4096];
    size_t keep = 0;
    int line = 1, hit = 0;
    bool start = true;
    while (!hit && fgets(buf + keep, (int)(sizeof buf - keep), f)) {
        size_t n = keep + strlen(buf + keep);
        bool whole = n > 0 && buf[n - 1] == '\n';
        if ((start && pragma_directive(buf)) || underscore_pragma(buf, n))
            hit = line;
        if (whole) {
            line++;
            keep = 0;
        } else {   /* the line goes on: keep its last bytes before the next part */
            keep = n < OVERLAP ? n : OVERLAP;
            memmove(buf, buf + n - keep, keep);
        }
        start = whole;
    }
    fclose(f);
    return hit;
}

/* Reads an object's symbols, and whether it has code that runs when it is loaded: a
 * constructor or static initialiser (nopi_elf_runs_at_load), or an indirect function,
 * whose resolver the loader calls. */
static int read_object(builder *b, object *obj)
{
    if (nopi_elfsyms_read(obj->path, &obj->syms, &obj->nsyms, b->err) != 0)
        return -1;
    char *data;
    size_t len;
    if (nopi_read_file(obj->path, &data, &len) == 0) {
        /* A memcheck build's C++ kernels: the instrumentation's own module constructor
         * (priority 99) only calls what the glue makes no-ops (gen.c), so its section is
         * made plain data, never run: a user's constructor of that priority, which g++
         * puts beside it, with it. */
        bool instrumented = b->o->memcheck && obj->role == NOPI_ROLE_COMPUTE;
        bool changed = instrumented && obj->lang == NOPI_LANG_CXX &&
                       nopi_elf_disarm_section(data, len, ".init_array.00099",
                                               ".nopi.asan.ctor99");
        /* A memcheck build's C kernels linked by the system (the library has C++ too):
         * libtcc's -b loads its stabs, with 32-bit absolute relocations ld cannot put in a
         * shared object, so they become debug data, which ld links as it does g++'s
         * -gstabs; and its tables of arrays, which hold relocated addresses, are made
         * writable data.  (Its code loads those tables' absolute addresses, so the library
         * keeps text relocations, as one libtcc links itself does: the loader applies them.) */
        if (instrumented && obj->lang == NOPI_LANG_TCC && b->system_link) {
            changed |= nopi_elf_section_flags(data, len, ".stab", 0, SHF_ALLOC);
            changed |= nopi_elf_section_flags(data, len, ".stabstr", 0, SHF_ALLOC);
            changed |= nopi_elf_section_flags(data, len, ".bounds", SHF_WRITE, 0);
            changed |= nopi_elf_section_flags(data, len, ".lbounds", SHF_WRITE, 0);
        }
        if (changed) {
            const void *bufs[1] = { data };
            if (nopi_write_whole(obj->path, bufs, &len, 1, b->err) != 0) {
                free(data);
                return -1;
            }
        }
        /* thread-local data in kernel code: each host thread running cores has a copy of
         * its own, where the device has one variable for all its cores, so a kernel that
         * races on it there passes here (a device-rules tester's find: the check of written
         * globals compares the library's data segment, and TLS is elsewhere) */
        if (obj->role == NOPI_ROLE_COMPUTE && nopi_elf_has_tls(data, len)) {
            free(data);
            int line = 0, col = 0;
            static const char *const words[] = { "__thread", "_Thread_local", "thread_local" };
            for (size_t k = 0; k < 3 && !line; k++)
                nopi_locate_word(obj->source, words[k], &line, &col);
            nopi_fail(b->err, NOP_ERR_COMPILE, obj->source, line, col, "kernel code has "
                      "thread-local data, which the device does not have: its cores share one "
                      "copy of each variable");
            nopi_detail(b->err, "keep per-core data in a local variable or a tcm_malloc "
                        "buffer");
            return -1;
        }
        /* LTO bytecode (gcc -flto, or its sections put together in an asm): the linker's
         * plugin would compile it into the library, definitions and constructors no check
         * here sees (a review defined a reference's expf so, from a shape source).  Refused
         * here: -fno-use-linker-plugin does not keep it out, ld loads the plugins in
         * /usr/lib/bfd-plugins by itself */
        if (nopi_elf_has_lto(data, len)) {
            free(data);
            static const char *const whose[] = { "kernel code", "shape function code",
                                                 "reference code" };
            nopi_fail(b->err, NOP_ERR_COMPILE, obj->source, 0, 0, "%s has LTO bytecode (a "
                      "'.gnu.lto_' section), which the linker would compile into the library "
                      "unchecked", whose[obj->role]);
            nopi_detail(b->err, "an op library is linked by neuronop, without link-time "
                        "optimisation; remove the section");
            return -1;
        }
        obj->static_init = nopi_elf_runs_at_load(data, len);
        if (obj->static_init)   /* a constructor, a destructor, C++'s _GLOBAL__sub_I_ */
            obj->at_unload = nopi_elf_load_function(data, len, obj->load_fn,
                                                    sizeof obj->load_fn) == 1;
        if (obj->static_init && obj->lang == NOPI_LANG_CXX)   /* C's: a constructor */
            nopi_elf_startup_object(data, len, obj->init_var, sizeof obj->init_var);
        free(data);
    }
    for (size_t k = 0; k < obj->nsyms && !obj->static_init; k++)
        if (obj->syms[k].ifunc) {
            obj->static_init = true;
            snprintf(obj->init_var, sizeof obj->init_var, "%s", obj->syms[k].name);
        }
    return 0;
}

/* Fails the build at line of file, which has an option pragma (option_pragma); -1. */
static int refuse_option_pragma(builder *b, const char *file, int line)
{
    nopi_fail(b->err, NOP_ERR_COMPILE, file, line, 1,
              "#pragma comment sets libtcc's options or libraries from the source, which "
              "a build takes from its manifest only");
    nopi_detail(b->err, "give flags in the manifest's extra_cflags (neuronop.yaml(5))");
    nopi_diag_add_excerpt(&b->err->diag);
    return -1;
}

/* Fails the build when a file of the library's folder that the source at path includes has
 * an option pragma: libtcc obeys one in any file it reads (a red team's find: one in a
 * header silenced the build's errors).  Which file an #include of a macro names only the
 * compiler knows: then every file of the folder is looked at.  0 when none has; -1 with
 * b->err filled. */
static int headers_option_pragma(builder *b, const char *path)
{
    const char *folder = b->o->library_dir ? b->o->library_dir : b->m->dir;
    char **files = NULL, *real = realpath(folder, NULL);
    size_t n = 0;
    bool computed = false;
    if (!real)   /* (the sources were found in it: it is there) */
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot resolve '%s': %s",
                         folder, strerror(errno));
    int rc = nopi_build_included(b, &path, 1, &files, &n, &computed);
    if (rc == 0 && computed && nopi_build_folder_files(b, &files, &n) < 0)
        rc = -1;
    if (rc != 0)
        nopi_nomem(b->err);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && nopi_path_within(files[i], real)) {
            int line = file_option_pragma(files[i]);
            char *shown = line > 0 ? nopi_path_join(folder, files[i] + strlen(real) + 1)
                                   : NULL;   /* as the folder was named: "relu/sub/x.h" */
            if (line > 0)
                rc = refuse_option_pragma(b, shown ? shown : files[i], line);
            free(shown);
        }
        free(files[i]);
    }
    free(files);
    free(real);
    return rc;
}

/* The C source at path wrapped in its prelude (nopi_gen_unit) into *unit, malloc'd, NULL on
 * no memory (which the caller reports); -1 with b->err filled when the source cannot be
 * read, or, for libtcc, it or a header of the library's it includes has an option pragma
 * (option_pragma; g++ and cc ignore them). */
static int source_unit(builder *b, const char *path, nopi_role role, bool libtcc, char **unit)
{
    char *text;
    *unit = NULL;
    if (nopi_read_file(path, &text, NULL) != 0)
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read '%s': %s", path,
                         strerror(errno));
    int pragma_line = libtcc ? option_pragma(text) : 0;
    if (pragma_line > 0 || (libtcc && headers_option_pragma(b, path) != 0)) {
        free(text);
        return pragma_line > 0 ? refuse_option_pragma(b, path, pragma_line) : -1;
    }
    *unit = nopi_gen_unit(b->m, role, path, text);
    free(text);
    return 0;
}

static int compile_tcc(builder *b, int index, object *obj)
{
    const char *path = b->sources[index].file;
    nopi_role role = b->sources[index].role;
    if (object_path(b, obj, index, path, role) != 0)
        return -1;
    char *unit;
    if (source_unit(b, path, role, true, &unit) != 0)
        return -1;
    char *dir = nopi_dirname(path);
    bool instrument = b->o->memcheck && role == NOPI_ROLE_COMPUTE;
    nopi_cc *cc = unit && dir ? new_cc(b, NOPI_CC_OBJECT, dir, instrument) : NULL;
    free(dir);
    int rc = -1;
    if (!cc) {
        nopi_nomem(b->err);
    } else {
        note_step(b, role == NOPI_ROLE_COMPUTE ? "compile (device)"
                     : role == NOPI_ROLE_SHAPE ? "compile (host)" : "compile (reference)", path,
                  instrument);
        nopi_cc_name(cc, b->sources[index].path);
        rc = nopi_cc_compile(cc, unit, b->err);
        if (rc == 0)
            rc = nopi_cc_output(cc, obj->path, b->err);
        if (rc != 0 && nopi_cc_source_error(cc))
            nopi_build_explain_signature(b, role);
        b->compiled++;
    }
    nopi_cc_free(cc);
    free(unit);
    return rc == 0 ? read_object(b, obj) : rc;
}

/* ---- the system compilers --------------------------------------------------------------- */

/* -I and -D of a source: neuronop's headers, the source's folder, extra_include_paths and
 * the manifest's flags as written, then STACK_SIZE. */
static void add_common(builder *b, nopi_argv *a, const char *source_dir)
{
    nopi_argv_addf(a, "-I%s", b->include_dir);
    if (source_dir)
        nopi_argv_addf(a, "-I%s", source_dir);
    for (int i = 0; i < b->m->nincludes; i++)
        nopi_argv_addf(a, "-I%s", b->m->includes[i].resolved);
    for (int i = 0; i < b->m->nflags; i++) {
        const nopi_flag *f = &b->m->flags[i];
        if (f->kind == NOPI_FLAG_INCLUDE)
            nopi_argv_addf(a, "-I%s", f->value);
        else
            nopi_argv_add(a, f->text);
    }
    if (b->m->stack_from == NOP_STACK_KEY)
        nopi_argv_addf(a, "-DSTACK_SIZE=%lld", (long long)b->m->stack_size);
}

/* The flags every C++ source gets after the user's, so the user's cannot undo them: the
 * device's C++14 without exceptions or RTTI (neuronop-build(1)). */
static const char *const cxx_enforced[] = {
    "-std=c++14", "-pedantic-errors", "-fno-exceptions", "-fno-rtti",
    "-fno-threadsafe-statics", "-fno-stack-protector", "-fPIC",
};
/* memcheck for C++ kernels: g++'s address instrumentation with every check a call, which
 * the glue routes into memcheck (gen.c); stack and global instrumentation, which need
 * ASan's shadow memory, are off, and stabs give memcheck its source lines. */
static const char *const cxx_memcheck[] = {
    "-fsanitize=address", "--param=asan-stack=0", "--param=asan-globals=0",
    "--param=asan-instrumentation-with-call-threshold=0", "--param=asan-use-after-return=0",
    "-fno-sanitize-recover=all", "-gstabs", "-Wno-deprecated",
};
static const char *const cc_enforced[] = {
    "-std=gnu11", "-fno-stack-protector", "-fPIC",
};

/* Messages neuronop can read (syscc.c): one line each, no colours, no caret lines.  gcc and
 * clang spell that differently, and each refuses the other's flags. */
static void add_plain_diagnostics(nopi_argv *a, const char *program)
{
    if (nopi_is_clang(program)) {
        nopi_argv_add(a, "-fno-color-diagnostics");
        nopi_argv_add(a, "-fno-caret-diagnostics");
    } else {
        nopi_argv_add(a, "-fdiagnostics-plain-output");
        nopi_argv_add(a, "-fno-diagnostics-show-caret");
    }
}

/* Whether the C++ source at path includes one of neuronop's headers that bring
 * <torch/torch.h>, by name: only those are given torch.h's standard headers first (pch.h).
 * A source that includes none of them (a helper with no header at all) gets no standard
 * name it did not ask for: its global `int index` or `double y1` is not a redeclaration of
 * <strings.h>'s or <math.h>'s, as with libtorch, whose headers a source that does not include
 * them never sees.  One that includes torch.h through a header of its own gets the text. */
static bool brings_torch(const char *path)
{
    static const char *const headers[] = { "torch/torch.h", "torchneuron/register.h",
                                           "neuron/neuron-utils.hpp" };
    char *text = NULL;
    size_t len = 0;
    if (nopi_read_file(path, &text, &len) != 0)
        return true;   /* the compile says what is wrong with it */
    bool found = false;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(headers) && !found; i++)
        found = memmem(text, len, headers[i], strlen(headers[i])) != NULL;
    free(text);
    return found;
}

static int prepare_system(builder *b, int index, object *obj, nopi_tool_job *job)
{
    const char *path = b->sources[index].file;
    nopi_role role = b->sources[index].role;
    if (object_path(b, obj, index, path, role) != 0)
        return -1;
    char *dir = nopi_dirname(path);
    char log[64];
    snprintf(log, sizeof log, "%s%d.log", role_names[role], index);
    job->log = nopi_path_join(b->tmpdir, log);
    if (!dir || !job->log) {
        free(dir);
        return nopi_nomem(b->err);
    }
    nopi_argv *a = &job->argv;
    job->name = b->sources[index].path;
    job->source = path;
    bool cxx = obj->lang == NOPI_LANG_CXX;
    nopi_argv_add(a, cxx ? nopi_cxx_program(b->m->cxx) : nopi_cc_program());
    nopi_argv_add(a, "-O2");
    add_common(b, a, dir);
    free(dir);
    if (a->failed)   /* out of memory: a->v[0] is read below, and by preprocess_argv */
        return nopi_nomem(b->err);
    const char *const *enforced = cxx ? cxx_enforced : cc_enforced;
    size_t nenforced = cxx ? NOPI_ARRAY_LEN(cxx_enforced) : NOPI_ARRAY_LEN(cc_enforced);
    for (size_t i = 0; i < nenforced; i++)
        nopi_argv_add(a, enforced[i]);
    add_plain_diagnostics(a, a->v[0]);
    if (cxx && b->o->memcheck && role == NOPI_ROLE_COMPUTE && nopi_is_clang(a->v[0])) {
        nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "--memcheck of C++ kernels needs g++, "
                  "not '%s': g++'s address instrumentation is what memcheck reads", a->v[0]);
        if (b->m->cxx)   /* the manifest's cxx: wins over CXX (a docs audit's find) */
            nopi_detail(b->err, "the manifest's 'cxx: %s' names it: set 'cxx: g++' to build "
                        "with --memcheck", b->m->cxx);
        else
            nopi_detail(b->err, "build the memcheck library with CXX=g++ (the plain one may "
                        "stay with '%s')", a->v[0]);
        return -1;
    }
    if (cxx && b->o->memcheck && role == NOPI_ROLE_COMPUTE)
        for (size_t i = 0; i < NOPI_ARRAY_LEN(cxx_memcheck); i++)
            nopi_argv_add(a, cxx_memcheck[i]);
    if (cxx && brings_torch(path) && nopi_build_std_header(b, a) != 0)   /* -include std.h */
        return -1;
    if (!nopi_confine_landlock()) {   /* the files it reads, to check them (confine.h) */
        snprintf(log, sizeof log, "%s%d.d", role_names[role], index);
        if (!(job->deps = nopi_path_join(b->tmpdir, log)))
            return nopi_nomem(b->err);
        nopi_argv_add(a, "-MD");
        nopi_argv_add(a, "-MF");
        nopi_argv_add(a, job->deps);
        /* the files the assembler reads: a top-level asm's .incbin embedded a file from
         * outside the library, which -MF does not list.  gas lists them; clang's own
         * assembler cannot, so without Landlock clang hands its assembly to gas too */
        snprintf(log, sizeof log, "%s%d.as.d", role_names[role], index);
        if (!(job->asdeps = nopi_path_join(b->tmpdir, log)))
            return nopi_nomem(b->err);
        if (nopi_is_clang(a->v[0]))
            nopi_argv_add(a, "-fno-integrated-as");
        nopi_argv_add(a, "-Xassembler");
        nopi_argv_add(a, "--MD");
        nopi_argv_add(a, "-Xassembler");
        nopi_argv_add(a, job->asdeps);
    }
    nopi_argv_add(a, "-c");
    nopi_argv_add(a, "-o");
    nopi_argv_add(a, obj->path);
    if (cxx) {
        nopi_argv_add(a, path);
        return 0;
    }
    /* C: the source wrapped in its prelude, as for libtcc, so signatures are checked */
    char *unit, unitname[64];
    if (source_unit(b, path, role, false, &unit) != 0)
        return -1;
    snprintf(unitname, sizeof unitname, "%s%d.c", role_names[role], index);
    char *unitpath = nopi_path_join(b->tmpdir, unitname);
    FILE *f = unit && unitpath ? fopen(unitpath, "w") : NULL;
    bool ok = f && fputs(unit, f) >= 0;
    ok = f && fclose(f) == 0 && ok;
    if (ok)
        nopi_argv_add(a, unitpath);
    free(unit);
    free(unitpath);
    return ok ? 0 : nopi_nomem(b->err);
}

void nopi_build_note_job(builder *b, const nopi_tool_job *job)
{
    if ((!b->o->verbose && !b->m->verbose) || job->done)
        return;
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    for (int i = 0; i < job->argv.n; i++)
        nopi_sb_printf(&sb, "%s%s", i ? " " : "", job->argv.v[i]);
    nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_NOTE, NULL, 0, 0, "%s", sb.s ? sb.s : "");
    nopi_sb_free(&sb);
}

/* The tool's own words under an error neuronop found no diagnostic for (a linker's
 * "undefined reference to `exp'"): the first lines of its log, without the driver's summary,
 * each cut to LINE_SHOWN bytes so that all of them, and what was left unread, fit. */
enum { LINES_SHOWN = 6, LINE_SHOWN = 240 };
static void detail_from_log(nop_error *e, const char *log)
{
    char *text = NULL;
    unsigned long long more;
    if (nopi_tool_log(log, &text, &more) != 0)
        return;
    int shown = 0;
    for (char *line = text, *next; line && *line && shown < LINES_SHOWN; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (*line && strncmp(line, "collect2: ", 10) != 0) {
            nopi_detail(e, "%.*s%s", LINE_SHOWN, line, strlen(line) > LINE_SHOWN ? " ..." : "");
            shown++;
        }
    }
    free(text);
}

/* How much of a job's log neuronop did not read (nopi_tool_log): 0 when it read it all. */
static unsigned long long log_unread(const char *log)
{
    struct stat st;
    if (stat(log, &st) != 0 || (unsigned long long)st.st_size <= NOPI_LOG_KEEP)
        return 0;
    char *text = NULL;
    unsigned long long more = 0;
    if (nopi_tool_log(log, &text, &more) != 0)
        more = 0;
    free(text);
    return more;
}

/* A system compiler's warnings pass the same check as libtcc's (confine.h) on their way to
 * the caller: none quotes a file outside the library folder. */
typedef struct confined_sink {
    builder *b;
} confined_sink;

static void confined_diag(void *ctx, const nop_diag *d)
{
    confined_sink *s = ctx;
    nop_diag copy = *d;
    nopi_confine_diag(&s->b->confine, &copy);
    nopi_diag_clean(&copy);   /* after the check, which needs the file's own name */
    if (s->b->o->diag)
        s->b->o->diag(s->b->o->diag_ctx, &copy);
}

/* Without Landlock: what the job's compiler and assembler list of the files they read
 * (confine.h), the first that may not be read copied to bad. */
static nopi_deps_verdict read_deps(builder *b, const nopi_tool_job *job, char *bad,
                                   size_t size)
{
    nopi_deps_verdict v = NOPI_DEPS_OK;
    if (job->done)   /* from the compile cache: checked when the compile that made it ran */
        return v;
    bool complete = job->status == 0;
    if (job->deps)
        v = nopi_confine_deps(&b->confine, &(nopi_deps){ job->deps, false, complete, NULL },
                              bad, size);
    if (v == NOPI_DEPS_OK && job->asdeps) {
        /* the file compiled is the command's last word (prepare_system), and its name
         * without folders the .file directive's */
        const char *compiled = job->argv.v[job->argv.n - 1], *slash = strrchr(compiled, '/');
        v = nopi_confine_deps(&b->confine, &(nopi_deps){ job->asdeps, true, complete,
                                                         slash ? slash + 1 : compiled },
                              bad, size);
    }
    return v;
}

/* Runs jobs and reads their logs: warnings to the caller, the first error into b->err;
 * ok[i] (when ok is not NULL) says whether job i succeeded, whatever the others did. */
static int run_jobs(builder *b, nopi_tool_job *jobs, int n, const char *what, bool *ok)
{
    for (int i = 0; i < n; i++)
        nopi_build_note_job(b, &jobs[i]);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (nopi_tools_run(jobs, n, cpus > 1 ? (int)cpus : 1, &b->confine, b->err) != 0)
        return -1;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        nop_error e = { 0 };
        char outside[1024];
        bool failed = true;
        nopi_deps_verdict verdict;
        if (jobs[i].limit != NOPI_LIMIT_NONE) {
            nopi_confine_past(&b->confine, &e, jobs[i].name ? jobs[i].name : "the library",
                              jobs[i].limit == NOPI_LIMIT_TIME);
        } else if ((verdict = read_deps(b, &jobs[i], outside, sizeof outside)) != NOPI_DEPS_OK) {
            /* without Landlock it could read the file: refused all the same, unquoted */
            nopi_fail(&e, NOP_ERR_COMPILE, jobs[i].source, 0, 0, "refused");
            if (verdict == NOPI_DEPS_AMBIGUOUS)
                nopi_confine_refuse_ambiguous(&e.diag, outside);
            else if (verdict == NOPI_DEPS_UNREADABLE)
                nopi_confine_refuse_unreadable(&e.diag, outside);
            else if (verdict == NOPI_DEPS_UNLISTED)
                nopi_fail(&e, NOP_ERR_COMPILE, jobs[i].source, 0, 0, "'%s' wrote no list of "
                          "the files it read (-MD -MF), which a build without Landlock "
                          "checks: give CXX a wrapper that passes every flag on",
                          jobs[i].argv.v[0]);
            else
                nopi_confine_refuse(&e.diag, outside);
        } else {
            confined_sink sink = { b };
            int bad = nopi_gcc_log(jobs[i].log, b->include_dir, what, confined_diag, &sink,
                                   &e);
            if (bad && nopi_confine_diag(&b->confine, &e.diag))
                e.kind = NOP_ERR_COMPILE;
            nopi_diag_clean(&e.diag);
            if (jobs[i].status != 0 && !bad) {
                nopi_fail(&e, NOP_ERR_COMPILE, NULL, 0, 0, "%s failed ('%s' exited with %d)",
                          what, jobs[i].argv.v[0], jobs[i].status);
                detail_from_log(&e, jobs[i].log);
            }
            failed = jobs[i].status != 0 || bad;
            unsigned long long more = log_unread(jobs[i].log);
            if (more && failed)
                nopi_detail(&e, "(%llu more bytes of what it printed were not read)", more);
            else if (more)   /* warnings past the start were not shown: say so */
                nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_WARNING, NULL, 0, 0,
                          "%llu more bytes of what '%s' printed %s%s%s%s were not read",
                          more, jobs[i].argv.v[0], what, jobs[i].name ? " '" : "",
                          jobs[i].name ? jobs[i].name : "", jobs[i].name ? "'" : "");
        }
        if (ok)
            ok[i] = !failed;
        if (failed && rc == 0) {   /* the first job's error is the one reported */
            *b->err = e;
            rc = -1;
        }
    }
    return rc;
}

static void free_jobs(nopi_tool_job *jobs, int n)
{
    for (int i = 0; i < n; i++) {
        nopi_argv_free(&jobs[i].argv);
        free(jobs[i].log);
        free(jobs[i].deps);
        free(jobs[i].asdeps);
    }
    free(jobs);
}

/* A -std= in extra_cflags cannot change a C++ source's dialect: the device's C++14 comes
 * after it (cxx_enforced).  Said once per build, at the flag. */
static void warn_cxx_std(builder *b)
{
    for (int i = 0; i < b->m->nflags; i++) {
        const nopi_flag *f = &b->m->flags[i];
        if (strncmp(f->text, "-std=", 5) != 0 || strcmp(f->text, "-std=c++14") == 0)
            continue;
        nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_WARNING, b->m->path, f->pos.line,
                  f->pos.col, "'%s' does not apply to C++ sources: the device compiles them "
                  "as C++14 (-std=c++14), and so does neuronop", f->text);
        return;
    }
}

/* ---- the compile cache (objcache.h) ---------------------------------------------------- */

static bool cxx_jobs(const object *objs, const int *index, int n)
{
    for (int k = 0; k < n; k++)
        if (objs[index[k]].lang == NOPI_LANG_CXX)
            return true;
    return false;
}

/* The job's command with -E for -c, its output to `out` and no dependency file: the source
 * as the compiler sees it, which is what the cache's key is made from. */
static void preprocess_argv(const nopi_argv *compile, nopi_argv *a, const char *out)
{
    for (int i = 0; i < compile->n; i++) {
        const char *s = compile->v[i];
        if (strcmp(s, "-MF") == 0 || strcmp(s, "-o") == 0) {
            i++;
            continue;
        }
        if (strcmp(s, "-MD") == 0)
            continue;
        if (strcmp(s, "-Xassembler") == 0) {   /* the assembler's dependency file */
            i++;
            continue;
        }
        nopi_argv_add(a, strcmp(s, "-c") == 0 ? "-E" : s);
    }
    /* with -g, g++ writes the current folder into its output: the key has it when it
     * matters (objcache.c), and memcheck's -gstabs objects do not depend on it.  A
     * precompiled header stays one line, naming it (its folder is its key, pch.h), rather
     * than the megabytes of the headers it holds. */
    if (!nopi_is_clang(compile->v[0])) {
        nopi_argv_add(a, "-fno-working-directory");
        nopi_argv_add(a, "-fpch-preprocess");
    }
    nopi_argv_add(a, "-o");
    nopi_argv_add(a, out);
}

/* Preprocesses each C++ source (confined like its compile, all at once) and takes the
 * object of every one the cache has: the job is marked done and its log holds the messages
 * of the compile that made the object.  keys[k] is then the key of job k, or "" when it
 * cannot be cached: its preprocessing failed (the compile reports why), or went past a
 * limit (the job is done: failed with that limit, so a compile bomb is not run twice). */
static int from_cache(builder *b, const nopi_objcache *cache, const object *objs,
                      const int *index, nopi_tool_job *jobs, int n, char (*keys)[33])
{
    nopi_tool_job *pre = calloc((size_t)n, sizeof *pre);
    int *of = calloc((size_t)n, sizeof *of);   /* pre[j] preprocesses jobs[of[j]] */
    char **ii = calloc((size_t)n, sizeof *ii);  /* into ii[j] */
    int m = 0, rc = pre && of && ii ? 0 : nopi_nomem(b->err);
    for (int k = 0; rc == 0 && k < n; k++) {
        if (objs[index[k]].lang != NOPI_LANG_CXX)
            continue;
        char name[64];
        snprintf(name, sizeof name, "pre%d.ii", k);
        ii[m] = nopi_path_join(b->tmpdir, name);
        snprintf(name, sizeof name, "pre%d.log", k);
        pre[m].log = nopi_path_join(b->tmpdir, name);
        if (!ii[m] || !pre[m].log) {
            rc = nopi_nomem(b->err);
            m++;
            break;
        }
        pre[m].name = jobs[k].name;
        pre[m].source = jobs[k].source;
        preprocess_argv(&jobs[k].argv, &pre[m].argv, ii[m]);
        nopi_build_note_job(b, &pre[m]);
        of[m++] = k;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (rc == 0 && m > 0)
        rc = nopi_tools_run(pre, m, cpus > 1 ? (int)cpus : 1, &b->confine, b->err);
    for (int j = 0; rc == 0 && j < m; j++) {
        int k = of[j];
        if (pre[j].limit != NOPI_LIMIT_NONE) {   /* the compile would go past it again */
            jobs[k].done = true;
            jobs[k].status = pre[j].status;
            jobs[k].limit = pre[j].limit;
            keys[k][0] = '\0';
            continue;
        }
        if (pre[j].status != 0 || nopi_objcache_key(&jobs[k].argv, ii[j], keys[k]) != 0) {
            keys[k][0] = '\0';
            continue;
        }
        jobs[k].done = nopi_objcache_get(cache, keys[k], objs[index[k]].path, jobs[k].log);
        if (jobs[k].done && (b->o->verbose || b->m->verbose))
            nopi_emit(b->o->diag, b->o->diag_ctx, NOP_SEV_NOTE, NULL, 0, 0,
                      "%s: from the compile cache (%s)", jobs[k].name, keys[k]);
    }
    for (int j = 0; pre && j < m; j++) {
        nopi_argv_free(&pre[j].argv);
        free(pre[j].log);
        free(ii[j]);
    }
    free(pre);
    free(of);
    free(ii);
    return rc;
}

int nopi_build_compile_system(builder *b, object *objs)
{
    nopi_tool_job *jobs = calloc((size_t)b->nsources + 1, sizeof *jobs);
    int *index = calloc((size_t)b->nsources + 1, sizeof *index);
    int n = 0, rc = jobs && index ? 0 : nopi_nomem(b->err);
    bool warned = false;
    for (int i = 0; rc == 0 && i < b->nsources; i++) {
        if (nopi_build_lang(b, i) == NOPI_LANG_TCC)
            continue;
        if (nopi_build_lang(b, i) == NOPI_LANG_CXX && !warned) {
            warn_cxx_std(b);
            warned = true;
        }
        index[n] = i;
        rc = prepare_system(b, i, &objs[i], &jobs[n++]);
    }
    nopi_objcache cache = { 0 };
    char (*keys)[33] = NULL;
    bool *ok = NULL;
    if (rc == 0 && n > 0 && cxx_jobs(objs, index, n) &&
        (rc = nopi_objcache_open(&cache, b->err)) == 0 && cache.dir) {
        keys = calloc((size_t)n, sizeof *keys);
        ok = calloc((size_t)n, sizeof *ok);
        rc = keys && ok ? from_cache(b, &cache, objs, index, jobs, n, keys)
                        : nopi_nomem(b->err);
    }
    if (rc == 0 && n > 0)
        rc = run_jobs(b, jobs, n, "compiling", ok);
    /* every object compiled cleanly is kept, also when another source failed: the next
     * build, once that one is mended, takes it (keys without ok: out of memory) */
    for (int k = 0; keys && ok && k < n; k++)
        if (ok[k] && keys[k][0] && !jobs[k].done)
            nopi_objcache_put(&cache, keys[k], objs[index[k]].path, jobs[k].log);
    for (int k = 0; rc == 0 && k < n; k++) {
        if (jobs[k].done)   /* in a build that succeeds, a done job is a cache hit */
            b->cached++;
        else
            b->compiled++;
        rc = read_object(b, &objs[index[k]]);
    }
    free(ok);
    free(keys);
    nopi_objcache_close(&cache);
    if (n > 0 && rc != 0 && b->err->kind == NOP_ERR_COMPILE)
        nopi_build_explain_signature(b, NOPI_ROLE_COMPUTE);
    free_jobs(jobs, n);
    free(index);
    return rc;
}

int nopi_build_compile_tcc(builder *b, object *objs)
{
    for (int i = 0; i < b->nsources; i++)
        if (nopi_build_lang(b, i) == NOPI_LANG_TCC && compile_tcc(b, i, &objs[i]) != 0)
            return -1;
    return 0;
}

/* ---- linking ---------------------------------------------------------------------------- */

/* Reads what the linker wrote at tmp once, checks that buffer for code the loader would
 * run (linkcheck.c) and writes exactly that buffer to dest, through a new file: the
 * linker's processes may still hold tmp, and what is installed is what was checked.
 * how: what nopi_check_linked allows. */
static int install_checked(builder *b, const char *tmp, const char *dest, unsigned how)
{
    char *data;
    size_t len;
    if (nopi_read_file(tmp, &data, &len) != 0)
        return nopi_fail(b->err, NOP_ERR_COMPILE, NULL, 0, 0, "cannot read the library the "
                         "linker wrote for '%s': %s", b->lib_path, strerror(errno));
    int rc = nopi_check_linked(b, data, len, how);
    if (rc == 0) {
        const void *buf = data;
        rc = nopi_write_whole(dest, &buf, &len, 1, b->err);
    }
    free(data);
    unlink(tmp);
    return rc;
}

/* The i-th object to link: the references' first, then the others, each in their order.
 * Of a weak name defined in both (a template's copy), the linker keeps the first: a
 * reference then runs its own copy, never one the op's code supplied (check.c). */
static const object *link_order(const object *objs, int nobjs, int i)
{
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < nobjs; k++)
            if ((objs[k].role == NOPI_ROLE_REFERENCE) == (pass == 0) && i-- == 0)
                return &objs[k];
    return &objs[nobjs - 1];   /* not reached for i < nobjs */
}

static nopi_gen_info glue_info(const builder *b)
{
    nopi_gen_info info = { b->m, b->sources, b->nsources, b->key, b->o->memcheck,
                           (const nopi_gen_fn (*)[2])b->fns, b->refs, b->ns, b->system_link, NULL };
    return info;
}

/* libtcc compiles the glue and links everything: C libraries built by libtcc alone. */
static int link_tcc(builder *b, const object *objs, int nobjs, const char *tmp)
{
    nopi_gen_info info = glue_info(b);
    char *names = nopi_argnames_scan(b->m, b->sources, b->nsources);
    info.argnames = names;
    char *glue = nopi_gen_glue(&info);
    free(names);
    nopi_cc *cc = glue ? new_cc(b, NOPI_CC_SHARED, NULL, false) : NULL;
    int rc = -1;
    if (!cc) {
        nopi_nomem(b->err);
        goto out;
    }
    note_step(b, "link", b->lib_path, false);
    nopi_cc_name(cc, "the library's glue");
    if (nopi_cc_compile(cc, glue, b->err) != 0)
        goto out;
    for (int i = 0; i < nobjs; i++)   /* references first: their weak copies are kept */
        if (nopi_cc_add_object(cc, link_order(objs, nobjs, i)->path, b->err) != 0)
            goto out;
    char libtcc1[1100];
    snprintf(libtcc1, sizeof libtcc1, "%s/libtcc1.a", b->tcc_dir);
    if (nopi_cc_add_object(cc, libtcc1, b->err) == 0 && nopi_cc_output(cc, tmp, b->err) == 0)
        rc = 0;
    else if (nopi_cc_source_error(cc))
        nopi_detail(b->err, "(in the glue neuronop generates; this is a neuronop bug, "
                    "please report it)");
out:
    nopi_cc_free(cc);
    free(glue);
    return rc;
}

/* libtcc compiles glue text to an object at path. */
static int glue_object(builder *b, const char *text, const char *path)
{
    nopi_cc *cc = text ? new_cc(b, NOPI_CC_OBJECT, NULL, false) : NULL;
    if (!cc)
        return nopi_nomem(b->err);
    nopi_cc_name(cc, "the library's glue");
    int rc = nopi_cc_compile(cc, text, b->err);
    if (rc == 0)
        rc = nopi_cc_output(cc, path, b->err);
    if (rc != 0 && nopi_cc_source_error(cc))
        nopi_detail(b->err, "(in the glue neuronop generates; this is a neuronop bug, "
                    "please report it)");
    nopi_cc_free(cc);
    return rc;
}

/* True when an object to link needs the C++ runtime (libstdc++): a name left undefined
 * that is mangled or the C++ ABI's, which no object defines.  Only host code can (check.c
 * refuses it in kernels).  Linking libstdc++ is most of a link's time, so a library that
 * does not need it is linked by the C driver. */
static bool needs_cxx_runtime(const object *objs, int nobjs, bool all)
{
    bool fn;
    for (int i = 0; i < nobjs; i++) {
        if (objs[i].lang != NOPI_LANG_CXX || (!all && objs[i].role != NOPI_ROLE_SHAPE))
            continue;
        for (size_t k = 0; k < objs[i].nsyms; k++) {
            const char *name = objs[i].syms[k].name;
            if (objs[i].syms[k].defined || (strncmp(name, "_Z", 2) != 0 &&
                                            strncmp(name, "__cxa_", 6) != 0 &&
                                            strncmp(name, "__gxx_", 6) != 0))
                continue;
            bool found = false;
            for (int j = 0; j < nobjs && !found; j++)
                found = nopi_object_defines(&objs[j], name, &fn);
            if (!found)
                return true;
        }
    }
    return false;
}

/* The library's dynamic symbols: its self-description and its argument names (what the
 * loader and the describer look up), and nothing of the op's or the references' own.  A
 * definition the library exported could interpose on the C++ runtime's own calls through
 * its PLT (libstdc++'s std::string calling another of its members, say) in the reference's
 * worker, where it would run op code inside the reference that judges it; local, it binds
 * only the library's own calls, which check.c's rules cover. */
static const char exports[] = "{ global: " NT_LIB_SYMBOL "; neuronop_argnames; local: *; };\n";

/* Writes exports into the build's temporary folder, as path (malloc'd); 0, or -1. */
static int version_script(builder *b, char **path)
{
    *path = nopi_path_join(b->tmpdir, "exports.map");
    if (!*path)
        return nopi_nomem(b->err);
    const void *buf = exports;
    size_t len = sizeof exports - 1;
    return nopi_write_whole(*path, &buf, &len, 1, b->err);
}

/* The system driver links the glue object, the objects and libtcc1.a into out.  `all`: every
 * object, exporting only what version_script says, else only the shape objects (the
 * registration probe, whose shape functions the registration names by their symbols). */
static int link_system(builder *b, const char *glue, const object *objs, int nobjs, bool all,
                       const char *out)
{
    char *glue_o = nopi_path_join(b->tmpdir, all ? "glue.o" : "probe-glue.o");
    char *log = nopi_path_join(b->tmpdir, all ? "link.log" : "probe-link.log");
    char *map = NULL;
    nopi_tool_job job = { .log = log };
    int rc = glue_o && log ? glue_object(b, glue, glue_o) : nopi_nomem(b->err);
    if (rc == 0 && all)
        rc = version_script(b, &map);
    bool cxx = needs_cxx_runtime(objs, nobjs, all);
    nopi_argv *a = &job.argv;
    const char *program = cxx ? nopi_cxx_program(b->m->cxx) : nopi_cc_program();
    nopi_argv_add(a, program);   /* named as program below: a->v is NULL if this fails */
    nopi_argv_add(a, "-shared");
    nopi_argv_add(a, "-o");
    nopi_argv_add(a, out);
    /* as for libtcc's link: the library's own trampolines bind first (objects.c, new_cc) */
    nopi_argv_add(a, "-Wl,-Bsymbolic");
    nopi_argv_add(a, "-Wl,-z,noexecstack");
    if (all) {
        nopi_argv_add(a, "-Wl,--no-undefined");
        /* -Xlinker, not -Wl,: a comma in the build folder's path would split the name */
        nopi_argv_add(a, "-Xlinker");
        nopi_argv_addf(a, "--version-script=%s", map ? map : "");
    }
    add_plain_diagnostics(a, program);
    nopi_argv_add(a, glue_o ? glue_o : "");
    for (int i = 0; i < nobjs; i++) {   /* references first: their weak copies are kept */
        const object *o = link_order(objs, nobjs, i);
        if (all || o->role == NOPI_ROLE_SHAPE)
            nopi_argv_add(a, o->path);
    }
    nopi_argv_addf(a, "%s/libtcc1.a", b->tcc_dir);
    /* math.h is the device's (kernels may call exp, expf, pow ...) and host code's: without
     * libm, --no-undefined refuses any library that calls it */
    nopi_argv_add(a, "-lm");
    if (rc == 0)
        rc = run_jobs(b, &job, 1, "linking", NULL);
    nopi_argv_free(&job.argv);
    free(glue_o);
    free(log);
    free(map);
    return rc;
}

int nopi_build_link_probe(builder *b, const object *objs, int nobjs, const char *out)
{
    char *glue = nopi_gen_probe_glue();
    char *linked = nopi_path_join(b->tmpdir, "probe-linked.so");
    int rc = linked ? link_system(b, glue, objs, nobjs, false, linked) : nopi_nomem(b->err);
    free(glue);
    if (rc == 0)
        rc = install_checked(b, linked, out, NOPI_LINKED_PROBE |
                             (b->o->memcheck ? NOPI_LINKED_TEXTREL : 0));
    free(linked);
    return rc;
}

int nopi_build_link(builder *b, const object *objs, int nobjs)
{
    char *tmp = nopi_path_join(b->tmpdir, "library.so");
    if (!tmp)
        return nopi_nomem(b->err);
    int rc;
    if (b->system_link) {
        nopi_gen_info info = glue_info(b);
        char *names = nopi_argnames_scan(b->m, b->sources, b->nsources);
        info.argnames = names;
        char *glue = nopi_gen_glue(&info);
        free(names);
        note_step(b, "link", b->lib_path, false);
        rc = link_system(b, glue, objs, nobjs, true, tmp);
        free(glue);
    } else {
        rc = link_tcc(b, objs, nobjs, tmp);
    }
    /* libtcc's link too, but not its exports (all its functions); libtcc's memcheck objects
     * have absolute addresses in code, so text relocations, whichever linker links them */
    unsigned how = b->system_link ? NOPI_LINKED_EXPORTS : 0;
    if (!b->system_link || b->o->memcheck)
        how |= NOPI_LINKED_TEXTREL;
    /* the sources as they are now, before anything is installed: one edited during the
     * build may have been read in either form, and neither the library nor a stamp may
     * then replace the last build's (a red team edited a source during a build, and the
     * stamp called current a library built from other code) */
    if (rc == 0)
        rc = nopi_build_unchanged(b);
    if (rc == 0)
        rc = install_checked(b, tmp, b->lib_path, how);
    free(tmp);
    return rc;
}
