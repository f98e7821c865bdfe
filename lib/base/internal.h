/*
 * internal.h - helpers shared inside libneuronop (prefix nopi_).  Not installed.
 *
 * Owns: error-record filling, "did you mean", the growable string buffer, whole-file I/O and
 * path helpers, content hashing.  Each lib/ file that wraps a foreign library (base/yaml.c:
 * libyaml, build/compile.c: libtcc) has its own internal header; this one depends on nothing
 * but libc.
 */
#ifndef NEURONOP_INTERNAL_H
#define NEURONOP_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libneuronop.h"

#define NOPI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define NOPI_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- error records (error.c) ----
 * Each fills *err (when err is not NULL) and returns -1, so a failing path reads
 * `return nopi_fail(err, ...);`.  file may be NULL; line and col are 1-based, 0 if unknown. */
int nopi_fail(nop_error *err, enum nop_errkind kind, const char *file, int line, int col,
              const char *fmt, ...) NOPI_PRINTF(6, 7);
int nopi_vfail(nop_error *err, enum nop_errkind kind, const char *file, int line, int col,
               const char *fmt, va_list ap);
/* nopi_fail(err, NOP_ERR_DEVICE, NULL, 0, 0, fmt, ...) with err->fault set: a device failure
 * of that kind, at no place in a file.  Returns -1. */
int nopi_fault(nop_error *err, enum nop_fault fault, const char *fmt, ...)
    NOPI_PRINTF(3, 4);
/* nopi_fail(err, NOP_ERR_NOMEM, ..., "out of memory"): the one wording of that error. */
int nopi_nomem(nop_error *err);
/* Appends a line to err->diag.detail (a hint or an excerpt shown under the message). */
void nopi_detail(nop_error *err, const char *fmt, ...) NOPI_PRINTF(2, 3);
/* Sends a diagnostic to a sink if there is one. */
void nopi_emit(nop_diag_fn *fn, void *ctx, enum nop_severity sev, const char *file, int line,
               int col, const char *fmt, ...) NOPI_PRINTF(7, 8);
/* Bounded copy that always terminates. */
void nopi_strlcpy(char *dst, const char *src, size_t size);
/* Makes s text that any reader shows as it is, in place: every byte of what is not a UTF-8
 * character, and of a control character but newline and tab (C0, DEL, C1), a bidirectional
 * control (U+202E and its kind), or a noncharacter U+FFFE or U+FFFF (which XML forbids),
 * becomes '?'; so does the second character of a CI runner's command, which would hide or
 * rewrite lines of a CI log ("##[" anywhere, "##vso[", and "::" first on a line after
 * blanks: GitHub Actions' and Azure Pipelines').  For what a worker sends:
 * its messages reach the terminal, the JUnit file and the JSON report, where an escape
 * sequence or a byte that is not UTF-8 would hide lines or break the file. */
void nopi_text_clean(char *s);
/* As nopi_text_clean, and one line: a newline or tab becomes '?' too (a label, a message's
 * first line, which a line of another's choosing must not follow). */
void nopi_line_clean(char *s);
/* Makes every text of d plain (nopi_line_clean; nopi_text_clean for the detail), as the
 * public header promises of every record: done as records are filled, and again where a
 * record made elsewhere (a compiler's message) is handed out. */
void nopi_diag_clean(nop_diag *d);

/* tensor_host.c: the generator a spec that is not one (nor a file) was probably meant to
 * be: "zeroes:4x4" -> "zeros", "ful:4x4:2.5" -> "full"; NULL when what comes before its first
 * colon is not a near-miss of a generator's name (letters only: no path). */
const char *nopi_generator_like(const char *spec);
/* Whether an argument spec reads as a number (strtod takes all of it: 2.5, -1e3, inf, nan):
 * where a tensor goes and no such file is there, a number given by mistake (values.c); in a
 * manifest read before its ops are known (a C++ library's), a number, or, for a tensor, a
 * file of that name in the library folder (manifest_tests.c, testrun.c). */
bool nopi_number_like(const char *spec);
/* A number as Python's int() and float() read its text: an int when it is written as a
 * whole decimal number (010 is ten), kept to every digit; else a float, as strtod reads it
 * (1e-310 and 1e400 too). */
typedef struct nopi_number {
    bool whole;         /* a Python int */
    bool past_int64;    /* a whole number int64 cannot hold (torch cannot unpack it) */
    long long n;        /* a whole number's value */
    double v;           /* the value as a double */
} nopi_number;
/* Reads text into *num; false when it is no number. */
bool nopi_number_read(const char *text, nopi_number *num);
/* Whether spec, a generator (nop_is_generator), is one nop_tensor_generate can make, without
 * making it: 0, or -1 with err filled as nop_tensor_generate would fill it. */
