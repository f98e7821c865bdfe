/*
 * gen.c - generates the prelude of user sources and the glue of a built library (gen.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/api.h"
#include "gen.h"

/* Each API function, with its offset in the runtime's table. */
static const struct { const char *name; size_t offset; } api_entries[] = {
#define NT_API(ret, name, params) { #name, offsetof(struct nt__api, name) },
#include "base/api.def"
#undef NT_API
};

/*
 * The trampolines: one tail jump per API function through the table the runtime stores in
 * nt__api.  A jump leaves every argument register, the stack, a struct-return pointer and
 * the vector count of a variadic call (%al) as the kernel set them, so one form serves every
 * signature - as long as the stub itself touches only %r11, the scratch register the ABI
 * gives call stubs (using %rax would clobber %al, and printf would lose its doubles).
 * Assembling ~200 two-instruction stubs costs a fraction of compiling them as C, which keeps
 * `neuronop build` fast.
 */
static void add_trampolines(nopi_strbuf *sb)
{
    nopi_sb_puts(sb, "static const void *nt__api;\n__asm__(\".text\\n\"\n");
    for (size_t i = 0; i < NOPI_ARRAY_LEN(api_entries); i++)
        nopi_sb_printf(sb, "    \".globl %s\\n%s: movq nt__api(%%rip), %%r11; "
                       "jmp *%zu(%%r11)\\n\"\n", api_entries[i].name, api_entries[i].name,
                       api_entries[i].offset);
    nopi_sb_puts(sb, ");\n\n");
}

/*
 * memcheck's trampolines (api.h): each __bound_* function libtcc's -b code calls, the hook
 * it reaches, and the instructions that first add the hook's extra arguments in the next
 * free argument register: the return address at (%rsp) is the instrumented call's pc, and
 * %rbp, untouched by a tail jump, is the calling kernel function's frame.
 */
#define HOOK(name, member, add) { name, offsetof(struct nt__api, member), add }
static const struct { const char *name; size_t offset; const char *add; } bound_entries[] = {
    HOOK("__bound_ptr_add", mc_ptr_add, "movq (%rsp), %rdx; "),
    HOOK("__bound_ptr_indir1", mc_ptr_indir, "movl $1, %edx; movq (%rsp), %rcx; "),
    HOOK("__bound_ptr_indir2", mc_ptr_indir, "movl $2, %edx; movq (%rsp), %rcx; "),
    HOOK("__bound_ptr_indir4", mc_ptr_indir, "movl $4, %edx; movq (%rsp), %rcx; "),
    HOOK("__bound_ptr_indir8", mc_ptr_indir, "movl $8, %edx; movq (%rsp), %rcx; "),
    HOOK("__bound_ptr_indir12", mc_ptr_indir, "movl $12, %edx; movq (%rsp), %rcx; "),
    HOOK("__bound_ptr_indir16", mc_ptr_indir, "movl $16, %edx; movq (%rsp), %rcx; "),
    HOOK("__bound_local_new", mc_local_new, "movq %rbp, %rsi; movq (%rsp), %rdx; "),
    HOOK("__bound_local_delete", mc_local_delete, NULL),   /* see add_bound_trampolines */
    HOOK("__bound_new_region", mc_new_region, "movq %rbp, %rdx; "),   /* alloca, VLAs */
    HOOK("__bound_memcpy", mc_memcpy, "movq (%rsp), %rcx; "),
    HOOK("__bound_memmove", mc_memmove, "movq (%rsp), %rcx; "),
    HOOK("__bound_memset", mc_memset, "movq (%rsp), %rcx; "),
    HOOK("__bound_memcmp", mc_memcmp, "movq (%rsp), %rcx; "),
    HOOK("__bound_strlen", mc_strlen, "movq (%rsp), %rsi; "),
    HOOK("__bound_strcpy", mc_strcpy, "movq (%rsp), %rdx; "),
    HOOK("__bound_strncpy", mc_strncpy, "movq (%rsp), %rcx; "),
    HOOK("__bound_strcmp", mc_strcmp, "movq (%rsp), %rdx; "),
    HOOK("__bound_strncmp", mc_strncmp, "movq (%rsp), %rcx; "),
    HOOK("__bound_strcat", mc_strcat, "movq (%rsp), %rdx; "),
    HOOK("__bound_strchr", mc_strchr, "movq (%rsp), %rdx; "),
    /* g++'s address instrumentation of C++ kernels (-fsanitize=address with every check a
     * call): __asan_loadK(a) and __asan_storeK(a) become mc_ptr_indir(a, 0, K, pc),
     * __asan_loadN(a, n) mc_ptr_indir(a, 0, n, pc) */
    HOOK("__asan_load1", mc_ptr_indir, "xorl %esi, %esi; movl $1, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_load2", mc_ptr_indir, "xorl %esi, %esi; movl $2, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_load4", mc_ptr_indir, "xorl %esi, %esi; movl $4, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_load8", mc_ptr_indir, "xorl %esi, %esi; movl $8, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_load16", mc_ptr_indir, "xorl %esi, %esi; movl $16, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_store1", mc_ptr_indir, "xorl %esi, %esi; movl $1, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_store2", mc_ptr_indir, "xorl %esi, %esi; movl $2, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_store4", mc_ptr_indir, "xorl %esi, %esi; movl $4, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_store8", mc_ptr_indir, "xorl %esi, %esi; movl $8, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_store16", mc_ptr_indir, "xorl %esi, %esi; movl $16, %edx; movq (%rsp), %rcx; "),
    HOOK("__asan_loadN", mc_ptr_indir, "movq %rsi, %rdx; xorl %esi, %esi; movq (%rsp), %rcx; "),
    HOOK("__asan_storeN", mc_ptr_indir, "movq %rsi, %rdx; xorl %esi, %esi; movq (%rsp), %rcx; "),
};

