/*
 * buildkey.c - whether a build has anything to do: the build key (a hash of neuronop itself,
 * the manifest, every source, every header the build can see, the flags and the options) and
 * the stamp beside the library that records the key it was made from and which file it made.
 */
#include <dirent.h>
#include <errno.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builder.h"
#include "syscc.h"

/* ---- inputs and the build key ----------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The resolved path of the file name in dir, whose own resolved path is real_dir (NULL when
 * it could not be resolved), if it is a regular file or a symlink to one; NULL otherwise.
 * Only a symlink is resolved again: the path of any other entry is real_dir's with its name,
 * which saves a build resolving every folder on the way to each header (a readlink each). */
static char *resolved_entry(const char *dir, const char *real_dir, const struct dirent *e)
{
    char *spelled = nopi_path_join(dir, e->d_name);
    if (!spelled)
        return NULL;
    struct stat st;
    bool plain = e->d_type == DT_REG ||
                 (e->d_type == DT_UNKNOWN && lstat(spelled, &st) == 0 && S_ISREG(st.st_mode));
    char *path = NULL;
    if (plain && real_dir)
        path = nopi_path_join(real_dir, e->d_name);
    else if (plain || (e->d_type != DT_DIR && stat(spelled, &st) == 0 && S_ISREG(st.st_mode)))
        path = realpath(spelled, NULL);
    free(spelled);
    return path;
}

/* Adds dir's regular files that pass `want` to the list (sorted later), each by its resolved
 * path, so that the sorted list, and the key, are the same however the folder was named on
 * the command line ("lib", "./lib/", "$PWD/lib"). */
static int list_dir(const char *dir, bool (*want)(const char *), char ***list, size_t *n,
                    size_t *cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;   /* a folder that is not there holds no headers */
    char *real_dir = realpath(dir, NULL);
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !want(e->d_name))
            continue;
        char *path = resolved_entry(dir, real_dir, e);
        if (!path)
            continue;
        if (*n == *cap) {
            size_t newcap = *cap ? *cap * 2 : 16;
            char **l = realloc(*list, newcap * sizeof *l);
            if (!l) {
                free(path);
                rc = -1;
                break;
            }
            *list = l;
            *cap = newcap;
        }
        (*list)[(*n)++] = path;
    }
    free(real_dir);
    closedir(d);
    return rc;
}

static bool is_header(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && dot != name && (strcmp(dot, ".h") == 0 || strcmp(dot, ".hpp") == 0 ||
                                  strcmp(dot, ".hh") == 0 || strcmp(dot, ".hxx") == 0);
}

static bool any_file(const char *name)
{
    (void)name;
    return true;
}

/* Every header the build can see, by resolved path, sorted and without duplicates: all of
 * neuronop's include folders, and the *.h files of the user's. */
static int visible_headers(builder *b, char ***out, size_t *n)
{
    char **list = NULL;
    size_t cap = 0;
    *n = 0;
    int rc = 0;
    rc |= list_dir(b->include_dir, any_file, &list, n, &cap);
    static const char *const subs[] = { "neuronop", "torch", "torch/detail", "torchneuron",
                                        "neuron", "libtcc/sys" };
    for (size_t i = 0; i < NOPI_ARRAY_LEN(subs); i++) {
        char *sub = nopi_path_join(b->include_dir, subs[i]);
        rc |= sub ? list_dir(sub, any_file, &list, n, &cap) : -1;
        free(sub);
    }
    size_t ndirs, nown;   /* the user's folders, as the include scan looks in them */
    char **dirs = nopi_build_user_dirs(b, &ndirs, &nown);
    rc |= dirs ? 0 : -1;
    for (size_t i = 0; dirs && i < ndirs; i++)
        rc |= list_dir(dirs[i], is_header, &list, n, &cap);
    nopi_build_user_dirs_free(dirs, nown);
    if (*n)
        qsort(list, *n, sizeof *list, cmp_str);
    size_t w = 0;
    for (size_t r = 0; r < *n; r++) {
        if (w && strcmp(list[w - 1], list[r]) == 0)
            free(list[r]);
        else
            list[w++] = list[r];
    }
    *n = w;
    *out = list;
    return rc;
}

/* Adds a file to the key by canonical path and content, so the key does not depend on the
 * folder neuronop was started from (resolved: path is canonical already). */
static int hash_input(builder *b, nopi_hasher *h, const char *path, bool resolved, char hex[33])
{
    if (nopi_hash_file(path, hex) != 0)
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read '%s': %s", path,
                         strerror(errno));
    char *canonical = resolved ? NULL : realpath(path, NULL);
    nopi_hasher_add_str(h, canonical ? canonical : path);
    free(canonical);
    nopi_hasher_add_str(h, hex);
    return 0;
}

/* A file a build writes into its folder: no input of the key (a reviewer's find: with
 * build_directory '.', the library and its stamp made each build's key new). */
