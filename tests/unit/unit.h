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

/* Writes len bytes of data to dir/name (binary-safe: .npy headers hold NUL bytes). */
static inline void unit_write_bytes(const char *dir, const char *name, const void *data,
                                    size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Writes text to dir/name. */
static inline void unit_write(const char *dir, const char *name, const char *text)
{
    unit_write_bytes(dir, name, text, strlen(text));
}

/* A string literal's bytes, embedded NULs included. */
#define UNIT_LITERAL(s) (s), sizeof(s) - 1

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

/* Writes a library into dir (neuronop.yaml, and its sources k.c and s.c), builds it, with
 * memcheck if asked, and opens it.  NULL, after printing why, when a step fails. */
static inline nop_library *unit_build(const char *dir, const char *manifest,
                                      const char *kernels, const char *shapes, bool memcheck)
{
    unit_write(dir, "neuronop.yaml", manifest);
    unit_write(dir, "k.c", kernels);
    unit_write(dir, "s.c", shapes);
    nop_manifest *m = NULL;
    nop_library *lib = NULL;
    nop_error err;
    nop_build_result res;
    nop_build_opts o = { .share_dir = unit_share_dir(), .memcheck = memcheck };
    if (nop_manifest_load(&m, dir, &err) != 0 || nop_build(m, &o, &res, &err) != 0 ||
        nop_library_open(&lib, res.lib_path, &err) != 0)
        fprintf(stderr, "building %s: %s\n", dir, err.diag.msg);
    nop_manifest_free(m);
    return lib;
}

#endif /* NEURONOP_UNIT_H */
