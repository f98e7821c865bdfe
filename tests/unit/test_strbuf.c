/* Unit tests of the string buffer and its C and JSON quoting (lib/base/strbuf.c), and of
 * making text plain: a worker's, and every error record (lib/base/error.c). */
#include "unit.h"
#include "base/internal.h"

static void appends_and_formats(void **state)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_puts(&sb, "a");
    nopi_sb_printf(&sb, "%d-%s", 42, "x");
    for (int i = 0; i < 1000; i++)
        nopi_sb_puts(&sb, "y");
    assert_int_equal(sb.len, 1005);
    assert_memory_equal(sb.s, "a42-xy", 6);
    char *s = nopi_sb_take(&sb);
    assert_null(sb.s);
    assert_int_equal(strlen(s), 1005);
    free(s);
}

static void quotes_c_strings(void **state)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_c_string(&sb, "a\"b\\c\nd?\?=e\x01");
    assert_string_equal(sb.s, "\"a\\\"b\\\\c\\nd?\"\"?=e\\001\"");
    nopi_sb_free(&sb);
}

static void cleans_text(void **state)
{
    /* UTF-8 of one to four bytes, newline and tab stay */
    char ok[] = "a\tb\n\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbd";
    char want_ok[sizeof ok];
    memcpy(want_ok, ok, sizeof ok);
    nopi_text_clean(ok);
    assert_string_equal(ok, want_ok);
    /* ESC, CR, DEL, a C1 control (U+009B, CSI), a stray continuation byte, 0xff, an overlong
     * '/', a surrogate, U+FFFE, past U+10FFFF and a character cut short: each byte a '?' */
    char bad[] = "\x1b[8m\r\x7f\xc2\x9b\x80\xff\xc0\xaf\xed\xa0\x80\xef\xbf\xbe"
                 "\xf4\x90\x80\x80\xe2\x82";
    nopi_text_clean(bad);
    assert_string_equal(bad, "?[8m????????????????????");
    /* bidirectional controls: U+202E (right-to-left override), U+2066 (an isolate), U+200F;
     * U+2010 (a hyphen) beside them stays */
    char bidi[] = "a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\x8f" "d\xe2\x80\x90";
    nopi_text_clean(bidi);
    assert_string_equal(bidi, "a???b???c???d\xe2\x80\x90");
    /* the line and paragraph separators U+2028, U+2029 (left alone in stop 40), where some
     * log viewers break a line; U+2027 (a hyphenation point) beside them stays */
    char seps[] = "a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xe2\x80\xa7";
    nopi_text_clean(seps);
    assert_string_equal(seps, "a???b???c\xe2\x80\xa7");
    /* a CI runner's commands (a red team's find: GitHub's runner masked every later "FAIL"
     * and folded the log): "##[" anywhere, Azure's "##vso[", "::" first on a line after
     * blanks (U+00A0 and U+3000 among them, which the runner trims); "::" elsewhere stays */
    char ci[] = "x ##[add-mask]FAIL\n  ::group::y\n\xc2\xa0\xe3\x80\x80::error::z\n"
                "##vso[task.complete]\ntorch::add ::a";
    nopi_text_clean(ci);
    assert_string_equal(ci, "x #?[add-mask]FAIL\n  :?group::y\n\xc2\xa0\xe3\x80\x80:?error::z\n"
                            "#?vso[task.complete]\ntorch::add ::a");
}

static void quotes_json_strings(void **state)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    nopi_sb_json_string(&sb, "a\"b\\c\nd\x01");
    assert_string_equal(sb.s, "\"a\\\"b\\\\c\\nd\\u0001\"");
    nopi_sb_free(&sb);
}

static void take_of_empty_is_empty_string(void **state)
{
    nopi_strbuf sb = NOPI_STRBUF_INIT;
    char *s = nopi_sb_take(&sb);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
}

static void hashes_are_stable(void **state)
{
    char a[33], b[33], c[33];
    nopi_hash_hex("abc", 3, a);
    nopi_hasher *h = nopi_hasher_new();
    nopi_hasher_add(h, "a", 1);
    nopi_hasher_add(h, "bc", 2);
    nopi_hasher_hex(h, b);
    nopi_hasher_free(h);
    nopi_hash_hex("abd", 3, c);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_int_equal(strlen(a), 32);
}

/* Every error record the library fills is plain text (libneuronop.h), whatever a file name
 * or user code put in it: a message and its place one line, the detail with its lines */
static void error_records_are_plain_text(void **state)
{
    nop_error err = { 0 };
    assert_int_equal(nopi_fail(&err, NOP_ERR_INPUT, "k\x1b[8m.c", 1, 2, "'%s'\r is bad",
                               "ops\x1b]0;x\x07"), -1);
    nopi_detail(&err, "first\tline\nsecond \x1b[2K line");
    assert_string_equal(err.diag.file, "k?[8m.c");
    assert_string_equal(err.diag.msg, "'ops?]0;x?'? is bad");
    assert_string_equal(err.diag.detail, "first\tline\nsecond ?[2K line");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(appends_and_formats),
        cmocka_unit_test(quotes_c_strings),
        cmocka_unit_test(quotes_json_strings),
        cmocka_unit_test(cleans_text),
        cmocka_unit_test(error_records_are_plain_text),
        cmocka_unit_test(take_of_empty_is_empty_string),
        cmocka_unit_test(hashes_are_stable),
    };
    return cmocka_run_group_tests_name("strbuf", tests, NULL, NULL);
}
