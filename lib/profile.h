/*
 * profile.h - a device profile: the facts of one GPSIMD device model (internal).
 * Loaded from share/neuronop/devices/NAME.yaml by profile.c, validated like manifests.
 */
#ifndef NEURONOP_PROFILE_H
#define NEURONOP_PROFILE_H

#include "internal.h"

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

#endif /* NEURONOP_PROFILE_H */
