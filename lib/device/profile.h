/*
 * profile.h - a device profile: the facts of one GPSIMD device model (internal).
 * Loaded from share/neuronop/devices/NAME.yaml by profile.c, validated like manifests.
 */
#ifndef NEURONOP_PROFILE_H
#define NEURONOP_PROFILE_H

#include "base/internal.h"

struct nop_profile {
    char *name, *path;
    int cores;
    int64_t tcm_bytes, stream_tcm_bytes;
    int fast_streams;
    int64_t stack_default, stack_max;
    int64_t printf_buffer;
    double timeout;
    /* the cost model: cycles per counted action (see trn1.yaml for the derivation) */
    struct nopi_cost {
        double clock_mhz, launch_cycles, std_access_cycles, stream_access_cycles,
            tcm_transfer_cycles, tcm_bytes_per_cycle, tensorlib_elem_cycles, printf_cycles,
            slow_stack_factor, reference_loop_cycles;
    } cost;
};

/* model.c: the cycles of a core's counted actions (everything but compute), and the cycles
 * of `seconds` of host compute in run r under model m (the host-speed factor and the stack
 * penalty).  Their sum over a core is its modeled cycles. */
double nopi_model_counted(const nop_profile *p, const nop_counters *n);
double nopi_model_compute(const nop_profile *p, const nop_run_result *r, const nop_model *m,
                          double seconds);

#endif /* NEURONOP_PROFILE_H */
