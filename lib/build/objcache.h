/*
 * objcache.h - the compile cache: objects of the system C++ compiler kept by content
 * (internal to lib/build/).
 *
 * Off unless NEURONOP_CACHE_DIR names a folder (neuronop-build(1), CACHE).  Like ccache's
 * preprocessor mode: an object's key is a hash of the compiler (its resolved path, size and
 * modification time), every argument but the output files, and the source as the compiler
 * preprocessed it, so a change to any header it includes, a macro, a flag or the compiler
 * misses.  An entry is the object and the compiler's messages (warnings are shown again on
 * a hit); only compiles that succeeded are kept.  Entries are written to a temporary file
 * and renamed, so builds running at the same time share a folder safely, and the folder is
 * kept under NEURONOP_CACHE_SIZE megabytes by removing the least recently used entries.
 */
#ifndef NEURONOP_OBJCACHE_H
#define NEURONOP_OBJCACHE_H

#include "syscc.h"

typedef struct nopi_objcache {
    char *dir;                /* the folder, or NULL: no cache */
    long long max_bytes;      /* bound on the entries' total size */
} nopi_objcache;

/* Reads NEURONOP_CACHE_DIR and NEURONOP_CACHE_SIZE and makes the folder.  0 (c->dir NULL
 * when the cache is off), or -1 with err filled when a setting is wrong or the folder
 * cannot be made. */
int nopi_objcache_open(nopi_objcache *c, nop_error *err);
void nopi_objcache_close(nopi_objcache *c);

/* Adds the compiler, as a file (its resolved path, size and modification time), to h: a new
 * version (a package upgrade, another $CXX) is another key.  0, or -1 when the program
 * cannot be found. */
int nopi_hash_compiler(nopi_hasher *h, const char *program);

/* The key of a compile: its argv (the compiler first; -o and -MF paths left out) and the
 * file holding the source preprocessed with the same arguments.  0, or -1 when the
 * compiler or the file cannot be read (no caching then). */
int nopi_objcache_key(const nopi_argv *compile, const char *preprocessed, char key[33]);

/* On a hit, writes the entry's object to obj and its messages to log and returns true. */
bool nopi_objcache_get(const nopi_objcache *c, const char *key, const char *obj,
                       const char *log);

/* Keeps obj and log under key (best effort: a cache that cannot be written is skipped),
 * then removes the oldest entries while the folder is over its bound. */
void nopi_objcache_put(const nopi_objcache *c, const char *key, const char *obj,
                       const char *log);

#endif /* NEURONOP_OBJCACHE_H */
