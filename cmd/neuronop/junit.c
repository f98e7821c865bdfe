/*
 * junit.c - `neuronop test --junit FILE`: the results as JUnit XML (see junit.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "junit.h"
#include "report.h"

/* Writes s escaped for XML text and attributes, leaving out the control characters XML 1.0
 * does not allow. */
static void xml_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
                fputc(*s, f);
        }
    }
}

/* The length of s's first line, or of its first max bytes when it is longer, cut where a
 * character begins: a character cut in two would make the whole report unreadable XML. */
static int line_prefix(const char *s, int max)
{
    const char *nl = strchr(s, '\n');
    return utf8_prefix(s, nl ? (size_t)(nl - s) : strlen(s), max);
}

int write_junit(const char *path, const char *library, const nop_test_result *cases, int n,
                const nop_test_summary *sum, double seconds)
{
    /* built in memory, then written as neuronop writes every output (nop_write_file) */
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    if (!f)
        return report_nomem();
    int total = sum->passed + sum->failed + sum->errored + sum->skipped;
    char stamp[32];
    time_t t = time(NULL);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", gmtime(&t));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"neuronop test\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
            "time=\"%.6f\">\n", total, sum->failed, sum->errored, seconds);
    fprintf(f, "  <testsuite name=\"");
    xml_str(f, library);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\" "
            "timestamp=\"%s\">\n", total, sum->failed, sum->errored, sum->skipped,
            seconds, stamp);
    for (int i = 0; i < n; i++) {
        const nop_test_result *r = &cases[i];
        fprintf(f, "    <testcase classname=\"");
        xml_str(f, library);
        if (r->op) {   /* none for write_junit_error's */
            fprintf(f, ".");
            xml_str(f, r->op);
        }
        fprintf(f, "\" name=\"");
        xml_str(f, r->label);
        fprintf(f, "\" time=\"%.6f\"", r->seconds);
        if (r->status == NOP_TEST_PASSED) {
            fprintf(f, "/>\n");
            continue;
        }
        fprintf(f, ">\n");
        if (r->status == NOP_TEST_SKIPPED) {
            fprintf(f, "      <skipped/>\n");
        } else {
            const char *tag = r->status == NOP_TEST_FAILED ? "failure" : "error";
            /* the attribute a dashboard shows: the summary, and the line under it, which
             * says what happened ("a device rule was broken under sequential: segv: core
             * 0: kernel crashed: ...") */
            const char *nl = strchr(r->message, '\n');
            char first[1024];   /* two lines of at most 510 bytes each, and ": " */
            snprintf(first, sizeof first, "%.*s%s%.*s", line_prefix(r->message, 510),
                     r->message, nl ? ": " : "", nl ? line_prefix(nl + 1, 510) : 0,
                     nl ? nl + 1 : "");
            fprintf(f, "      <%s message=\"", tag);
            xml_str(f, first);
            fprintf(f, "\">");
            xml_str(f, r->message);
            fprintf(f, "</%s>\n", tag);
        }
        fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        free(xml);
        return report_nomem();
    }
    nop_error err = {0};
    int rc = nop_write_file(path, xml, len, &err) == 0 ? 0 : report_error(&err);
    free(xml);
    return rc;
}

/* A report of one errored case, "neuronop test", saying message (its first line and the
 * second are the failure's message attribute, write_junit's). */
static int write_run_error(const char *path, const char *library, const char *message)
{
    nop_test_result r = { .status = NOP_TEST_ERRORED };
    snprintf(r.label, sizeof r.label, "neuronop test");
    snprintf(r.message, sizeof r.message, "%s", message);
    nop_test_summary sum = { .errored = 1 };
    return write_junit(path, library, &r, 1, &sum, 0);
}

int write_junit_unfinished(const char *path, const char *library)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return write_run_error(path, library, "the run did not finish: neuronop test was "
                           "stopped before it wrote its report (a job's time limit, a signal)");
}

void write_junit_error(const char *path, const char *library, int status)
{
    char message[sizeof ((nop_test_result *)0)->message];
    const char *why = report_first_error();
    if (why[0])   /* (a new user's CI dashboard showed no reason) */
        snprintf(message, sizeof message, "no case ran: neuronop test stopped with exit "
                 "status %d before the first one\n%s", status, why);
    else
        snprintf(message, sizeof message, "no case ran: neuronop test stopped with exit "
                 "status %d before the first one (its error output says why)", status);
    (void)write_run_error(path, library, message);
}
