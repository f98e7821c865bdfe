/*
 * junit.h - test results as JUnit XML, the Ant/Jenkins structure CI dashboards read
 * (`neuronop test --junit FILE`).
 */
#ifndef NEURONOP_JUNIT_H
#define NEURONOP_JUNIT_H

#include "libneuronop.h"

/* Writes the n results of library's suite (sum: their counts; seconds: the whole run) to
 * path as nop_write_file does: whole or not at all, a device or FIFO in place.
 * Prints any error; returns 0 or the exit status to return. */
int write_junit(const char *path, const char *library, const nop_test_result *cases, int n,
                const nop_test_summary *sum, double seconds);
/* For a run that stopped before any case (a usage, manifest or compile error, exit status
 * status): a report of one errored case saying so, so that a dashboard never shows an
 * earlier run's file as this one's.  Prints any error of its own. */
void write_junit_error(const char *path, const char *library, int status);

#endif /* NEURONOP_JUNIT_H */