int nopi_generator_check(const char *spec, nop_error *err);

/* ---- did you mean (closest.c) ----
 * Edit distance, for "did you mean" suggestions (nop_closest is the public form). */
size_t nopi_edit_distance(const char *a, const char *b);

/* ---- argument types and signatures (signature.c) ----
 * The manifest names of enum nop_argtype, by value; "a" or "an" before one; and an op's
 * signature, "name(tensor, scalar)", from its types, cut to fit buf. */
extern const char *const nopi_argtype_names[4];
const char *nopi_argtype_article(int type);
void nopi_signature(const char *name, const int *types, int n, char *buf, size_t size);
/* Adds "signature: name(...)" to err's detail lines. */
void nopi_signature_detail(const char *name, const int *types, int n, nop_error *err);
/* The one argument-count check: 0 when given == n, else -1 with an input error naming the op,
 * the counts and the signature. */
int nopi_check_nargs(const char *name, const int *types, int n, int given, nop_error *err);

/* ---- growable string (strbuf.c) ----
 * s is always NUL-terminated once initialised with NOPI_STRBUF_INIT.  On out-of-memory the
 * buffer is marked failed and further appends are ignored; check sb.oom before using it. */
typedef struct nopi_strbuf {
    char *s;
    size_t len, cap;
    bool oom;
} nopi_strbuf;
#define NOPI_STRBUF_INIT { NULL, 0, 0, false }
void nopi_sb_add(nopi_strbuf *sb, const char *s, size_t n);
void nopi_sb_puts(nopi_strbuf *sb, const char *s);
void nopi_sb_printf(nopi_strbuf *sb, const char *fmt, ...) NOPI_PRINTF(2, 3);
void nopi_sb_c_string(nopi_strbuf *sb, const char *s);    /* as a C string literal */
void nopi_sb_json_string(nopi_strbuf *sb, const char *s); /* as a JSON string */
char *nopi_sb_take(nopi_strbuf *sb);   /* caller owns the result; sb is reset; NULL if oom */
void nopi_sb_free(nopi_strbuf *sb);

/* ---- files and paths (file.c) ---- */
/* Reads a whole regular file into a malloc'd NUL-terminated buffer.  -1 with errno set on
 * failure: EISDIR or EINVAL, before reading a byte, for a folder or anything but a regular
 * file (a FIFO would block, /dev/zero never end: a symbolic link in a folder that came with
 * the sources can name either). */
int nopi_read_file(const char *path, char **data, size_t *len);
/* The same, of at most cap bytes: the first ones, or with tail the last ones; *whole (may be
 * NULL) gets the file's size, so whole - len bytes were not read. */
int nopi_read_part(const char *path, size_t cap, bool tail, char **data, size_t *len,
                   unsigned long long *whole);
/* Reads an input file the user named (what: "manifest", ".npy file") into a malloc'd,
 * NUL-terminated buffer: only a regular file of at most cap bytes, so a directory, a FIFO or
 * /dev/zero is refused at once with what it is.  -1 with an input error naming the file. */
int nopi_read_input(const char *path, const char *what, size_t cap, char **data, size_t *len,
                    nop_error *err);
/* Line `line` (1-based) of a text file, without its newline, cut to fit buf.  -1 when the
 * file cannot be read, is not a regular file (a FIFO, /dev/zero: a #line can name any), or
 * has fewer lines in its first NOPI_LINE_SCAN_MAX bytes. */
#define NOPI_LINE_SCAN_MAX (64LL << 20)
int nopi_read_line(const char *path, int line, char *buf, size_t size);
/* Whether a and b (stat results) are the same file with the same contents, as far as stat
 * tells: device, inode, size, modification time and change time (which no one can set: a
 * file rewritten in place with its old time kept, by cp -p or touch -r, is another). */
struct stat;
bool nopi_same_file(const struct stat *a, const struct stat *b);
/* True when path names a C++ source: .cpp, .cc or .cxx (the build compiles it as C++; the
 * device words its messages in C++). */
bool nopi_is_cxx_source(const char *path);
/* Appends "  N | text", line d->line of d->file, to d's detail when the file can be read:
 * the source excerpt under a compile message. */