/* What g++'s instrumentation also calls, which memcheck has no use for: its module
 * constructor's start-up and version check, and the notice before a noreturn call. */
static const char *const asan_noops[] = {
    "__asan_init", "__asan_version_mismatch_check_v8", "__asan_handle_no_return",
};
#undef HOOK

bool nopi_gen_is_bound_hook(const char *name)
{
    for (size_t i = 0; i < NOPI_ARRAY_LEN(bound_entries); i++)
        if (strcmp(name, bound_entries[i].name) == 0)
            return true;
    for (size_t i = 0; i < NOPI_ARRAY_LEN(asan_noops); i++)
        if (strcmp(name, asan_noops[i]) == 0)
            return true;
    return false;
}

/*
 * tcc calls __bound_local_delete between computing a function's return value and returning
 * it, saving %rax and %rdx around the call but not %xmm0 and %xmm1, which bcheck's own
 * implementation leaves alone.  The hook is C and may use them, so this trampoline is a real
 * call that keeps their low halves (all a C return value uses; tcc's assembler has no
 * movdqu), on a stack it aligns for the hook.
 */
static void add_bound_trampolines(nopi_strbuf *sb)
{
    nopi_sb_puts(sb, "__asm__(\".text\\n\"\n");
    for (size_t i = 0; i < NOPI_ARRAY_LEN(asan_noops); i++)
        nopi_sb_printf(sb, "    \".globl %s\\n%s: ret\\n\"\n", asan_noops[i], asan_noops[i]);
    for (size_t i = 0; i < NOPI_ARRAY_LEN(bound_entries); i++) {
        if (bound_entries[i].add)
            nopi_sb_printf(sb, "    \".globl %s\\n%s: %smovq nt__api(%%rip), %%r11; "
                           "jmp *%zu(%%r11)\\n\"\n", bound_entries[i].name,
                           bound_entries[i].name, bound_entries[i].add, bound_entries[i].offset);
        else
            nopi_sb_printf(sb, "    \".globl %s\\n%s: movq %%rbp, %%rsi; pushq %%rbp; "
                           "movq %%rsp, %%rbp; andq $-16, %%rsp; subq $16, %%rsp; "
                           "movq %%xmm0, (%%rsp); movq %%xmm1, 8(%%rsp); "
                           "movq nt__api(%%rip), %%r11; call *%zu(%%r11); "
                           "movq (%%rsp), %%xmm0; movq 8(%%rsp), %%xmm1; leave; ret\\n\"\n",
                           bound_entries[i].name, bound_entries[i].name,
                           bound_entries[i].offset);
    }
    nopi_sb_puts(sb, ");\n\n");
}

static const char *const stack_from_names[] = { "default", "extra_cflags", "stack_size" };

static void add_signature(nopi_strbuf *sb, const nopi_op *op, const char *fname,
                          const char *const *ctypes)
{
    nopi_sb_printf(sb, "%s%s(", ctypes == nopi_argtype_ctypes ? "nt_tensor *" : "void *", fname);
    for (int i = 0; i < op->nargs; i++)
        nopi_sb_printf(sb, "%s%s", i ? ", " : "", ctypes[op->args[i]]);
    nopi_sb_puts(sb, op->nargs ? ")" : "void)");
}

/* The same parameters spelt with abi.h's layout twins, for the glue, which does not include
 * neuronop.h (see abi.h). */
static const char *const abi_ctypes[4] = { "const void *", "struct nt__scalar_abi", "double",
                                           "long long" };

char *nopi_gen_signature(const nopi_op *op, const char *fname)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    add_signature(&sb, op, fname, nopi_argtype_ctypes);
    return nopi_sb_take(&sb);
}

