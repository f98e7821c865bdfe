/* Unit tests of the check of a linked library (lib/build/linkcheck.c, nopi_check_linked) on
 * a library cc links here, edited the ways no wrapper's link gives as easily: the GOT slot
 * crti's _init calls through filled with an address of the library's own, the symbol
 * __do_global_dtors_aux calls defined by the library, a relocation onto the dynamic segment,
 * an interpreter, an executable stack, a search path, a needed library renamed, a
 * relocation of a symbol past the hash tables' count or onto a table the loader reads, a
 * table that ends outside its segment; and,
 * truncated or with bytes flipped, read without a crash (each image ends where an
 * inaccessible page begins). */
#include <elf.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "base/elfsyms.h"
#include "build/builder.h"

static const char source[] = "int neuronop_library;\n"
                             "const char neuronop_argnames[] = \"\";\n"
                             "float twice(float x) { return 2 * x; }\n";

/* The library cc links from source (with libm needed, as neuronop's link has), read into a
 * malloc'd buffer. */
static char *linked(size_t *len)
{
    const char *dir = unit_tmpdir();
    unit_write(dir, "lib.c", source);
    unit_write(dir, "v.map", "{ global: neuronop_library; neuronop_argnames; local: *; };\n");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -Wl,-Bsymbolic -Wl,--version-script=%s/v.map"
             " -o %s/lib.so %s/lib.c -Wl,--no-as-needed -lm", dir, dir, dir);
    int status = system(cmd);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snprintf(cmd, sizeof cmd, "%s/lib.so", dir);
    char *data;
    assert_int_equal(nopi_read_file(cmd, &data, len), 0);
    unit_cleanup(dir);
    return data;
}

/* What nopi_check_linked says of data[0, len), copied to the end of an accessible mapping:
 * its return, and its message in msg. */
static int check(const char *data, size_t len, unsigned how, char *msg, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t span = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
    char *map = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + span, (size_t)page, PROT_NONE), 0);
    memcpy(map + span - len, data, len);
    nop_error err;
    memset(&err, 0, sizeof err);
    builder b;
    memset(&b, 0, sizeof b);
    b.err = &err;
    b.lib_path = "lib.so";
    int rc = nopi_check_linked(&b, map + span - len, len, how);
    munmap(map, span + (size_t)page);
    snprintf(msg, size, "%s", err.diag.msg);
    return rc;
}

/* The file offset of address vaddr of the library. */
static size_t file_off(const nopi_elf_image *im, uint64_t vaddr)
{
    int i = nopi_elf_image_segment(im, vaddr, 1);
    assert_true(i >= 0);
    return (size_t)(im->load[i].offset + (vaddr - im->load[i].vaddr));
}

/* The file offset of the first dynamic entry with tag `tag`. */
static size_t dyn_off(const nopi_elf_image *im, int64_t tag)
{
    for (size_t i = 0; i < im->ndyn; i++)
        if (im->dyn[i].tag == tag)
            return file_off(im, im->dyn_vaddr + i * sizeof(Elf64_Dyn));
    fail_msg("no dynamic tag %lld", (long long)tag);
    return 0;
}

/* The file offset of the RELA relocation of symbol `name`. */
static size_t rela_of(const nopi_elf_image *im, const char *name)
{
    uint64_t rela, size;
    assert_int_equal(nopi_elf_image_tag(im, DT_RELA, &rela), 1);
    assert_int_equal(nopi_elf_image_tag(im, DT_RELASZ, &size), 1);
    for (uint64_t k = 0; k < size; k += sizeof(Elf64_Rela)) {
        Elf64_Rela r;
        Elf64_Sym s;
        const char *n;
        assert_true(nopi_elf_image_read(im, rela + k, &r, sizeof r));
        if (ELF64_R_SYM(r.r_info) && nopi_elf_image_sym(im, ELF64_R_SYM(r.r_info), &s, &n) &&
            strcmp(n, name) == 0)
            return file_off(im, rela + k);
    }
    fail_msg("no relocation of %s", name);
    return 0;
}

