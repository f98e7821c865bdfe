/* Unit tests of the reader of a shared library as the loader maps it (lib/base/elfsyms.c,
 * nopi_elf_image_*): crafted images, truncated, with offsets past their end, a dynamic
 * segment that lies in no loadable one.  Each image ends where an inaccessible page begins,
 * so a read past its end is a crash, not a quiet pass. */
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unit.h"
#include "base/elfsyms.h"

enum { SIZE = 0x400, DYN = 0x200, STR = 0x300, RELA = 0x340 };

/* A small valid image: one PT_LOAD over the whole file, PT_DYNAMIC at DYN with DT_NEEDED
 * "libc.so.6", a string table at STR and two RELA relocations at RELA. */
static void craft(unsigned char *img)
{
    memset(img, 0, SIZE);
    Elf64_Ehdr eh = { .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                      .e_phoff = sizeof eh, .e_ehsize = sizeof eh,
                      .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2 };
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    memcpy(img, &eh, sizeof eh);
    Elf64_Phdr ph[2] = {
        { .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0, .p_vaddr = 0,
          .p_filesz = SIZE, .p_memsz = SIZE, .p_align = 4096 },
        { .p_type = PT_DYNAMIC, .p_flags = PF_R | PF_W, .p_offset = DYN, .p_vaddr = DYN,
          .p_filesz = 7 * sizeof(Elf64_Dyn), .p_memsz = 7 * sizeof(Elf64_Dyn) },
    };
    memcpy(img + sizeof eh, ph, sizeof ph);
    Elf64_Dyn d[] = { { DT_STRTAB, { STR } }, { DT_STRSZ, { 16 } }, { DT_NEEDED, { 1 } },
                      { DT_RELA, { RELA } }, { DT_RELASZ, { 2 * sizeof(Elf64_Rela) } },
                      { DT_RELAENT, { sizeof(Elf64_Rela) } }, { DT_NULL, { 0 } } };
    memcpy(img + DYN, d, sizeof d);
    memcpy(img + STR, "\0libc.so.6", 11);
    Elf64_Rela r[] = { { 0x380, ELF64_R_INFO(0, R_X86_64_RELATIVE), 0x123 },
                       { 0x388, ELF64_R_INFO(0, R_X86_64_NONE), 0 } };
    memcpy(img + RELA, r, sizeof r);
}

/* Two pages, the second inaccessible; the image of len bytes ends where it begins. */
static unsigned char *guarded(const unsigned char *img, size_t len, void **map)
{
    long page = sysconf(_SC_PAGESIZE);
    *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
    assert_true(*map != MAP_FAILED);
    assert_int_equal(mprotect((char *)*map + page, (size_t)page, PROT_NONE), 0);
    unsigned char *at = (unsigned char *)*map + page - len;
    memcpy(at, img, len);
    return at;
}

static void unguard(void *map)
{
    munmap(map, (size_t)sysconf(_SC_PAGESIZE) * 2);
}

/* What open says of img[0, len), in guarded memory. */
static const char *open_guarded(const unsigned char *img, size_t len, nopi_elf_image *im)
{
    void *map;
    const char *why = nopi_elf_image_open((const char *)guarded(img, len, &map), len, im);
    unguard(map);
    return why;
}

static void a_crafted_library_is_read(void **state)
{
    unsigned char img[SIZE];
    craft(img);
    void *map;
    const char *data = (const char *)guarded(img, SIZE, &map);
    nopi_elf_image im;
    assert_null(nopi_elf_image_open(data, SIZE, &im));
    uint64_t v;
    assert_int_equal(nopi_elf_image_tag(&im, DT_NEEDED, &v), 1);
    assert_string_equal(nopi_elf_image_string(&im, v), "libc.so.6");
    assert_null(nopi_elf_image_string(&im, 16));   /* past DT_STRSZ */
    nopi_elf_rel *rels;
    size_t n;
    assert_null(nopi_elf_image_relocs(&im, &rels, &n));
    assert_int_equal(n, 1);   /* R_X86_64_NONE is left out */
    assert_int_equal(rels[0].offset, 0x380);
    assert_int_equal(rels[0].addend, 0x123);
    free(rels);
    unguard(map);
}

static void a_truncated_image_is_refused_at_every_length(void **state)
{
    unsigned char img[SIZE];
    craft(img);
    nopi_elf_image im;
    for (size_t len = 0; len < SIZE; len++)
        assert_non_null(open_guarded(img, len, &im));
}