static bool not_build_output(const char *name)
{
    size_t n = strlen(name);
    bool lib = strncmp(name, "lib", 3) == 0;
    return !(lib && n > 3 && strcmp(name + n - 3, ".so") == 0) &&
           !(lib && n > 9 && strcmp(name + n - 9, ".so.stamp") == 0);
}

/* Adds dir's regular files to the list, and those of its folders but the build folder
 * (skip, whose outputs are left out when it is dir itself) and hidden ones, down to depth
 * levels; 0, 1 when it stopped past max files, -1 on no memory. */
static int list_tree(const char *dir, const char *skip, int depth, size_t max, char ***list,
                     size_t *n, size_t *cap)
{
    char *here = realpath(dir, NULL);
    bool build = here && skip && strcmp(here, skip) == 0;
    free(here);
    if (list_dir(dir, build ? not_build_output : any_file, list, n, cap) != 0)
        return -1;
    if (*n > max)
        return 1;
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
            continue;
        char *sub = nopi_path_join(dir, e->d_name);
        char *real = sub ? realpath(sub, NULL) : NULL;
        struct stat st;
        if (real && (!skip || strcmp(real, skip) != 0) && stat(real, &st) == 0 &&
            S_ISDIR(st.st_mode))
            rc = list_tree(sub, skip, depth - 1, max, list, n, cap);
        else if (!sub)
            rc = -1;
        free(real);
        free(sub);
    }
    closedir(d);
    return rc;
}

int nopi_build_folder_files(const builder *b, char ***files, size_t *n)
{
    size_t cap = *n;   /* files holds at least this many */
    const char *folder = b->o->library_dir ? b->o->library_dir : b->m->dir;
    char *skip = nopi_dirname(b->lib_path);
    char *real_skip = skip ? realpath(skip, NULL) : NULL;   /* none yet: nothing built */
    int listed = skip ? list_tree(folder, real_skip, 16, 4096, files, n, &cap) : -1;
    if (*n > 1)
        qsort(*files, *n, sizeof **files, cmp_str);
    size_t w = 0;   /* a file both there already and listed, once */
    for (size_t r = 0; r < *n; r++) {
        if (w && strcmp((*files)[w - 1], (*files)[r]) == 0)
            free((*files)[r]);
        else
            (*files)[w++] = (*files)[r];
    }
    *n = w;
    free(skip);
    free(real_skip);
    return listed;
}

/* Adds the files the sources include from the user's folders to the key: a header in a
 * subfolder, or a table.inc, changed without a rebuild (visible_headers sees the .h files
 * beside the sources alone).  When an #include names its file with a macro, every file of
 * the library's folder (--library-dir's, or the manifest's; but the build's outputs) is
 * added too, up to 4096 of them. */
static int hash_included(builder *b, nopi_hasher *h)
{
    const char **sources = malloc(((size_t)b->nsources + 1) * sizeof *sources);
    char **files = NULL;
    size_t nfiles = 0;
    bool computed = false;
    int rc = sources ? 0 : -1;
    for (int i = 0; rc == 0 && i < b->nsources; i++)
        sources[i] = b->sources[i].file;
    if (rc == 0)
        rc = nopi_build_included(b, sources, (size_t)b->nsources, &files, &nfiles, &computed);
    free(sources);
    if (rc == 0 && computed) {   /* and the whole folder */
        int listed = nopi_build_folder_files(b, &files, &nfiles);
        if (listed > 0)
            nopi_hasher_add_str(h, "past 4096 files");   /* hashed as far as listed */
        rc = listed < 0 ? -1 : 0;
    }
    if (rc != 0) {
        for (size_t i = 0; i < nfiles; i++)
            free(files[i]);
        free(files);
        return nopi_nomem(b->err);
    }
    nopi_hasher_add_str(h, computed ? "included: the folder" : "included");
    char hex[33];
    for (size_t i = 0; i < nfiles; i++) {
        if (rc == 0)
            rc = hash_input(b, h, files[i], true, hex);
        free(files[i]);
    }
    free(files);
    return rc;
}

/* The identity of the program doing the build.  Everything neuronop adds to a library - the
 * prelude, the trampolines, the descriptor, how it links - is code in this program, so a
 * changed neuronop must rebuild, whatever its version says.  The linker's GNU build ID names
 * the program's content and is read from memory; without one, the file is hashed. */
typedef struct self_id {
    uintptr_t addr;           /* an address inside the program: nop_build */
    nopi_hasher *h;
    bool found;
} self_id;

static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    self_id *id = arg;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        mine = ph->p_type == PT_LOAD && id->addr >= info->dlpi_addr + ph->p_vaddr &&
               id->addr < info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    if (!mine)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            size_t name = (n->n_namesz + 3) & ~3u, desc = (n->n_descsz + 3) & ~3u;
            const unsigned char *d = p + sizeof *n + name;
            if (d + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                memcmp(p + sizeof *n, "GNU", 4) == 0) {
                nopi_hasher_add(id->h, d, n->n_descsz);
                id->found = true;
                return 1;
            }
            p = d + desc;
        }
    }
    return 1;
}

