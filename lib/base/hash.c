/*
 * hash.c - content hashes for incremental builds and library metadata (XXH3-128, libxxhash).
 *
 * A non-cryptographic hash is enough: it detects changes, it does not defend against a user
 * forging their own sources.  XXH3 hashes a source file in microseconds, which keeps the
 * up-to-date check of `neuronop build` within its few-millisecond budget.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "internal.h"

struct nopi_hasher {
    XXH3_state_t *state;
};

nopi_hasher *nopi_hasher_new(void)
{
    nopi_hasher *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    h->state = XXH3_createState();
    if (!h->state || XXH3_128bits_reset(h->state) != XXH_OK) {
        XXH3_freeState(h->state);
        free(h);
        return NULL;
    }
    return h;
}

void nopi_hasher_add(nopi_hasher *h, const void *data, size_t len)
{
    XXH3_128bits_update(h->state, data, len);
}

void nopi_hasher_add_str(nopi_hasher *h, const char *s)
{
    nopi_hasher_add(h, s, strlen(s) + 1);
}

static void to_hex(XXH128_hash_t v, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)v.high64,
             (unsigned long long)v.low64);
}

void nopi_hasher_hex(nopi_hasher *h, char out[33])
{
    to_hex(XXH3_128bits_digest(h->state), out);
}

void nopi_hasher_free(nopi_hasher *h)
{
    if (!h)
        return;
    XXH3_freeState(h->state);
    free(h);
}

void nopi_hash_hex(const void *data, size_t len, char out[33])
{
    to_hex(XXH3_128bits(data, len), out);
}

int nopi_hash_file(const char *path, char out[33])
{
    /* read a block at a time (the same hash as of the whole: XXH3 streams), so a file of
     * gigabytes a source includes costs no memory (a reviewer's find: out of memory) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {   /* a FIFO or a device never ends */
        close(fd);
        errno = EINVAL;
        return -1;
    }
    XXH3_state_t *state = XXH3_createState();
    if (!state || XXH3_128bits_reset(state) != XXH_OK) {
        XXH3_freeState(state);
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    static const size_t block = 64 * 1024;
    unsigned char *buf = malloc(block);
    ssize_t n = buf ? 0 : -1;
    while (buf && (n = read(fd, buf, block)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        XXH3_128bits_update(state, buf, (size_t)n);
    }
    int e = buf ? errno : ENOMEM;
    if (n == 0)
        to_hex(XXH3_128bits_digest(state), out);
    free(buf);
    XXH3_freeState(state);
    close(fd);
    errno = e;
    return n == 0 ? 0 : -1;
}