char *nopi_gen_unit(const nop_manifest *m, nopi_role role, const char *path, const char *text)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, "#include <neuronop.h>\n");
    if (role == NOPI_ROLE_REFERENCE) {   /* each reference with its op's signature */
        for (int i = 0; i < m->ntests; i++) {
            if (!m->tests[i].reference)
                continue;
            add_signature(&sb, &m->ops[m->tests[i].op], m->tests[i].reference,
                          nopi_argtype_ctypes);
            nopi_sb_puts(&sb, ";\n");
        }
    }
    for (int i = 0; i < m->nops && role != NOPI_ROLE_REFERENCE; i++) {
        const nopi_op *op = &m->ops[i];
        add_signature(&sb, op, role == NOPI_ROLE_COMPUTE ? op->kernel : op->shape,
                      nopi_argtype_ctypes);
        nopi_sb_puts(&sb, ";\n");
    }
    nopi_sb_puts(&sb, "#line 1 ");
    nopi_sb_c_string(&sb, path);
    nopi_sb_puts(&sb, "\n");
    nopi_sb_puts(&sb, text);
    return nopi_sb_take(&sb);
}

/* The parameters of a C++ function taking `const T &`: a pointer to the argument. */
static const char *const abi_ref_ctypes[4] = { "const void *const *",
                                               "const struct nt__scalar_abi *",
                                               "const double *", "const long long *" };

/* One shim: unpacks the runtime's argument array into a direct call.  fn (may be NULL) gives
 * a C++ function's symbol and which parameters it takes by const reference.  The function is
 * declared under the shim's own name with an asm label for its symbol, so no name the user
 * chose appears in the glue as an identifier: a kernel named 'a', 'nt__arg' or
 * 'NT_LIB_MAGIC' cannot meet a parameter, a type or a macro of the glue. */
static void add_shim(nopi_strbuf *sb, const nopi_op *op, const char *fname,
                     const nopi_gen_fn *fn, const char *shim)
{
    static const char *const member[] = { "t", "s", "d", "i" };
    const char *sym = fn && fn->sym ? fn->sym : fname;
    nopi_sb_printf(sb, "extern void *%s_fn(", shim);
    for (int i = 0; i < op->nargs; i++) {
        bool ref = fn && fn->sym && fn->byref[i];
        nopi_sb_printf(sb, "%s%s", i ? ", " : "",
                       (ref ? abi_ref_ctypes : abi_ctypes)[op->args[i]]);
    }
    nopi_sb_puts(sb, op->nargs ? ") __asm__(" : "void) __asm__(");
    nopi_sb_c_string(sb, sym);
    nopi_sb_printf(sb, ");\nstatic void *%s(const nt__arg *a)\n{\n    (void)a;\n"
                   "    return %s_fn(", shim, shim);
    for (int i = 0; i < op->nargs; i++) {
        bool ref = fn && fn->sym && fn->byref[i];
        nopi_sb_printf(sb, "%s%sa[%d].%s", i ? ", " : "", ref ? "&" : "", i,
                       member[op->args[i]]);
    }
    nopi_sb_puts(sb, ");\n}\n");
}

/* The probe has no runtime: every entry of its table is a stub that ends the registration
 * child with NOPI_PROBE_API_EXIT, which register.c turns into "may only call m.def". */
char *nopi_gen_probe_glue(void)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_printf(&sb, "/* generated by neuronop " NOP_VERSION ": the registration probe's "
                   "trampolines */\nvoid _exit(int);\nstatic void nt__no_runtime(void) { "
                   "_exit(%d); }\nstatic void *const nt__probe_table[] = {", NOPI_PROBE_API_EXIT);
    for (size_t i = 0; i < sizeof(struct nt__api) / sizeof(void *); i++)
        nopi_sb_puts(&sb, i % 8 ? " nt__no_runtime," : "\n    nt__no_runtime,");
    nopi_sb_puts(&sb, "\n};\n");
    add_trampolines(&sb);
    nopi_sb_puts(&sb, "static const void *nt__api = nt__probe_table;\n");
    return nopi_sb_take(&sb);
}

/* True when test i names a reference function no earlier test named: each gets one shim. */
static bool first_use_of_reference(const nop_manifest *m, int i)
{
    const char *r = m->tests[i].reference;
    for (int j = 0; j < i && r; j++)
        if (m->tests[j].reference && strcmp(m->tests[j].reference, r) == 0)
            return false;
    return r != NULL;
}