static void hash_self(nopi_hasher *h)
{
    self_id id = { (uintptr_t)nop_build, h, false };
    dl_iterate_phdr(find_build_id, &id);
    Dl_info info;
    char hex[33];
    if (!id.found && dladdr((void *)nop_build, &info) && info.dli_fname &&
        nopi_hash_file(info.dli_fname, hex) == 0)
        nopi_hasher_add_str(h, hex);
}

/* Computes b->key and each source's hash. */
int nopi_build_key(builder *b)
{
    const nop_manifest *m = b->m;
    nopi_hasher *h = nopi_hasher_new();
    if (!h)
        return nopi_nomem(b->err);
    nopi_hasher_add_str(h, STAMP_MAGIC " " NOP_VERSION);
    hash_self(h);
    nopi_hasher_add_str(h, b->tcc_dir);
    nopi_hasher_add_str(h, b->o->memcheck ? "memcheck" : "plain");
    nopi_hasher_add_str(h, b->cc ? "cc" : "tcc");
    if (b->system_link) {   /* which system compilers: a changed $CXX or $CC rebuilds */
        nopi_hasher_add_str(h, nopi_cxx_program(m->cxx));
        nopi_hasher_add_str(h, nopi_cc_program());
    }
    char hex[33];
    int rc = hash_input(b, h, m->path, false, hex);
    for (int i = 0; rc == 0 && i < b->nsources; i++) {
        rc = hash_input(b, h, b->sources[i].file, false, b->sources[i].hash);
        nopi_hasher_add_str(h, b->sources[i].role == NOPI_ROLE_COMPUTE ? "compute" : "shape");
    }
    char **headers = NULL;
    size_t nheaders = 0;
    if (rc == 0 && visible_headers(b, &headers, &nheaders) != 0)
        rc = nopi_nomem(b->err);
    for (size_t i = 0; i < nheaders; i++) {
        if (rc == 0)
            rc = hash_input(b, h, headers[i], true, hex);   /* resolved */
        free(headers[i]);
    }
    free(headers);
    if (rc == 0)
        rc = hash_included(b, h);
    if (rc == 0)
        nopi_hasher_hex(h, b->key);
    nopi_hasher_free(h);
    return rc;
}

/* The library file's identity on this machine: its device, inode and change time.  None of
 * them can be set by the file's author: a checkout, a copy or an unpacked archive gets its
 * own, so a library and stamp that came from elsewhere (committed to a repository beside
 * wrong sources, say) never pass for this build's.  0, or -1 when the file is missing. */
static int lib_identity(const char *path, char *out, size_t cap)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    snprintf(out, cap, "%ju:%ju:%lld.%09ld", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
             (long long)st.st_ctim.tv_sec, (long)st.st_ctim.tv_nsec);
    return 0;
}

int nopi_build_unchanged(builder *b)
{
    char built[sizeof b->key];
    memcpy(built, b->key, sizeof built);
    if (nopi_build_key(b) != 0)
        return -1;
    if (strcmp(built, b->key) == 0)
        return 0;
    nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "the sources of '%s' changed while it was "
              "being built", b->m->name);
    nopi_detail(b->err, "a file saved during the build? the library and its stamp are left as "
                "they were: build it again once its files stay as they are");
    return -1;
}

int nopi_build_record(builder *b)
{
    char libhash[33], file[96], stamp[256];
    if (nopi_hash_file(b->lib_path, libhash) != 0 ||
        lib_identity(b->lib_path, file, sizeof file) != 0)
        return nopi_fail(b->err, NOP_ERR_INPUT, NULL, 0, 0, "cannot read back '%s'",
                         b->lib_path);
    snprintf(stamp, sizeof stamp, STAMP_MAGIC "\nkey %s\nlibrary %s\nfile %s\n", b->key,
             libhash, file);
    return nopi_build_write_atomically(b, b->stamp_path, stamp);
}

bool nopi_build_up_to_date(builder *b)
{
    char *stamp;
    if (nopi_read_file(b->stamp_path, &stamp, NULL) != 0)
        return false;
    char magic[64] = "", key[64] = "", libhash[64] = "", file[96] = "", actual[96];
    bool ok = sscanf(stamp, "%63[^\n]\nkey %63s\nlibrary %63s\nfile %95s", magic, key,
                     libhash, file) == 4 &&
              strcmp(magic, STAMP_MAGIC) == 0 && strcmp(key, b->key) == 0 &&
              lib_identity(b->lib_path, actual, sizeof actual) == 0 &&
              strcmp(actual, file) == 0 &&
              nopi_hash_file(b->lib_path, actual) == 0 && strcmp(actual, libhash) == 0;
    free(stamp);
    return ok;
}