static void offsets_past_the_end_are_refused(void **state)
{
    unsigned char img[SIZE];
    nopi_elf_image im;
    Elf64_Phdr ph;
    size_t at = sizeof(Elf64_Ehdr);

    craft(img);   /* program headers past the end, and wrapping around */
    uint64_t far = UINT64_MAX - 8;
    memcpy(img + offsetof(Elf64_Ehdr, e_phoff), &far, sizeof far);
    assert_non_null(open_guarded(img, SIZE, &im));

    craft(img);   /* a loadable segment whose file bytes wrap around */
    memcpy(&ph, img + at, sizeof ph);
    ph.p_offset = UINT64_MAX - 0x10;
    memcpy(img + at, &ph, sizeof ph);
    assert_non_null(open_guarded(img, SIZE, &im));

    craft(img);   /* a segment larger in the file than the file */
    memcpy(&ph, img + at, sizeof ph);
    ph.p_filesz = ph.p_memsz = SIZE + 1;
    memcpy(img + at, &ph, sizeof ph);
    assert_non_null(open_guarded(img, SIZE, &im));

    craft(img);   /* relocations past the end of every segment, and a size that wraps */
    Elf64_Dyn d = { DT_RELASZ, { UINT64_MAX - 7 } };
    memcpy(img + DYN + 4 * sizeof d, &d, sizeof d);
    void *map;
    const char *data = (const char *)guarded(img, SIZE, &map);
    assert_null(nopi_elf_image_open(data, SIZE, &im));
    nopi_elf_rel *rels;
    size_t n;
    assert_non_null(nopi_elf_image_relocs(&im, &rels, &n));
    assert_null(rels);
    unguard(map);

    craft(img);   /* a string table that runs past the end: no NUL before it */
    d = (Elf64_Dyn){ DT_STRTAB, { SIZE - 4 } };
    memcpy(img + DYN, &d, sizeof d);
    memset(img + SIZE - 4, 'x', 4);
    data = (const char *)guarded(img, SIZE, &map);
    assert_null(nopi_elf_image_open(data, SIZE, &im));
    assert_null(nopi_elf_image_string(&im, 1));
    Elf64_Sym s;
    const char *name;
    assert_false(nopi_elf_image_sym(&im, 0, &s, &name));   /* no DT_SYMTAB */
    unguard(map);

    craft(img);   /* a string table in no segment's file bytes (in its zeroed tail, the bss) */
    memcpy(&ph, img + at, sizeof ph);
    ph.p_memsz = SIZE + 0x100;
    memcpy(img + at, &ph, sizeof ph);
    d = (Elf64_Dyn){ DT_STRTAB, { SIZE + 0x10 } };
    memcpy(img + DYN, &d, sizeof d);
    data = (const char *)guarded(img, SIZE, &map);
    assert_null(nopi_elf_image_open(data, SIZE, &im));
    assert_null(nopi_elf_image_string(&im, 1));
    unguard(map);
}

static void a_dynamic_segment_in_no_loadable_one_is_refused(void **state)
{
    unsigned char img[SIZE];
    nopi_elf_image im;
    Elf64_Phdr ph;
    size_t at = sizeof(Elf64_Ehdr) + sizeof ph;

    craft(img);   /* its address in no segment (its file offset still in the file) */
    memcpy(&ph, img + at, sizeof ph);
    ph.p_vaddr = 0x10000;
    memcpy(img + at, &ph, sizeof ph);
    assert_string_equal(open_guarded(img, SIZE, &im),
                        "a dynamic segment with no end (DT_NULL) in the library's memory");

    craft(img);   /* its entries run to the segment's end with no DT_NULL */
    for (size_t k = DYN; k + sizeof(Elf64_Dyn) <= SIZE; k += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d = { DT_DEBUG, { 0 } };
        memcpy(img + k, &d, sizeof d);
    }
    assert_non_null(open_guarded(img, SIZE, &im));

    craft(img);   /* none at all */
    memcpy(&ph, img + at, sizeof ph);
    ph.p_type = PT_NOTE;
    memcpy(img + at, &ph, sizeof ph);
    assert_string_equal(open_guarded(img, SIZE, &im), "no dynamic segment");
}

