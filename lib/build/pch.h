/*
 * pch.h - the standard headers a C++ source that includes torch.h is given before its first
 * line, precompiled (internal to lib/build/).
 *
 * libtorch's <torch/torch.h> brings some sixty standard headers with it, and so does the
 * device's (torch/detail/std.h): parsing them costs g++ about 0.7 s of CPU a source, three
 * times what the rest of a kernel costs.  So each C++ source that includes torch.h (by
 * name: objects.c, brings_torch) is compiled with `-include torch/detail/std.h`, and g++
 * finds that header precompiled beside the copy it is given: made once per compiler and
 * flags, kept in a folder of the user's cache, and read in a few milliseconds after that
 * (neuronop-build(1), "Precompiled header").
 *
 * Whether g++ may use it is g++'s own check: a macro a unit defines (-D, or STACK_SIZE) that
 * changes what the header means makes it read the text instead, which is slower and
 * computes the same.  So the key of an entry is the compiler, as a file, and every flag of
 * the compile but -I, -D, -U and warning flags (but -Wno-deprecated), which the entry is
 * made without (and an -O2 or -std= that a later one makes moot); an entry whose header or
 * any file it read (its -MD list) was modified or changed since it was made is made again.
 * Only g++'s: clang has a format of its own and refuses one made with other options
 * instead of reading the text, so clang++ is given the header's text.
 *
 * Where: $XDG_CACHE_HOME/neuronop/pch, else ~/.cache/neuronop/pch, whether or not the
 * compile cache of objects (NEURONOP_CACHE_DIR, bounded by NEURONOP_CACHE_SIZE) is on; at
 * most four entries of about 60 MB.  Without a folder it can write, a build precompiles
 * nothing and every source parses the text: the same objects, more slowly.
 */
#ifndef NEURONOP_PCH_H
#define NEURONOP_PCH_H

#include <stdbool.h>

typedef struct nopi_pch {
    char *root;           /* the folder of entries, or NULL: nothing is precompiled */
    char key[33];         /* the last entry this build used or tried, and the header it */
    char *header;         /* gives (NULL when it could not be made: the text is given) */
} nopi_pch;

/* Picks the folder (made if missing) when the build has C++ sources and its compiler is
 * not clang.  Never fails the build: no folder, or one that cannot be made or written,
 * leaves p->root NULL.  p must be zeroed first; free with nopi_pch_free. */
void nopi_pch_open(nopi_pch *p, const char *cxx_program);
void nopi_pch_free(nopi_pch *p);

#endif /* NEURONOP_PCH_H */