/* Makes the first program header of type `type` one of type `to`, with flags `add` too. */
static void edit_phdr(char *image, uint32_t type, uint32_t to, uint32_t add)
{
    Elf64_Ehdr eh;
    memcpy(&eh, image, sizeof eh);
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, image + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type == type) {
            ph.p_type = to;
            ph.p_flags |= add;
            memcpy(image + eh.e_phoff + i * sizeof ph, &ph, sizeof ph);
            return;
        }
    }
    fail_msg("no program header of type %u", type);
}

static const char *prefix = "the library linked for 'lib.so' has code that runs when it loads "
                            "or unloads, which no source showed: ";

/* Asserts that the check refuses data with message prefix + what. */
static void refused(const char *data, size_t len, unsigned how, const char *what)
{
    char msg[1024], want[1024];
    assert_int_equal(check(data, len, how, msg, sizeof msg), -1);
    snprintf(want, sizeof want, "%s%s", prefix, what);
    assert_string_equal(msg, want);
}

static void the_toolchains_library_passes(void **state)
{
    size_t len;
    char *data = linked(&len), msg[1024];
    assert_int_equal(check(data, len, NOPI_LINKED_EXPORTS, msg, sizeof msg), 0);
    free(data);
}

/* crti's _init calls what the GOT slot of __gmon_start__ holds: filled with an address of
 * the library's own (a RELATIVE relocation), its bytes are crti's yet it runs that. */
static void a_got_slot_of_the_librarys_own_is_refused(void **state)
{
    size_t len;
    char *data = linked(&len);
    nopi_elf_image im;
    assert_null(nopi_elf_image_open(data, len, &im));
    uint64_t init;
    assert_int_equal(nopi_elf_image_tag(&im, DT_INIT, &init), 1);
    size_t at = rela_of(&im, "__gmon_start__");
    Elf64_Rela r;
    memcpy(&r, data + at, sizeof r);
    r.r_info = ELF64_R_INFO(0, R_X86_64_RELATIVE);
    r.r_addend = (int64_t)init;
    memcpy(data + at, &r, sizeof r);
    refused(data, len, NOPI_LINKED_EXPORTS, "an init function (DT_INIT) other than crti's _init");
    free(data);
}

/* __do_global_dtors_aux calls __cxa_finalize through its GOT slot: defined by the library,
 * the loader would bind the slot to that definition (the exports' rule is off here).  The
 * init array's entry is refused first: its check covers crtbeginS's whole code. */
static void a_hook_the_library_defines_is_refused(void **state)
{
    size_t len;
    char *data = linked(&len);
    nopi_elf_image im;
    assert_null(nopi_elf_image_open(data, len, &im));
    Elf64_Rela r;
    memcpy(&r, data + rela_of(&im, "__cxa_finalize"), sizeof r);
    uint64_t symtab;
    assert_int_equal(nopi_elf_image_tag(&im, DT_SYMTAB, &symtab), 1);
    size_t at = file_off(&im, symtab + ELF64_R_SYM(r.r_info) * sizeof(Elf64_Sym));
    Elf64_Sym s;
    memcpy(&s, data + at, sizeof s);
    s.st_shndx = 1;
    memcpy(data + at, &s, sizeof s);
    refused(data, len, 0, "an entry in its init array other than crtbegin's frame_dummy");
    free(data);
}

