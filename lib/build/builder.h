/*
 * builder.h - the state of one `neuronop build`, shared by the files of the build pipeline
 * (internal to lib/build/).
 *
 *   build.c     the order of the steps: setup, the compilers, compile, check, link
 *   buildkey.c  whether anything changed: the build key and the stamp
 *   includes.c  the files of the user's folders the sources include (without a preprocessor)
 *   buildfs.c   the build folder's lock, leftovers and atomic writes
 *   objects.c   compiling each source (libtcc in its confined child, compile.c; g++ or cc as
 *               confined child processes, syscc.c) and linking the library (libtcc alone, or
 *               the system linker when any object came from a system compiler)
 *   objcache.c  the compile cache of g++'s objects (NEURONOP_CACHE_DIR)
 *   pch.c       the standard headers each C++ source is given first, precompiled once
 *   confine.c   what every compiler child may read, write and use, and the checks of the
 *               files diagnostics name
 *   ccfilter.c  the system calls a compiler child is refused (its seccomp filter)
 *   register.c  the ops of a NEURON_LIBRARY registration, and the C++ symbol of each op's
 *               kernel and shape function
 *   check.c     what a built library must satisfy: device symbols, every function defined
 *               with its op's signature
 *   linkcheck.c what the loader would run of the library the linker wrote: only the
 *               toolchain's own code, read from the program headers and dynamic segment
 */
#ifndef NEURONOP_BUILDER_H
#define NEURONOP_BUILDER_H

#include "base/elfsyms.h"
#include "compile.h"
#include "confine.h"
#include "gen.h"
#include "pch.h"
#include "syscc.h"

#define STAMP_MAGIC "neuronop-build-stamp 2"

/* How a source is compiled. */
typedef enum nopi_lang {
    NOPI_LANG_TCC,        /* C, by the embedded libtcc */
    NOPI_LANG_CC,         /* C, by the system C compiler at -O2 (compiler: cc) */
    NOPI_LANG_CXX,        /* C++14, by the system C++ compiler */
} nopi_lang;

typedef struct object {
    char *path;
    nopi_role role;
    nopi_lang lang;
    const char *source;
    nopi_elfsym *syms;
    size_t nsyms;
    bool static_init;     /* has code that runs at load or unload (read_object says what) */
    char init_var[256];   /* static_init: the variable it initialises, if known */
    char load_fn[256];    /* static_init: the function a load array calls (mangled), if known */
    bool at_unload;       /* load_fn is a destructor's */
} object;

typedef struct builder {
    const nop_manifest *m;    /* the manifest, with the registration's ops when it has none */
    nop_manifest mcopy;       /* what m points at: the caller's manifest, ops filled in */
    nopi_test *tests;         /* mcopy's tests, their ops resolved by name */
    const nop_build_opts *o;
    nop_error *err;
    char tcc_dir[1024];
    char *include_dir;        /* share/neuronop/include */
    char *lib_path, *stamp_path, *lock_path;
    char key[33];
    nopi_gen_source *sources; /* compute, shape, then reference */
    int nsources;
    char *tmpdir;
    nopi_confine confine;     /* what every compiler child may read, write and use */
    nopi_pch pch;             /* where the precompiled standard headers are (pch.h) */
    int compiled;
    int cached;               /* objects taken from the compile cache (objcache.h) */
    bool waited;              /* the build folder's lock was another build's at first */
    bool cc;                  /* compiler: cc (the manifest, or the build option) */
    bool system_link;         /* some object comes from g++ or cc: link with the system */
    char *ns;                 /* NEURON_LIBRARY's namespace, or NULL */
    nopi_gen_fn fns[NOP_MAX_OPS][2];   /* [op][0 kernel, 1 shape]: symbol to call */
    nopi_gen_fn *refs;        /* per test: its reference function's symbol */
    bool reg_ops;             /* the ops came from the registration */
    char *reg_file[NOP_MAX_OPS];   /* reg_ops: where each op's m.def is */
    int reg_line[NOP_MAX_OPS];
} builder;

/* includes.c: every file of the user's folders that the sources (paths) can include, by
 * their #include lines, in any #if branch, each name looked up in the including file's
 * folder (a quoted one) and in dirs, and each file found read for its own in turn; the
 * toolchain's headers, in none of them, are not followed.  *paths gets their resolved paths,
 * sorted, without duplicates and without the sources (malloc'd, each and the array; NULL
 * when none), and *computed is set when an #include names its file with a macro, which only
 * the compiler can resolve (or past 4096 files).  0, or -1 on no memory. */
int nopi_user_includes(const char *const *sources, size_t nsources, const char *const *dirs,
                       size_t ndirs, char ***paths, size_t *n, bool *computed);
/* includes.c: the folders b's sources find headers in: the sources' own, the manifest's
 * includes and its -I flags; *n of them, the array malloc'd (the strings are the
 * manifest's, but the first *nown: free all with nopi_build_user_dirs_free).  NULL on no
 * memory. */
char **nopi_build_user_dirs(const builder *b, size_t *n, size_t *nown);
void nopi_build_user_dirs_free(char **dirs, size_t nown);
/* includes.c: nopi_user_includes of b's sources (some of them) in nopi_build_user_dirs. */
int nopi_build_included(const builder *b, const char *const *sources, size_t nsources,
                        char ***paths, size_t *n, bool *computed);

