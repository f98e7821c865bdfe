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
 * status): a report of one errored case saying so, with why (the first error printed, when
 * there was one: report_first_error), so that a dashboard never shows an earlier run's file
 * as this one's, nor a failure without its reason.  Prints any error of its own. */
void write_junit_error(const char *path, const char *library, int status);
/* For a run about to start, when path is a regular file (an earlier run's report): a report
 * of one errored case saying the run did not finish, which the run's own report replaces;
 * so that a run stopped from outside (a CI job's timeout, a signal, a machine that went
 * down) leaves no earlier run's result for a dashboard to show as its own.  Nothing for a
 * path that is not there, nor for a FIFO or device, which would get two reports.  Prints
 * any error; returns 0 or the exit status to return. */
int write_junit_unfinished(const char *path, const char *library);

#endif /* NEURONOP_JUNIT_H */
