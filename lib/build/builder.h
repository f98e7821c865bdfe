/*
 * builder.h - one build in progress, shared by the files of `neuronop build` (internal to
 * lib/build): build.c runs the pipeline and compiles, buildkey.c decides whether anything
 * changed, buildfs.c owns the build folder's lock, leftovers and atomic writes.
 */
#ifndef NEURONOP_BUILDER_H
#define NEURONOP_BUILDER_H

#include "gen.h"

#define STAMP_MAGIC "neuronop-build-stamp 1"

typedef struct builder {
    const nop_manifest *m;
    const nop_build_opts *o;
    nop_error *err;
    char tcc_dir[1024];
    char *include_dir;        /* share/neuronop/include */
    char *lib_path, *stamp_path, *lock_path;
    char key[33];
    nopi_gen_source *sources; /* compute then shape */
    int nsources;
    char *tmpdir;
    int compiled;
} builder;

/* buildkey.c: computes b->key, the hash of everything the build depends on (0, or -1 with
 * b->err filled when an input cannot be read). */
int nopi_build_key(builder *b);
/* buildkey.c: true when the stamp records b->key and the library is the one it was made
 * for. */
bool nopi_build_up_to_date(builder *b);
/* buildfs.c: takes the build folder's flock into *fd, waiting up to the lock timeout; 0, or
 * -1 with b->err filled (*fd is then -1). */
int nopi_build_lock(builder *b, int *fd);
/* buildfs.c: removes temporary folders and files that killed builds left (under the lock,
 * nobody else is building here). */
void nopi_build_remove_leftovers(builder *b);
/* buildfs.c: the same when nobody holds the lock, without waiting for it: an up-to-date
 * build clears what a killed one left, yet never touches a running build's folder. */
void nopi_build_clean_if_idle(builder *b);
/* buildfs.c: removes a folder and the files in it (a build's temporary folder). */
void nopi_build_remove_tree(const char *dir);
/* buildfs.c: writes data to path through a temporary file in b->tmpdir and rename(2); 0, or
 * -1 with b->err filled. */
int nopi_build_write_atomically(builder *b, const char *path, const char *data);

#endif /* NEURONOP_BUILDER_H */
