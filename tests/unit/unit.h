/*
 * unit.h - shared helpers for libneuronop's unit tests (cmocka).
 *
 * Each test file is one program.  Scratch files live in a fresh folder per test
 * (unit_tmpdir), removed by unit_cleanup.
 */
#ifndef NEURONOP_UNIT_H
#define NEURONOP_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "libneuronop.h"

/* Creates a scratch folder and returns its path (static storage, one per process). */
static inline const char *unit_tmpdir(void)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "%s/neuronop-unit.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        fail_msg("mkdtemp failed");
    return dir;
}

/* Writes text to dir/name. */
static inline void unit_write(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static inline void unit_cleanup(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The share folder of the tree under test. */
static inline const char *unit_share_dir(void)
{
    const char *d = getenv("NEURONOP_SHARE_DIR");
    return d ? d : "share/neuronop";
}

#endif /* NEURONOP_UNIT_H */