char *nopi_gen_glue(const nopi_gen_info *info)
{
    const nop_manifest *m = info->m;
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, "/* generated by neuronop " NOP_VERSION ": runtime trampolines, op call "
                 "shims and the library descriptor */\n#include <neuronop/abi.h>\n\n");
    add_trampolines(&sb);
    if (info->memcheck)
        add_bound_trampolines(&sb);
    for (int i = 0; i < m->nops; i++) {
        const nopi_op *op = &m->ops[i];
        char shim[32];
        snprintf(shim, sizeof shim, "nt__kernel%d", i);
        add_shim(&sb, op, op->kernel, info->fns ? &info->fns[i][0] : NULL, shim);
        snprintf(shim, sizeof shim, "nt__shape%d", i);
        add_shim(&sb, op, op->shape, info->fns ? &info->fns[i][1] : NULL, shim);
        nopi_sb_printf(&sb, "static const int nt__args%d[] = { ", i);
        for (int k = 0; k < op->nargs; k++)
            nopi_sb_printf(&sb, "%d, ", (int)op->args[k]);
        nopi_sb_puts(&sb, "-1 };\n\n");
    }
    nopi_sb_puts(&sb, "static const nt__op_desc nt__ops[] = {\n");
    for (int i = 0; i < m->nops; i++) {
        const nopi_op *op = &m->ops[i];
        nopi_sb_puts(&sb, "    { ");
        nopi_sb_c_string(&sb, op->name);
        nopi_sb_puts(&sb, ", ");
        nopi_sb_c_string(&sb, op->kernel);
        nopi_sb_puts(&sb, ", ");
        nopi_sb_c_string(&sb, op->shape);
        nopi_sb_printf(&sb, ", %d, nt__args%d, nt__kernel%d, nt__shape%d },\n", op->nargs, i,
                       i, i);
    }
    nopi_sb_puts(&sb, "};\n\n");
    /* reference functions, once each, with their op's shim shape */
    int nrefs = 0;
    for (int i = 0; i < m->ntests; i++) {
        if (!first_use_of_reference(m, i))
            continue;
        const char *r = m->tests[i].reference;
        char shim[32];
        snprintf(shim, sizeof shim, "nt__ref%d", i);
        add_shim(&sb, &m->ops[m->tests[i].op], r, info->refs ? &info->refs[i] : NULL, shim);
        nrefs++;
    }
    nopi_sb_puts(&sb, "static const nt__ref_desc nt__refs[] = {\n");
    for (int i = 0; i < m->ntests; i++) {
        if (!first_use_of_reference(m, i))
            continue;
        const char *r = m->tests[i].reference;
        nopi_sb_puts(&sb, "    { ");
        nopi_sb_c_string(&sb, r);
        nopi_sb_printf(&sb, ", %d, nt__ref%d },\n", m->tests[i].op, i);
    }
    nopi_sb_puts(&sb, "    { 0, 0, 0 }\n};\n\nstatic const char *const nt__cflags[] = { ");
    for (int i = 0; i < m->nflags; i++) {
        nopi_sb_c_string(&sb, m->flags[i].text);
        nopi_sb_puts(&sb, ", ");
    }
    nopi_sb_puts(&sb, "0 };\n\nstatic const nt__source_desc nt__sources[] = {\n");
    for (int i = 0; i < info->nsources; i++) {
        nopi_sb_puts(&sb, "    { ");
        nopi_sb_c_string(&sb, info->sources[i].path);
        static const char *const roles[] = { "compute", "shape", "reference" };
        nopi_sb_printf(&sb, ", \"%s\", \"%s\" },\n", roles[info->sources[i].role],
                       info->sources[i].hash);
    }
    nopi_sb_puts(&sb, "};\n\nconst nt__lib_desc neuronop_library = {\n"
                 "    NT_LIB_MAGIC, NT_ABI_VERSION, \"" NOP_VERSION "\", ");
    nopi_sb_c_string(&sb, m->name);
    nopi_sb_printf(&sb, ",\n    %d, %d, %lld, \"%s\",\n", m->multicore ? 1 : 0,
                   info->memcheck ? 1 : 0, (long long)m->stack_size,
                   stack_from_names[m->stack_from]);
    nopi_sb_printf(&sb, "    %d, nt__cflags, %d, nt__sources, %d, nt__ops, &nt__api, \"%s\",\n"
                   "    %d, nt__refs, ", m->nflags, info->nsources, m->nops,
                   info->build_key, nrefs);
    if (info->ns)
        nopi_sb_c_string(&sb, info->ns);
    else
        nopi_sb_puts(&sb, "0");
    nopi_sb_puts(&sb, "\n};\n");
    if (info->argnames) {   /* optional: readers that find no such symbol go without */
        nopi_sb_puts(&sb, "\nconst char neuronop_argnames[] = ");
        nopi_sb_c_string(&sb, info->argnames);
        nopi_sb_puts(&sb, ";\n");
    }
    return nopi_sb_take(&sb);
}
