/*
 * fault.c - what kind of failure a device error is (nop_error_fault), for bindings that turn
 * each kind into its own exception class.
 *
 * The device (lib/device: a core's end) and its worker's watcher (lib/isolate: a timeout, a
 * trapped call, a dead or lying worker) know the kind when they fail a run, but nop_error
 * carries only the diagnostic, so the kind is read back here from the diagnostic's opening
 * words, which those layers write in one place each (fiber.c nopi_fiber_describe_end and
 * nopi_stack_overflow, seccomp.c nopi_done_trapped, sandbox.c).  This is the one place that
 * reads them: when the error record grows a kind of its own, only this function changes.
 * tests/unit/test_bridge.c runs a kernel of every kind through a confined device and checks
 * the answer, so a change of wording there fails a test rather than a class.
 */
#include <string.h>

#include "libneuronop.h"

enum nop_fault nop_error_fault(const nop_error *err)
{
    static const struct { const char *opening; enum nop_fault fault; } openings[] = {
        { "timeout:", NOP_FAULT_TIMEOUT },
        { "kernel crashed:", NOP_FAULT_CRASH },
        { "stack overflow:", NOP_FAULT_STACK },
        { "kernel made a system call the device does not have", NOP_FAULT_SYSCALL },
        { "the device process died", NOP_FAULT_WORKER },
        { "the device process sent a malformed", NOP_FAULT_WORKER },
        { "user code ended the device process", NOP_FAULT_WORKER },
        /* the worker's and the host's own troubles, before any user code ran */
        { "cannot ", NOP_FAULT_HOST },
        { "the device process ended before it took any work", NOP_FAULT_HOST },
        { "a malformed request", NOP_FAULT_HOST },
    };
    if (!err || err->kind != NOP_ERR_DEVICE)
        return NOP_FAULT_NONE;
    for (size_t i = 0; i < sizeof openings / sizeof openings[0]; i++)
        if (strncmp(err->diag.msg, openings[i].opening, strlen(openings[i].opening)) == 0)
            return openings[i].fault;
    return NOP_FAULT_RULE;
}
