/*
 * baseline.c - reading an earlier `neuronop bench --json` report (the jansson boundary).
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"

/* Copies the JSON string at key of obj into buf ("" when absent or not a string). */
static void get_string(json_t *obj, const char *key, char *buf, size_t size)
{
    const char *v = json_string_value(json_object_get(obj, key));
    nopi_strlcpy(buf, v ? v : "", size);
}

int nop_bench_baseline_load(const char *path, nop_baseline *b, nop_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))   /* jansson would say '[' expected */
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "'%s' is a folder, not a baseline: "
                         "give the file an earlier neuronop bench --json wrote", path);
    if (access(path, R_OK) != 0)   /* said as every unreadable input is (an auditor's find:
                                    * jansson's words, in the form of a place in the file) */
        return nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read baseline '%s': %s",
                         path, strerror(errno));
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return nopi_fail(err, NOP_ERR_INPUT, path, je.line > 0 ? je.line : 0,
                         je.column > 0 ? je.column : 0, "cannot read the baseline: %s",
                         je.text);
    memset(b, 0, sizeof *b);
    b->host_throughput = json_number_value(json_object_get(json_object_get(root, "host"),
                                                           "throughput"));
    b->modeled_throughput = json_number_value(json_object_get(json_object_get(root, "modeled"),
                                                              "throughput"));
    get_string(root, "library", b->library, sizeof b->library);
    get_string(root, "op", b->op, sizeof b->op);
    get_string(root, "device", b->device, sizeof b->device);
    get_string(root, "inputs", b->inputs, sizeof b->inputs);
    json_t *cores = json_object_get(root, "cores"), *memcheck = json_object_get(root, "memcheck");
    b->cores = (int)json_integer_value(cores);
    b->memcheck = json_is_boolean(memcheck) ? json_is_true(memcheck) : -1;
    bool typed = (!cores || json_is_integer(cores)) && (!memcheck || json_is_boolean(memcheck));
    json_decref(root);
    /* a figure no run gives (1e308, 1e-300) would only make a percentage of inf or of
     * hundreds of digits */
    const char *why = !(b->host_throughput > 0) || !(b->modeled_throughput > 0)
                          ? "it lacks host.throughput or modeled.throughput"
                      : b->host_throughput > 1e12 || b->modeled_throughput > 1e12 ||
                              b->host_throughput < 1e-12 || b->modeled_throughput < 1e-12
                          ? "a throughput is outside 1e-12..1e12 runs per second"
                      : !typed ? "'cores' is not a whole number, or 'memcheck' not true or false"
                               : NULL;
    if (why) {
        nopi_fail(err, NOP_ERR_INPUT, path, 0, 0, "not a neuronop bench report: %s", why);
        nopi_detail(err, "make one with 'neuronop bench ... --json > %s'", path);
        return -1;
    }
    return 0;
}
