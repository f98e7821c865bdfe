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

#endif /* NEURONOP_JUNIT_H */
