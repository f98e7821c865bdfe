/* Unit tests of reading the objects compilers write (lib/base/elfsyms.c), on the fuzz
 * target's seeds (tests/fuzz/corpus/object: real gcc and g++ objects) and on what the
 * fuzzer and a review found, made from them. */
#include <elf.h>

#include "unit.h"
#include "base/elfsyms.h"
#include "base/internal.h"

/* Reads a seed object of the tree. */
static char *seed(const char *name, size_t *len)
{
    const char *src = getenv("NEURONOP_SRC");   /* make check runs us from tests/e2e */
    char path[600];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/object/%s", src ? src : ".", name);
    char *data;
    assert_int_equal(nopi_read_file(path, &data, len), 0);
    return data;
}

/* Re-encodes an object's section count and name table index as one of SHN_LORESERVE
 * (0xff00) sections or more has them, which is how gcc writes a source with that many
 * sections (a section attribute each, or -ffunction-sections): e_shnum 0 and e_shstrndx
 * SHN_XINDEX, the numbers in section 0's sh_size and sh_link (the gABI's extended section
 * numbering).  The image is otherwise the same. */
static void extended_numbering(char *data)
{
    Elf64_Ehdr eh;
    Elf64_Shdr zero;
    memcpy(&eh, data, sizeof eh);
    memcpy(&zero, data + eh.e_shoff, sizeof zero);
    assert_true(eh.e_shnum > 0 && zero.sh_size == 0 && zero.sh_link == 0);
    zero.sh_size = eh.e_shnum;
    zero.sh_link = eh.e_shstrndx;
    eh.e_shnum = 0;
    eh.e_shstrndx = SHN_XINDEX;
    memcpy(data, &eh, sizeof eh);
    memcpy(data + eh.e_shoff, &zero, sizeof zero);
}

/* An object of 65280 sections or more was read as one of none: its constructor, its
 * destructor and every symbol it needs (a kernel's call of fopen) went unseen, and a build
 * linked it.  (gcc -c of a source with 66000 section attributes and a constructor makes one:
 * e_shnum 0, "Number of section headers: 0 (66016)" in readelf -h.) */
static void extended_section_numbering_is_read(void **state)
{
    size_t len;
    char *data = seed("gcc-ctor.o", &len);   /* up(): a constructor, down(): a destructor */
    extended_numbering(data);
    char name[64] = "";
    assert_true(nopi_elf_runs_at_load(data, len));
    assert_int_equal(nopi_elf_load_function(data, len, name, sizeof name), 0);
    assert_string_equal(name, "up");
    size_t off, size;
    assert_int_equal(nopi_elf_section(data, len, ".init_array", &off, &size, NULL), 0);
    assert_int_equal(size, 8);

    const char *dir = unit_tmpdir();
    unit_write_bytes(dir, "ctor.o", data, len);
    char path[300];
    snprintf(path, sizeof path, "%s/ctor.o", dir);
    nopi_elfsym *syms;
    size_t n;
    nop_error err;
    assert_int_equal(nopi_elfsyms_read(path, &syms, &n, &err), 0);
    bool start = false, stop = false;   /* what up() and down() call */
    for (size_t i = 0; i < n; i++) {
        start |= strcmp(syms[i].name, "start") == 0 && !syms[i].defined;
        stop |= strcmp(syms[i].name, "stop") == 0 && !syms[i].defined;
    }
    assert_true(start && stop);
    nopi_elfsyms_free(syms, n);
    unit_cleanup(dir);
    free(data);

    /* g++'s static initialiser, and a memcheck build's instrumentation constructor */
    data = seed("g++-asan-static_init.o", &len);
    extended_numbering(data);
    assert_true(nopi_elf_runs_at_load(data, len));
    assert_int_equal(nopi_elf_load_function(data, len, name, sizeof name), 0);
    assert_string_equal(name, "_GLOBAL__sub_I_table");
    assert_int_equal(nopi_elf_startup_object(data, len, name, sizeof name), 0);
    assert_string_equal(name, "table");
    assert_true(nopi_elf_disarm_section(data, len, ".init_array.00099", ".nopi.asan.ctor99"));
    assert_int_equal(nopi_elf_section(data, len, ".nopi.asan.ctor99", &off, &size, NULL), 0);
    free(data);

    data = seed("gcc-lto-ctor.o", &len);   /* gcc -flto */
    extended_numbering(data);
    assert_true(nopi_elf_has_lto(data, len));
    free(data);
}

/* gcc-ctor.o (up() in .text.startup, down() in .text.exit, each at offset 0, the init
 * array's relocation against .text.startup's section symbol) as an object of that many
 * sections has it: its section symbols and functions numbered SHN_XINDEX, their sections in
 * an SHT_SYMTAB_SHNDX section (added at the end, with the section headers moved after it),
 * and down listed before up.  *len grows. */
