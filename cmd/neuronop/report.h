/*
 * report.h - how neuronop prints diagnostics on stderr (the formats are an interface).
 *
 *   FILE:LINE:COL: error: message     a problem in an input file (manifest, source, profile)
 *   neuronop: OP: core N: error: msg  a problem on the device ("cores 0-3, 5" for one
 *                                     message from several cores: report_hold)
 *   neuronop: error: message          anything else
 * `warning:` and `note:` likewise.  Detail lines follow, as they are.
 */
#ifndef NEURONOP_REPORT_H
#define NEURONOP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "libneuronop.h"

#define REPORT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* The exit statuses of neuronop (the table in neuronop(1)). */
enum exit_status {
    STATUS_OK = 0,        /* success */
    STATUS_FAIL = 1,      /* the op or a test failed: device rule, crash, timeout, mismatch */
    STATUS_USAGE = 2,     /* usage, manifest or input error */
    STATUS_COMPILE = 3,   /* the user's sources did not compile or link */
    STATUS_INTERNAL = 4,  /* neuronop itself could not go on: out of memory */
};

/* The exit status for an error of kind k: the one place errors become statuses. */
int exit_status_of(enum nop_errkind k);

/* The first error this process printed, as it was printed ("relu.c:3:1: error: ...", its
 * first line), or "" when none was. */
const char *report_first_error(void);
/* Prints one diagnostic, or holds it while a run is held (report_hold). */
void report_diag(const nop_diag *d);
/* The most bytes of a diagnostic's first line (its place, severity and message). */
#define REPORT_LINE_MAX (sizeof ((nop_diag *)0)->file + sizeof ((nop_diag *)0)->where + \
                         sizeof ((nop_diag *)0)->msg + 64)
/* d's first line, naming where instead of d->where, into buf, as snprintf does. */
int report_format(const nop_diag *d, const char *where, char *buf, size_t size);
/* Prints d (its first line, naming where instead of d->where, then its detail). */
void report_print(const nop_diag *d, const char *where);

/* held.c: holds the device diagnostics that follow until report_release, which prints each
 * message once however many cores gave it ("neuronop: OP: cores 0-7: error: ..."), in the
 * order they first came; for a multicore library's run alone (multicore false: nothing is
 * held, nothing can merge).  Anything else printed on stderr through this file releases
 * them first, and so does neuronop's end by SIGTERM, SIGINT or SIGHUP (a CI job's time
 * limit) while they are held. */
void report_hold(bool multicore);
void report_release(void);
/* held.c: true when d was held (report_diag's), false when it is to be printed now. */
bool report_held(const nop_diag *d);
/* Prints a failed call's error and returns the exit status it maps to. */
int report_error(const nop_error *err);
/* Prints "neuronop: error: out of memory" and returns STATUS_INTERNAL. */
int report_nomem(void);
/* A nop_diag_fn that prints warnings and notes as they come (ctx unused). */
void report_sink(void *ctx, const nop_diag *d);
/* "neuronop: error: ..." for problems found by the CLI itself; the message starts with its
 * own prefix when fmt begins with "neuronop" (command-qualified usage errors). */
void report_plain_error(const char *fmt, ...) REPORT_PRINTF(1, 2);
void report_warning(const char *fmt, ...) REPORT_PRINTF(1, 2);
/* "neuronop: note: ...", counted as neither. */
void report_note(const char *fmt, ...) REPORT_PRINTF(1, 2);
/* "neuronop: WHAT: N errors, M warnings": what was reported so far, compute-sanitizer style. */
void report_summary(const char *what);
/* How many of the first len bytes of s, UTF-8 (the library's messages are plain text), fit
 * in max bytes without cutting a character in two: for "%.*s" into a bounded buffer. */
int utf8_prefix(const char *s, size_t len, int max);
/* Flushes standard output, keeping the reason of its first failure for stdout_errno: the
 * error flag stays set, but a later flush of an empty buffer says nothing of why. */
void flush_stdout(void);
/* errno of standard output's first failed flush (flush_stdout), or 0. */
int stdout_errno(void);
/* Writes s as a JSON string literal (quoted and escaped) to f. */
void print_json_string(FILE *f, const char *s);
/* Writes a core's figures as JSON members to stdout, each after ", ": whether it failed,
 * its stack's high-water mark, and its counters (neuronop-run(1) --json); run's and bench's
 * per-core objects share them. */
void print_json_core_counters(const nop_core_report *c);

/* Starts counting afresh (before the device runs, so build warnings are not counted). */
void report_reset_counts(void);

#endif /* NEURONOP_REPORT_H */
