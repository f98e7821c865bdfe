/*
 * fault.c - what kind of failure a device error is (nop_error_fault), for bindings that turn
 * each kind into its own exception class.
 *
 * The kind is set where the failure is found, beside its words: a core's end (fiber.c), the
 * seccomp trap (seccomp.c), the worker's watcher (sandbox.c) and neuronop's own troubles
 * (nopi_fault, NOP_FAULT_HOST).  A record a worker sent is its own account, as its words
 * are: a kind out of range reads as a broken rule.  tests/unit/test_bridge.c runs a kernel
 * of every kind through a confined device and checks the answer.
 */
#include "libneuronop.h"

enum nop_fault nop_error_fault(const nop_error *err)
{
    if (!err || err->kind != NOP_ERR_DEVICE)
        return NOP_FAULT_NONE;
    if (err->fault <= NOP_FAULT_NONE || err->fault > NOP_FAULT_HOST)
        return NOP_FAULT_RULE;
    return err->fault;
}