static void segments_the_loader_would_map_otherwise_are_refused(void **state)
{
    unsigned char img[SIZE];
    nopi_elf_image im;
    Elf64_Phdr ph;
    size_t at = sizeof(Elf64_Ehdr);

    craft(img);   /* offset and address in different places of a page */
    memcpy(&ph, img + at, sizeof ph);
    ph.p_vaddr = 8;
    memcpy(img + at, &ph, sizeof ph);
    assert_non_null(open_guarded(img, SIZE, &im));

    craft(img);   /* a second loadable segment in the first one's page */
    memcpy(&ph, img + at, sizeof ph);
    ph.p_filesz = ph.p_memsz = 0x100;
    memcpy(img + at + sizeof ph, &ph, sizeof ph);   /* in PT_DYNAMIC's place */
    assert_string_equal(open_guarded(img, SIZE, &im),
                        "loadable segments out of order or sharing a page");
}

static void relr_relocations_are_decoded(void **state)
{
    unsigned char img[SIZE];
    craft(img);
    /* RELR at 0x390: the address 0x380, then a bitmap of the 63 words after it: bits 1, 3 */
    uint64_t relr[] = { 0x380, 1u << 1 | 1u << 3 | 1 };
    memcpy(img + 0x390, relr, sizeof relr);
    Elf64_Dyn d[] = { { 36 /* DT_RELR */, { 0x390 } }, { 35 /* DT_RELRSZ */, { sizeof relr } },
                      { DT_NULL, { 0 } } };
    memcpy(img + DYN + 6 * sizeof(Elf64_Dyn), d, sizeof d);
    nopi_elf_image im;
    void *map;
    const char *data = (const char *)guarded(img, SIZE, &map);
    assert_null(nopi_elf_image_open(data, SIZE, &im));
    nopi_elf_rel *rels;
    size_t n;
    assert_null(nopi_elf_image_relocs(&im, &rels, &n));
    assert_int_equal(n, 4);   /* the RELA one, then 0x380, 0x388 (bit 1), 0x398 (bit 3) */
    assert_true(rels[1].relr && rels[1].offset == 0x380);
    assert_int_equal(rels[2].offset, 0x388);
    assert_int_equal(rels[3].offset, 0x398);
    assert_int_equal(rels[3].type, R_X86_64_RELATIVE);
    free(rels);
    unguard(map);
}

/* This program (a PIE, ET_DYN) read through its dynamic segment: as many symbols through its
 * GNU hash table as its .dynsym section has. */
static void a_real_library_is_read_as_its_sections_say(void **state)
{
    char *self;
    size_t len, off, size;
    assert_int_equal(nopi_read_file("/proc/self/exe", &self, &len), 0);
    nopi_elf_image im;
    if (nopi_elf_image_open(self, len, &im) != NULL) {   /* not built as a PIE */
        free(self);
        skip();
    }
    assert_int_equal(nopi_elf_section(self, len, ".dynsym", &off, &size, NULL), 0);
    assert_int_equal(nopi_elf_image_nsyms(&im), (long)(size / sizeof(Elf64_Sym)));
    nopi_elf_rel *rels;
    size_t n;
    assert_null(nopi_elf_image_relocs(&im, &rels, &n));
    assert_true(n > 0);
    free(rels);
    free(self);
}

/* DT_HASH's nchain is the symbol count: like GNU_HASH's, one past any linker's (1 << 24) is
 * refused, else a check would walk (or size a table by) four billion symbols. */
static void a_hash_table_of_too_many_symbols_is_refused(void **state)
{
    unsigned char img[SIZE];
    craft(img);
    Elf64_Dyn hash = { DT_HASH, { 0x3c0 } };   /* in place of DT_RELAENT */
    memcpy(img + DYN + 5 * sizeof hash, &hash, sizeof hash);
    const uint32_t counts[][2] = { { 1, 5 }, { 1, 1u << 24 }, { 1, (1u << 24) + 1 },
                                   { 1, UINT32_MAX } };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        memcpy(img + 0x3c0, counts[i], sizeof counts[i]);
        void *map;
        const char *data = (const char *)guarded(img, SIZE, &map);
        nopi_elf_image im;
        assert_null(nopi_elf_image_open(data, SIZE, &im));
        long want = counts[i][1] <= (1u << 24) ? (long)counts[i][1] : -1;
        assert_int_equal(nopi_elf_image_nsyms(&im), want);
        unguard(map);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_crafted_library_is_read),
        cmocka_unit_test(a_truncated_image_is_refused_at_every_length),
        cmocka_unit_test(offsets_past_the_end_are_refused),
        cmocka_unit_test(a_dynamic_segment_in_no_loadable_one_is_refused),
        cmocka_unit_test(segments_the_loader_would_map_otherwise_are_refused),
        cmocka_unit_test(relr_relocations_are_decoded),
        cmocka_unit_test(a_real_library_is_read_as_its_sections_say),
        cmocka_unit_test(a_hash_table_of_too_many_symbols_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
