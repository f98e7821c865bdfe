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
};

#endif /* NEURONOP_PROFILE_H */
