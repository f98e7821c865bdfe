/*
 * baseline.c - reading an earlier `neuronop bench --json` report (the jansson boundary).
 */
#include <jansson.h>

#include "base/internal.h"

int nop_bench_baseline_load(const char *path, double *host_throughput,
                            double *modeled_throughput, nop_error *err)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return nopi_fail(err, NOP_ERR_INPUT, path, je.line > 0 ? je.line : 0,
                         je.column > 0 ? je.column : 0, "cannot read the baseline: %s",
                         je.text);
    double host = json_number_value(json_object_get(json_object_get(root, "host"),
                                                    "throughput"));
    double model = json_number_value(json_object_get(json_object_get(root, "modeled"),
                                                     "throughput"));
    json_decref(root);
    if (!(host > 0) || !(model > 0)) {
        nopi_fail(err, NOP_ERR_INPUT, path, 0, 0, "not a neuronop bench report: it lacks "
                  "host.throughput or modeled.throughput");
        nopi_detail(err, "make one with 'neuronop bench ... --json > %s'", path);
        return -1;
    }
    *host_throughput = host;
    *modeled_throughput = model;
    return 0;
}