void nopi_diag_add_excerpt(nop_diag *d);
/* Joins dir and rel unless rel is absolute; malloc'd; NULL on no memory. */
char *nopi_path_join(const char *dir, const char *rel);
/* build/confine.c: true when path resolves to root or inside it (symlinks resolved; a part
 * that does not exist yet is taken as written and must not contain ".."); resolved (may be
 * NULL) gets the resolved path for messages, or path itself when it cannot be resolved.  A
 * folder another process creates meanwhile (a concurrent build's) does not make it false. */
bool nopi_confine_within(const char *root, const char *path, char *resolved, size_t size);
/* The directory part of path ("." when none); malloc'd. */
char *nopi_dirname(const char *path);
/* Whether path is dir or lies beneath it, by their text (resolve both first). */
bool nopi_path_within(const char *path, const char *dir);
/* mkdir -p.  -1 with errno set on failure. */
int nopi_mkdirs(const char *path);

/* cgroup.c: the tightest limit the process's cgroups set, read from the files under root
 * ("" for the system's own: /proc/self/cgroup and /sys/fs/cgroup; a test's tree otherwise);
 * 0 when none is set or nothing can be read.  The CPU bandwidth limit in CPUs (for
 * nop_cpus_usable), the memory limit in bytes (for the bound on a worker's records). */
double nopi_cgroup_cpu_limit(const char *root);
double nopi_cgroup_memory_limit(const char *root);

/* hostmem.c: buffers of NOPI_HUGE_FROM bytes or more are whole transparent huge pages (one
 * fault each rather than one per 4 KiB page: see there why that matters); free them all with
 * free().  nopi_host_zalloc: n zeroed bytes, mapped; nopi_host_block: n bytes, uninitialised,
 * for data written over at once (a record read into it).  NULL on no memory. */
#define NOPI_HUGE_FROM ((size_t)512 << 10)
void *nopi_host_zalloc(size_t n);
void *nopi_host_block(size_t n);
/* Asks the kernel to map [p, p + len)'s whole pages at once, writable (best effort; nothing
 * on kernels before 5.14): fresh memory otherwise takes a page fault per page at its first
 * write, and on a virtual machine a fault costs more than filling the page (17 us here: 2 ms
 * for a 512 KiB tensor). */
void nopi_prefault(void *p, size_t len);
/* reap.c: waits for child `leader` (a process group's, killed or ending) and returns its wait
 * status; then, the leader's end seen but before it is reaped, kills what is left of its
 * group, and reaps those of them this process adopted (a subreaper's: prctl
 * PR_SET_CHILD_SUBREAPER), so that none is left running or a zombie. */
int nopi_reap_group(pid_t leader);
/* The same, with the leader's wait status in *status and its resource use in *ru (may be
 * NULL); 0, or -1 when the leader could not be waited for. */
struct rusage;
int nopi_reap_group_usage(pid_t leader, int *status, struct rusage *ru);
/* Monotonic clock in seconds. */
double nopi_now(void);
/* The calling thread's CPU time in seconds: unlike nopi_now, it stands still while the host
 * runs something else, so it measures code without the machine's load. */
double nopi_thread_cpu_now(void);
/* Writes the n buffers, in order, to path through a temporary file beside it (made with
 * O_EXCL under a name no one can guess) and rename(2), so path appears whole or not at all,
 * and whatever path was (a symlink included) is replaced: for neuronop's own files.  0, or
 * -1 with err filled (an input error). */
int nopi_write_whole(const char *path, const void *const *bufs, const size_t *lens, int n,
                     nop_error *err);
/* The same for a file the user named (-o, --trace, --junit), except that a device, FIFO or
 * terminal (/dev/null), directly or through a symlink, and a link to the caller's standard
 * output or error (/dev/stdout) are written in place, as a shell's > would, never replaced.
 * A symlink to a regular file, or to nothing, is replaced like a file: a library folder is
 * untrusted, and a planted link must not redirect the write.  0, or -1 with err filled. */
int nopi_write_output(const char *path, const void *const *bufs, const size_t *lens, int n,
                      nop_error *err);

/* ---- hashing (hash.c): XXH3-128 as 32 hex digits ---- */
typedef struct nopi_hasher nopi_hasher;
nopi_hasher *nopi_hasher_new(void);
void nopi_hasher_add(nopi_hasher *h, const void *data, size_t len);
void nopi_hasher_add_str(nopi_hasher *h, const char *s);   /* includes the terminating NUL */
void nopi_hasher_hex(nopi_hasher *h, char out[33]);
void nopi_hasher_free(nopi_hasher *h);
void nopi_hash_hex(const void *data, size_t len, char out[33]);
/* Hashes a file's content; -1 with errno set when it cannot be read. */
int nopi_hash_file(const char *path, char out[33]);

#endif /* NEURONOP_INTERNAL_H */