static void what_the_loader_reads_otherwise_is_refused(void **state)
{
    size_t len;
    char *data = linked(&len), *copy = malloc(len);
    assert_non_null(copy);
    nopi_elf_image im;
    assert_null(nopi_elf_image_open(data, len, &im));
    char what[128];

    /* a relocation that writes the dynamic segment (the loader reads DT_INIT after) */
    memcpy(copy, data, len);
    uint64_t rela;
    nopi_elf_image_tag(&im, DT_RELA, &rela);
    Elf64_Rela r;
    memcpy(&r, copy + file_off(&im, rela), sizeof r);
    r.r_offset = im.dyn_vaddr + 8;
    memcpy(copy + file_off(&im, rela), &r, sizeof r);
    snprintf(what, sizeof what, "a relocation at 0x%llx, outside its writable data",
             (unsigned long long)r.r_offset);
    refused(copy, len, NOPI_LINKED_EXPORTS, what);

    /* DT_SYMBOLIC made a search path */
    memcpy(copy, data, len);
    Elf64_Sxword tag = DT_RUNPATH;
    memcpy(copy + dyn_off(&im, DT_SYMBOLIC), &tag, sizeof tag);
    refused(copy, len, NOPI_LINKED_EXPORTS, "a library search path (DT_RUNPATH)");

    /* the needed libm renamed */
    memcpy(copy, data, len);
    uint64_t needed = 0, strtab;
    for (size_t i = 0; i < im.ndyn; i++)
        if (im.dyn[i].tag == DT_NEEDED && strcmp(nopi_elf_image_string(&im, im.dyn[i].val),
                                                 "libm.so.6") == 0)
            needed = im.dyn[i].val;
    nopi_elf_image_tag(&im, DT_STRTAB, &strtab);
    assert_string_equal(nopi_elf_image_string(&im, needed), "libm.so.6");
    copy[file_off(&im, strtab + needed) + 3] = 'q';
    refused(copy, len, NOPI_LINKED_EXPORTS, "a needed library 'libq.so.6' (DT_NEEDED), which "
                                            "is not the toolchain's");

    /* a note segment made an interpreter */
    memcpy(copy, data, len);
    edit_phdr(copy, PT_NOTE, PT_INTERP, 0);
    refused(copy, len, NOPI_LINKED_EXPORTS, "an interpreter (PT_INTERP)");

    /* an executable stack, which dlopen would give every thread of the worker */
    memcpy(copy, data, len);
    edit_phdr(copy, PT_GNU_STACK, PT_GNU_STACK, PF_X);
    refused(copy, len, NOPI_LINKED_EXPORTS, "an executable stack (PT_GNU_STACK)");
    free(copy);
    free(data);
}

/* Truncated anywhere, or with bytes flipped anywhere, the library is read without a crash
 * (the mapping's guard page makes any read past its end one); truncated in what the loader
 * maps, it is refused (past that, only section headers and the symbol table are cut). */
static void a_damaged_library_is_read_safely(void **state)
{
    size_t len, mapped = 0;
    char *data = linked(&len), msg[1024];
    nopi_elf_image im;
    assert_null(nopi_elf_image_open(data, len, &im));
    for (int i = 0; i < im.nload; i++)
        if (im.load[i].offset + im.load[i].filesz > mapped)
            mapped = (size_t)(im.load[i].offset + im.load[i].filesz);
    for (size_t n = 0; n < len; n += 1 + n / 64) {
        int rc = check(data, n, NOPI_LINKED_EXPORTS, msg, sizeof msg);
        if (n < mapped)
            assert_int_equal(rc, -1);
    }
    char *copy = malloc(len);
    assert_non_null(copy);
    unsigned seed = 12345;
    for (int round = 0; round < 2000; round++) {
        memcpy(copy, data, len);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % (round % 2 ? len : 64 + 16 * 56);   /* headers, often */
            seed = seed * 1103515245u + 12345u;
            copy[at] = (char)(seed >> 16);
        }
        check(copy, len, NOPI_LINKED_EXPORTS, msg, sizeof msg);
    }
    free(copy);
    free(data);
}

/* Makes the RELA relocation of symbol `name` an R_X86_64_64 of symbol `sym` at `to`. */
static void retarget(char *image, const nopi_elf_image *im, const char *name, uint64_t to,
                     uint32_t sym)
{
    size_t at = rela_of(im, name);
    Elf64_Rela r;
    memcpy(&r, image + at, sizeof r);
    r.r_offset = to;
    r.r_info = ELF64_R_INFO(sym, R_X86_64_64);
    memcpy(image + at, &r, sizeof r);
}

/* The loader reads a relocation's symbol from memory when it applies it, after the
 * relocations before it, which may have rewritten it: a symbol past the hash tables' count
 * (which no check reads), a relocation onto a table the loader reads (.dynsym, .gnu.hash,
 * .gnu.version: with text relocations allowed, the loader makes them writable as it
 * relocates), and a table whose end lies past its segment are refused. */
