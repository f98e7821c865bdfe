/*
 * report.h - how neuronop prints diagnostics on stderr (the formats are an interface).
 *
 *   FILE:LINE:COL: error: message     a problem in an input file (manifest, source, profile)
 *   neuronop: OP: core N: error: msg  a problem on the device
 *   neuronop: error: message          anything else
 * `warning:` and `note:` likewise.  Detail lines follow, as they are.
 */
#ifndef NEURONOP_REPORT_H
#define NEURONOP_REPORT_H

#include <stdio.h>

#include "libneuronop.h"

#define REPORT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Prints one diagnostic. */
void report_diag(const nop_diag *d);
/* Prints a failed call's error and returns the exit status it maps to. */
int report_error(const nop_error *err);
/* A nop_diag_fn that prints warnings and notes as they come (ctx unused). */
void report_sink(void *ctx, const nop_diag *d);
/* "neuronop: error: ..." for problems found by the CLI itself; the message starts with its
 * own prefix when fmt begins with "neuronop" (command-qualified usage errors). */
void report_plain_error(const char *fmt, ...) REPORT_PRINTF(1, 2);
void report_warning(const char *fmt, ...) REPORT_PRINTF(1, 2);
/* "neuronop: WHAT: N errors, M warnings": what was reported so far, compute-sanitizer style. */
void report_summary(const char *what);
/* Writes s as a JSON string literal (quoted and escaped) to f. */
void print_json_string(FILE *f, const char *s);

/* Starts counting afresh (before the device runs, so build warnings are not counted). */
void report_reset_counts(void);

#endif /* NEURONOP_REPORT_H */
