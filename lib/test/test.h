/*
 * test.h - what the test engine (lib/test) uses: the public API and base's helpers.  The
 * engine is a client of the device and the manifest, through the public header only.
 */
#ifndef NEURONOP_TEST_H
#define NEURONOP_TEST_H

#include <stdlib.h>

#include "base/internal.h"
#include "device/library.h"
#include "isolate/sandbox.h"

#endif /* NEURONOP_TEST_H */