/* buildkey.c: adds to *files (n of them, malloc'd: each, and the array, which may move)
 * every regular file of the library's folder (--library-dir's, or the manifest's) and its
 * folders, but hidden ones and the build's outputs, by resolved path, up to 4096; then sorts
 * them without duplicates.  0; 1 when it stopped past 4096 files; -1 on no memory. */
int nopi_build_folder_files(const builder *b, char ***files, size_t *n);

/* buildkey.c: computes b->key, the hash of everything the build depends on (0, or -1 with
 * b->err filled when an input cannot be read). */
int nopi_build_key(builder *b);
/* buildkey.c: true when the stamp records b->key and the library is the very file that
 * build made, unchanged (same content, and the same device, inode and change time, which
 * a file's author cannot set: a library that came with the sources is rebuilt). */
bool nopi_build_up_to_date(builder *b);
/* buildkey.c: writes the stamp of the library just built: b->key, the library's hash and its
 * identity on this machine.  0, or -1 with b->err filled. */
int nopi_build_record(builder *b);
/* buildkey.c: 0 when the build's inputs, hashed again now, are still those b->key was made
 * from; else -1 with b->err filled (an input error: one changed while it was being built,
 * and may have been read in either form).  The link calls it before it installs. */
int nopi_build_unchanged(builder *b);
/* buildfs.c: when e (an errno) says the build may not write its folder (EACCES, EROFS),
 * adds to b->err why it had to (a detail under "cannot create ...: Permission denied"). */
void nopi_build_unwritable(builder *b, int e);
/* buildfs.c: takes the build folder's flock into *fd, waiting up to the lock timeout; 0, or
 * -1 with b->err filled (*fd is then -1).  Another user's lock is taken read-only. */
int nopi_build_lock(builder *b, int *fd);
/* buildfs.c: takes an exclusive flock on fd, waiting up to nopi_build_lock_timeout(b) s;
 * when it has to wait and dir is not NULL, a note says it waits for another build of dir.
 * 0 when locked; -1 when the time ran out; 1 when the file system has no locks (flock
 * failed otherwise: the caller goes on unlocked).  Nothing is written to b->err: the caller
 * says what was not locked. */
int nopi_build_flock(builder *b, int fd, const char *dir);
/* buildfs.c: how long a build waits for a lock: nop_build_opts' lock_timeout, else 60 s. */
double nopi_build_lock_timeout(const builder *b);
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

/* build.c: the language of source i (b->sources[i]). */
nopi_lang nopi_build_lang(const builder *b, int i);

/* objects.c: says, under --verbose, the command a job runs (not for a done job). */
void nopi_build_note_job(builder *b, const nopi_tool_job *job);

/* pch.c: adds `-include H` to a C++ compile whose other flags a holds (those before -c,
 * -o and the source), H being torch/detail/std.h: the copy beside its precompiled form,
 * made now when b->pch has none for these flags, or neuronop's own (the text) when nothing
 * can be precompiled.  A failed precompile is not the build's error (the text is used, and
 * the compile reports what is wrong): -1 only when out of memory. */
int nopi_build_std_header(builder *b, nopi_argv *a);

/* objects.c: each compiles the sources of its kind into objs[i] (same index as sources) */
int nopi_build_compile_system(builder *b, object *objs);
int nopi_build_compile_tcc(builder *b, object *objs);
int nopi_build_link(builder *b, const object *objs, int nobjs);
/* Links shape objects with trampolines into `out`: a library that only the registration
 * probe loads. */
int nopi_build_link_probe(builder *b, const object *objs, int nobjs, const char *out);

/* linkcheck.c: the linked library data[0, len) runs nothing at load or unload but the
 * toolchain's own code; 0, or -1 with b->err filled (a compile error, naming b->lib_path).
 * how: NOPI_LINKED_EXPORTS, it defines no dynamic symbol but the library's two (not the
 * probe, nor libtcc's, which exports every function); NOPI_LINKED_TEXTREL, text relocations
 * that write an address or a displacement are allowed (libtcc's memcheck libraries have them); NOPI_LINKED_PROBE, it is
 * the registration's probe library (so the message says). */
enum { NOPI_LINKED_EXPORTS = 1, NOPI_LINKED_TEXTREL = 2, NOPI_LINKED_PROBE = 4 };
int nopi_check_linked(builder *b, const char *data, size_t len, unsigned how);

/* register.c */
int nopi_build_registration(builder *b, const object *objs, int nobjs);
/* resolve.c */
int nopi_build_resolve(builder *b, const object *objs, int nobjs);
void nopi_build_registration_free(builder *b);

/* resolve.c; where an op's kernel or shape function is named: its m.def, or the manifest */
void nopi_op_where(const builder *b, int op, nopi_role role, const char **file, nopi_pos *pos);

/* check.c */
void nopi_build_explain_signature(builder *b, nopi_role role);
void nopi_locate_word(const char *path, const char *word, int *line, int *col);
bool nopi_object_defines(const object *o, const char *name, bool *is_function);
/* No object of objs (those compiled so far: the others are skipped) has code that runs at
 * load; 0, or -1 with the error at the source.  Before the registration's probe library
 * loads the shape objects, and again, with every object, in nopi_check_device_symbols. */
int nopi_check_load_time_code(builder *b, const object *objs, int nobjs);
int nopi_check_device_symbols(builder *b, const object *objs, int nobjs);
int nopi_check_definitions(builder *b, const object *objs, int nobjs);
int nopi_check_references(builder *b, const object *objs, int nobjs);

#endif /* NEURONOP_BUILDER_H */
