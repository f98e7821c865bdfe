/*
 * model.c - the cost model: what a run would cost on the device (see nop_model_run in
 * libneuronop.h for the formula, and the device profile for where each cost comes from).
 */
#include <string.h>

#include "device/profile.h"

/* The cycles of n's counted actions, by category (compute left 0). */
static void counted_cycles(const struct nopi_cost *k, const nop_counters *n,
                           double cat[NOP_COST_CATEGORIES])
{
    memset(cat, 0, NOP_COST_CATEGORIES * sizeof *cat);
    cat[NOP_COST_STD] = (double)n->std_elems * k->std_access_cycles;
    cat[NOP_COST_STREAM] = (double)n->stream_elems * k->stream_access_cycles +
                           (double)n->stream_slow_elems * k->std_access_cycles;
    cat[NOP_COST_TCM] = (double)n->tcm_transfers * k->tcm_transfer_cycles +
                        (double)n->tcm_bytes / k->tcm_bytes_per_cycle;
    cat[NOP_COST_TENSORLIB] = (double)n->tensorlib_elems * k->tensorlib_elem_cycles;
    cat[NOP_COST_PRINTF] = (double)n->printf_calls * k->printf_cycles;
}

double nopi_model_counted(const nop_profile *p, const nop_counters *n)
{
    double cat[NOP_COST_CATEGORIES], sum = 0;
    counted_cycles(&p->cost, n, cat);
    for (int j = 0; j < NOP_COST_CATEGORIES; j++)
        sum += cat[j];
    return sum;
}

double nopi_model_compute(const nop_profile *p, const nop_run_result *r, const nop_model *m,
                          double seconds)
{
    double stack = r->stack_size > (size_t)p->stack_default ? p->cost.slow_stack_factor : 1.0;
    return seconds * 1e9 * m->cycles_per_host_ns * stack;
}

void nop_model_run(const nop_profile *p, const nop_run_result *r, double host_ns_per_element,
                   nop_model *m)
{
    memset(m, 0, sizeof *m);
    const struct nopi_cost *k = &p->cost;
    m->cycles_per_host_ns = host_ns_per_element > 0 ? k->reference_loop_cycles /
                                                          host_ns_per_element : 0;
    m->ncores = r->ncores < 64 ? r->ncores : 64;
    for (int i = 0; i < m->ncores; i++) {
        const nop_core_report *c = &r->cores[i];
        double cat[NOP_COST_CATEGORIES];
        counted_cycles(k, &c->counters, cat);
        cat[NOP_COST_COMPUTE] = nopi_model_compute(p, r, m, c->category_seconds[NOP_COST_COMPUTE]);
        for (int j = 0; j < NOP_COST_CATEGORIES; j++) {
            m->core_cycles[i] += cat[j];
            m->category_cycles[j] += cat[j];
        }
        if (m->core_cycles[i] > m->core_cycles[m->slowest])
            m->slowest = i;
    }
    m->category_cycles[NOP_MODEL_LAUNCH] = k->launch_cycles;
    m->cycles = k->launch_cycles + (m->ncores ? m->core_cycles[m->slowest] : 0);
    m->seconds = m->cycles / (k->clock_mhz * 1e6);
    m->throughput = m->seconds > 0 ? 1.0 / m->seconds : 0;
}
