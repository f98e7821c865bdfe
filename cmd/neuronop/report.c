/*
 * report.c - prints diagnostics in neuronop's formats (see report.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *severity_name(enum nop_severity s)
{
    return s == NOP_SEV_ERROR ? "error" : s == NOP_SEV_WARNING ? "warning" : "note";
}

static int errors, warnings;   /* what this process reported, for report_summary */

void report_reset_counts(void)
{
    errors = warnings = 0;
}

void report_summary(const char *what)
{
    report_release();
    fprintf(stderr, "neuronop: %s: %d error%s, %d warning%s\n", what, errors,
            errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
}

static char first_error[1024];   /* report_first_error's */

const char *report_first_error(void)
{
    return first_error;
}

/* Keeps line as the first error, unless there is one (cut at a character's end to fit). */
static void keep_first_error(const char *line)
{
    if (first_error[0])
        return;
    int n = utf8_prefix(line, strlen(line), (int)sizeof first_error - 1);
    memcpy(first_error, line, (size_t)n);
    first_error[n] = '\0';
}

int report_format(const nop_diag *d, const char *where, char *buf, size_t size)
{
    if (d->file[0] && d->line > 0 && d->col > 0)
        return snprintf(buf, size, "%s:%d:%d: %s: %s", d->file, d->line, d->col,
                        severity_name(d->severity), d->msg);
    if (d->file[0] && d->line > 0)
        return snprintf(buf, size, "%s:%d: %s: %s", d->file, d->line,
                        severity_name(d->severity), d->msg);
    if (d->file[0])
        return snprintf(buf, size, "%s: %s: %s", d->file, severity_name(d->severity), d->msg);
    if (where[0])
        return snprintf(buf, size, "neuronop: %s: %s: %s", where, severity_name(d->severity),
                        d->msg);
    return snprintf(buf, size, "neuronop: %s: %s", severity_name(d->severity), d->msg);
}

void report_print(const nop_diag *d, const char *where)
{
    char line[REPORT_LINE_MAX];
    report_format(d, where, line, sizeof line);
    fprintf(stderr, "%s\n", line);
    if (d->severity == NOP_SEV_ERROR)
        keep_first_error(line);
    if (d->detail[0])
        fprintf(stderr, "%s\n", d->detail);
}

void report_diag(const nop_diag *d)
{
    if (d->severity == NOP_SEV_ERROR)
        errors++;
    else if (d->severity == NOP_SEV_WARNING)
        warnings++;
    if (!report_held(d))
        report_print(d, d->where);
}

int exit_status_of(enum nop_errkind k)
{
    static const enum exit_status status[] = {
        [NOP_ERR_NONE] = STATUS_FAIL,       /* a failure that did not say: not a success */
        [NOP_ERR_NOMEM] = STATUS_INTERNAL,
        [NOP_ERR_INPUT] = STATUS_USAGE,
        [NOP_ERR_COMPILE] = STATUS_COMPILE,
        [NOP_ERR_DEVICE] = STATUS_FAIL,
        [NOP_ERR_TEST] = STATUS_FAIL,
    };
    return (unsigned)k < sizeof status / sizeof status[0] ? (int)status[k] : STATUS_FAIL;
}

int report_error(const nop_error *err)
{
    report_diag(&err->diag);
    return exit_status_of(err->kind);
}

int report_nomem(void)
{
    report_plain_error("out of memory");
    return STATUS_INTERNAL;
}

void report_sink(void *ctx, const nop_diag *d)
{
    (void)ctx;
    report_diag(d);
}

static void vreport(const char *severity, const char *fmt, va_list ap)
{
    report_release();
    if (strcmp(severity, "error") == 0)
        errors++;
    else if (strcmp(severity, "warning") == 0)
        warnings++;
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* "neuronop build: unknown option" keeps its command name in front of the severity */
    const char *colon = strncmp(msg, "neuronop", 8) == 0 ? strchr(msg, ':') : NULL;
    char line[sizeof msg + 64];
    if (colon)
        snprintf(line, sizeof line, "%.*s: %s:%s", (int)(colon - msg), msg, severity, colon + 1);
    else
        snprintf(line, sizeof line, "neuronop: %s: %s", severity, msg);
    fprintf(stderr, "%s\n", line);
    if (strcmp(severity, "error") == 0)
        keep_first_error(line);
}

void report_plain_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
}

void report_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning", fmt, ap);
    va_end(ap);
}

void report_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("note", fmt, ap);
    va_end(ap);
}

static int first_stdout_errno;   /* flush_stdout's */

void flush_stdout(void)
{
    errno = 0;
    if (fflush(stdout) != 0 && !first_stdout_errno)
        first_stdout_errno = errno;
}

int stdout_errno(void)
{
    return first_stdout_errno;
}

int utf8_prefix(const char *s, size_t len, int max)
{
    if (len <= (size_t)max)
        return (int)len;
    len = (size_t)max;
    while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
        len--;   /* s[len], a continuation byte, would begin the part cut off */
    return (int)len;
}

void print_json_core_counters(const nop_core_report *c)
{
    printf(", \"failed\": %s, \"stack_high_water\": %zu, \"std_elems\": %lld, "
           "\"stream_elems\": %lld, \"stream_slow_elems\": %lld, \"tcm_bytes\": %lld, "
           "\"tcm_transfers\": %lld, \"streams_opened\": %lld, \"tensorlib_calls\": %lld, "
           "\"tensorlib_elems\": %lld, \"printf_calls\": %lld, \"tcm_peak\": %lld",
           c->failed ? "true" : "false", c->stack_high_water, (long long)c->counters.std_elems,
           (long long)c->counters.stream_elems, (long long)c->counters.stream_slow_elems,
           (long long)c->counters.tcm_bytes, (long long)c->counters.tcm_transfers,
           (long long)c->counters.streams_opened, (long long)c->counters.tensorlib_calls,
           (long long)c->counters.tensorlib_elems, (long long)c->counters.printf_calls,
           (long long)c->counters.tcm_peak);
}

/* The length of the UTF-8 character at s (1 to 4), or 0 when its bytes are none (a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short). */
static int utf8_length(const unsigned char *s)
{
    unsigned char c = s[0];
    int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
            : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80,
                  hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    for (int i = 1; i < n; i++)
        if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
            return 0;
    return n;
}

void print_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        int n = utf8_length((const unsigned char *)s);
        if (n == 0)   /* no JSON reader takes it: kernel printf text in this process, say
                       * (a reviewer's find: with the sandbox off it came through raw) */
            fputs("\\ufffd", f);
        else if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n ? n : 1;
    }
    fputc('"', f);
}