static void what_a_relocation_could_forge_is_refused(void **state)
{
    size_t len;
    char *data = linked(&len), *copy = malloc(len);
    assert_non_null(copy);
    nopi_elf_image im;
    assert_null(nopi_elf_image_open(data, len, &im));
    long nsyms = nopi_elf_image_nsyms(&im);
    assert_true(nsyms > 1);
    char what[256];

    memcpy(copy, data, len);
    Elf64_Rela r;
    size_t at = rela_of(&im, "__gmon_start__");
    memcpy(&r, copy + at, sizeof r);
    r.r_info = ELF64_R_INFO((uint64_t)nsyms, ELF64_R_TYPE(r.r_info));
    memcpy(copy + at, &r, sizeof r);
    snprintf(what, sizeof what, "a relocation of dynamic symbol %ld, past the %ld its hash "
             "tables reach", nsyms, nsyms);
    refused(copy, len, NOPI_LINKED_EXPORTS, what);
    refused(copy, len, NOPI_LINKED_TEXTREL, what);

    /* each table's last 8 bytes, by the extent the format gives it */
    uint64_t symtab, gnu, versym;
    assert_int_equal(nopi_elf_image_tag(&im, DT_SYMTAB, &symtab), 1);
    assert_int_equal(nopi_elf_image_tag(&im, DT_GNU_HASH, &gnu), 1);
    assert_int_equal(nopi_elf_image_tag(&im, DT_VERSYM, &versym), 1);
    uint32_t h[4];
    assert_true(nopi_elf_image_read(&im, gnu, h, sizeof h));
    assert_true((uint64_t)nsyms > h[1]);
    const struct { int64_t tag; uint64_t end; } tables[] = {
        { DT_SYMTAB, symtab + (uint64_t)nsyms * sizeof(Elf64_Sym) },
        { DT_GNU_HASH, gnu + 16 + 8 * (uint64_t)h[2] + 4 * (uint64_t)h[0] +
                       4 * ((uint64_t)nsyms - h[1]) },
        { DT_VERSYM, versym + 2 * (uint64_t)nsyms },
    };
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        for (unsigned how = 0; how <= NOPI_LINKED_TEXTREL; how += NOPI_LINKED_TEXTREL) {
            memcpy(copy, data, len);
            retarget(copy, &im, "__cxa_finalize", tables[i].end - 8, 0);
            snprintf(what, sizeof what, "a relocation at 0x%llx, onto a table the loader "
                     "reads (tag 0x%llx)", (unsigned long long)(tables[i].end - 8),
                     (unsigned long long)tables[i].tag);
            refused(copy, len, how, what);
        }

    /* .gnu.version moved so that it starts in its segment and ends past it */
    memcpy(copy, data, len);
    int seg = nopi_elf_image_segment(&im, versym, 1);
    assert_true(seg >= 0);
    uint64_t moved = im.load[seg].vaddr + im.load[seg].memsz - 2;
    Elf64_Dyn d = { DT_VERSYM, { moved } };
    memcpy(copy + dyn_off(&im, DT_VERSYM), &d, sizeof d);
    refused(copy, len, NOPI_LINKED_EXPORTS, "a table of its dynamic segment (tag 0x6ffffff0) "
                                            "in writable memory or outside it");

    /* .gnu.version_r's first entry's next one (vn_next, at 12) in writable data */
    memcpy(copy, data, len);
    uint64_t verneed;
    assert_int_equal(nopi_elf_image_tag(&im, DT_VERNEED, &verneed), 1);
    int rw = 0;
    while (rw < im.nload && !(im.load[rw].flags & PF_W))
        rw++;
    assert_true(rw < im.nload && im.load[rw].vaddr > verneed);
    uint32_t next = (uint32_t)(im.load[rw].vaddr - verneed);
    memcpy(copy + file_off(&im, verneed) + 12, &next, sizeof next);
    refused(copy, len, NOPI_LINKED_EXPORTS, "a table of its dynamic segment (tag 0x6ffffffe) "
                                            "in writable memory or outside it");
    free(copy);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_toolchains_library_passes),
        cmocka_unit_test(a_got_slot_of_the_librarys_own_is_refused),
        cmocka_unit_test(a_hook_the_library_defines_is_refused),
        cmocka_unit_test(what_the_loader_reads_otherwise_is_refused),
        cmocka_unit_test(a_damaged_library_is_read_safely),
        cmocka_unit_test(what_a_relocation_could_forge_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
