/*
 * profile.c - loads and validates a device profile (share/neuronop/devices/NAME.yaml).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile.h"
#include "base/ydoc.h"

static const char *const keys[] = {
    "name", "cores", "tcm_bytes", "stream_tcm_bytes", "fast_streams", "stack_default",
    "stack_max", "printf_buffer", "timeout", "cost", NULL
};

static const char *const cost_keys[] = {
    "clock_mhz", "launch_cycles", "std_access_cycles", "stream_access_cycles",
    "tcm_transfer_cycles", "tcm_bytes_per_cycle", "tensorlib_elem_cycles", "printf_cycles",
    "slow_stack_factor", "reference_loop_cycles", NULL
};

/* The cost section: every key required, each a positive number (slow_stack_factor >= 1). */
static int load_cost(const nopi_ydoc *doc, const nopi_ynode *root, nop_profile *p,
                     nop_error *err)
{
    const nopi_ynode *cost = nopi_y_lookup(root, "cost");
    if (!cost)
        return nopi_y_error(doc, root, err, "device profile lacks required key 'cost' (the "
                            "cost model's parameters)");
    if (nopi_y_expect(doc, cost, NOPI_Y_MAP, "cost", err) != 0 ||
        nopi_y_check_keys(doc, cost, cost_keys, "cost model", err) != 0)
        return -1;
    double *dest[] = { &p->cost.clock_mhz, &p->cost.launch_cycles, &p->cost.std_access_cycles,
                       &p->cost.stream_access_cycles, &p->cost.tcm_transfer_cycles,
                       &p->cost.tcm_bytes_per_cycle, &p->cost.tensorlib_elem_cycles,
                       &p->cost.printf_cycles, &p->cost.slow_stack_factor,
                       &p->cost.reference_loop_cycles };
    for (size_t i = 0; cost_keys[i]; i++) {
        const nopi_ynode *n = nopi_y_lookup(cost, cost_keys[i]);
        if (!n)
            return nopi_y_error(doc, cost, err, "the cost model lacks '%s'", cost_keys[i]);
        double min = strcmp(cost_keys[i], "slow_stack_factor") == 0 ? 1.0 : 1e-9;
        if (nopi_y_double(doc, n, cost_keys[i], min, 1e12, dest[i], err) != 0)
            return -1;
    }
    return 0;
}

static int get_int(const nopi_ydoc *doc, const nopi_ynode *root, const char *key, int64_t min,
                   int64_t max, int64_t *out, nop_error *err)
{
    const nopi_ynode *n = nopi_y_lookup(root, key);
    if (!n)
        return nopi_y_error(doc, root, err, "device profile lacks required key '%s'", key);
    return nopi_y_int(doc, n, key, min, max, out, err);
}

/* stack_max: no less than stack_default, which the message names when it is the cause. */
static int stack_max(const nopi_ydoc *doc, const nopi_ynode *root, int64_t stack_default,
                     int64_t *out, nop_error *err)
{
    if (get_int(doc, root, "stack_max", 256, 1 << 26, out, err) != 0)
        return -1;
    if (*out >= stack_default)
        return 0;
    const nopi_ynode *d = nopi_y_lookup(root, "stack_default");
    return nopi_y_error(doc, d, err, "'stack_default' is %lld, more than 'stack_max' (%lld, "
                        "line %d): a kernel's default stack must be one it may have",
                        (long long)stack_default, (long long)*out,
                        nopi_y_lookup(root, "stack_max")->line);
}

int nop_profile_load(nop_profile **out, const char *name, const char *share_dir,
                     nop_error *err)
{
    *out = NULL;
    char *path;
    if (strchr(name, '/') || strstr(name, ".yaml")) {
        path = strdup(name);
    } else {
        nopi_strbuf sb = NOPI_STRBUF_INIT;
        nopi_sb_printf(&sb, "%s/devices/%s.yaml", share_dir, name);
        path = nopi_sb_take(&sb);
    }
    if (!path)
        return nopi_nomem(err);
    struct stat st;
    if (stat(path, &st) != 0) {
        nopi_fail(err, NOP_ERR_INPUT, NULL, 0, 0, "no device profile '%s' (looked for '%s')",
                  name, path);
        nopi_detail(err, "profiles live in %s/devices/; trn1 is the default", share_dir);
        free(path);
        return -1;
    }
    nopi_ydoc *doc;
    if (nopi_yaml_load(&doc, path, err) != 0) {
        free(path);
        return -1;
    }
    nop_profile *p = calloc(1, sizeof *p);
    const nopi_ynode *root = nopi_yaml_root(doc);
    int rc = -1;
    int64_t v[8];
    double timeout = 10;
    const char *pname;
    if (!p) {
        nopi_nomem(err);
    } else if (!root || root->kind != NOPI_Y_MAP) {
        nopi_fail(err, NOP_ERR_INPUT, path, 1, 1, "a device profile must be a mapping");
    } else if (nopi_y_check_keys(doc, root, keys, "device profile", err) == 0 &&
               nopi_y_lookup(root, "name") &&
               nopi_y_string(doc, nopi_y_lookup(root, "name"), "name", &pname, err) == 0 &&
               get_int(doc, root, "cores", 1, 64, &v[0], err) == 0 &&
               get_int(doc, root, "tcm_bytes", 1024, 1 << 24, &v[1], err) == 0 &&
               get_int(doc, root, "stream_tcm_bytes", 0, v[1], &v[2], err) == 0 &&
               get_int(doc, root, "fast_streams", 0, 64, &v[3], err) == 0 &&
               get_int(doc, root, "stack_default", 256, 1 << 24, &v[4], err) == 0 &&
               stack_max(doc, root, v[4], &v[5], err) == 0 &&
               get_int(doc, root, "printf_buffer", 0, 128 * 1024, &v[6], err) == 0 &&
               (!nopi_y_lookup(root, "timeout") ||
                nopi_y_double(doc, nopi_y_lookup(root, "timeout"), "timeout", 0.001, 86400,
                              &timeout, err) == 0)) {
        if (load_cost(doc, root, p, err) != 0) {
            /* reported */
        } else if (v[6] & (v[6] - 1)) {
            nopi_y_error(doc, nopi_y_lookup(root, "printf_buffer"), err, "'printf_buffer' must "
                         "be 0 or a power of two (the device's ring buffer), not %lld",
                         (long long)v[6]);
        } else {
            p->name = strdup(pname);
            p->path = path;
            path = NULL;
            p->cores = (int)v[0];
            p->tcm_bytes = v[1];
            p->stream_tcm_bytes = v[2];
            p->fast_streams = (int)v[3];
            p->stack_default = v[4];
            p->stack_max = v[5];
            p->printf_buffer = v[6];
            p->timeout = timeout;
            rc = p->name ? 0 : nopi_nomem(err);
        }
    } else if (!nopi_y_lookup(root, "name")) {
        nopi_y_error(doc, root, err, "device profile lacks required key 'name'");
    }
    nopi_yaml_free(doc);
    free(path);
    if (rc != 0) {
        nop_profile_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

void nop_profile_free(nop_profile *p)
{
    if (!p)
        return;
    free(p->name);
    free(p->path);
    free(p);
}

const char *nop_profile_name(const nop_profile *p) { return p->name; }
int nop_profile_cores(const nop_profile *p) { return p->cores; }