static char *numbered_through_shndx(size_t *len)
{
    char *data = seed("gcc-ctor.o", len);
    Elf64_Ehdr eh;
    memcpy(&eh, data, sizeof eh);
    size_t symtab = 0;
    Elf64_Shdr sh;
    for (size_t i = 0; i < eh.e_shnum; i++) {
        memcpy(&sh, data + eh.e_shoff + i * sizeof sh, sizeof sh);
        if (sh.sh_type == SHT_SYMTAB)
            symtab = i;
    }
    memcpy(&sh, data + eh.e_shoff + symtab * sizeof sh, sizeof sh);
    assert_int_equal(sh.sh_size / sizeof(Elf64_Sym), 8);
    Elf64_Sym syms[8];
    memcpy(syms, data + sh.sh_offset, sizeof syms);
    /* 2 .text.startup, 3 up, 4 .text.exit, 5 down: up and down change places */
    assert_int_equal(ELF64_ST_TYPE(syms[2].st_info), STT_SECTION);
    assert_int_equal(ELF64_ST_TYPE(syms[5].st_info), STT_FUNC);
    Elf64_Sym up = syms[3];
    syms[3] = syms[5];
    syms[5] = up;
    uint32_t shndx[8] = { 0 };
    for (int k = 2; k <= 5; k++) {
        shndx[k] = syms[k].st_shndx;
        syms[k].st_shndx = SHN_XINDEX;
    }
    memcpy(data + sh.sh_offset, syms, sizeof syms);

    size_t at = (*len + 7) & ~(size_t)7, headers = at + sizeof shndx;
    size_t grown = headers + (eh.e_shnum + 1u) * sizeof sh;
    char *out = calloc(1, grown);
    assert_non_null(out);
    memcpy(out, data, *len);
    memcpy(out + at, shndx, sizeof shndx);
    memcpy(out + headers, data + eh.e_shoff, eh.e_shnum * sizeof sh);
    Elf64_Shdr x = { .sh_type = SHT_SYMTAB_SHNDX, .sh_offset = at, .sh_size = sizeof shndx,
                     .sh_link = (uint32_t)symtab, .sh_addralign = 4, .sh_entsize = 4 };
    memcpy(out + headers + eh.e_shnum * sizeof sh, &x, sizeof x);
    eh.e_shoff = headers;
    eh.e_shnum++;
    memcpy(out, &eh, sizeof eh);
    free(data);
    *len = grown;
    return out;
}

/* The function an init array's relocation against a section symbol reaches is the one at
 * its addend in that section: of symbols numbered SHN_XINDEX, the section is in
 * SHT_SYMTAB_SHNDX.  Compared as SHN_XINDEX, any function at that offset in any such section
 * matched, and the first listed (down) was named. */
static void sections_past_shn_loreserve_are_told_apart(void **state)
{
    size_t len;
    char *data = numbered_through_shndx(&len);
    char name[64] = "";
    assert_true(nopi_elf_runs_at_load(data, len));
    assert_int_equal(nopi_elf_load_function(data, len, name, sizeof name), 0);
    assert_string_equal(name, "up");
    free(data);
}

/* A relocation of g++'s static initialiser with an addend near INT64_MAX overflowed a
 * signed sum while looking for the variable it reaches (undefined behaviour, UBSan's
 * "signed integer overflow"): it reaches none, and the variable named is the next one's. */
static void startup_addend_out_of_range(void **state)
{
    size_t len, off, size;
    char *data = seed("g++-static_init.o", &len);
    char name[64] = "";
    assert_int_equal(nopi_elf_startup_object(data, len, name, sizeof name), 0);
    assert_string_equal(name, "table");
    /* its .rela.text.startup: compute(), table, compute(), then .bss's section symbol plus 0
     * (_ZL6hidden, at .bss+4, less the field's 4 bytes) */
    assert_int_equal(nopi_elf_section(data, len, ".rela.text.startup", &off, &size, NULL), 0);
    assert_int_equal(size, 4 * sizeof(Elf64_Rela));
    Elf64_Rela first, bss;
    memcpy(&first, data + off, sizeof first);
    memcpy(&bss, data + off + 3 * sizeof bss, sizeof bss);
    static const int64_t addends[] = { INT64_MAX, INT64_MAX - 4, INT64_MAX - 7, INT64_MIN,
                                       INT64_MIN + 4, -9 };
    for (size_t i = 0; i < sizeof addends / sizeof addends[0]; i++) {
        first.r_info = bss.r_info;
        first.r_addend = addends[i];
        memcpy(data + off, &first, sizeof first);
        assert_int_equal(nopi_elf_startup_object(data, len, name, sizeof name), 0);
        assert_string_equal(name, "table");
    }
    /* and one in range reaches the variable: .bss+4 less the field's 4 bytes */
    first.r_addend = 0;
    memcpy(data + off, &first, sizeof first);
    assert_int_equal(nopi_elf_startup_object(data, len, name, sizeof name), 0);
    assert_string_equal(name, "_ZL6hidden");
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extended_section_numbering_is_read),
        cmocka_unit_test(sections_past_shn_loreserve_are_told_apart),
        cmocka_unit_test(startup_addend_out_of_range),
    };
    return cmocka_run_group_tests_name("elfsyms", tests, NULL, NULL);
}
