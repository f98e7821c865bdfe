/*
 * channel.c - the transport both sides of a worker process use: whole reads and writes, and
 * requests (a length, the bytes, and a descriptor that may come with them) on a socket.
 * Requests go from the parent to a worker or zygote, from a zygote to its child, and a
 * zygote's words about its children go back to the parent the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "server.h"

int nopi_fd_all(int fd, void *data, size_t len, bool writing)
{
    char *p = data;
    while (len) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int nopi_send_request(int fd, const void *req, size_t len, const int *pass, int npass)
{
    uint64_t n = len;
    struct iovec iov[2] = { { &n, sizeof n }, { (void *)req, len } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
    union { char buf[CMSG_SPACE(NOPI_MAX_PASS * sizeof(int))]; struct cmsghdr align; } u;
    if (npass > 0 && npass <= NOPI_MAX_PASS) {
        memset(&u, 0, sizeof u);
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE((size_t)npass * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN((size_t)npass * sizeof(int));
        memcpy(CMSG_DATA(c), pass, (size_t)npass * sizeof(int));
    }
    size_t left = sizeof n + len;
    while (left) {
        ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        m.msg_control = NULL;   /* the descriptors went with the first bytes */
        m.msg_controllen = 0;
        left -= (size_t)k;
        while (k > 0) {   /* skip what was sent */
            size_t step = (size_t)k < m.msg_iov->iov_len ? (size_t)k : m.msg_iov->iov_len;
            m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + step;
            m.msg_iov->iov_len -= step;
            k -= (ssize_t)step;
            if (!m.msg_iov->iov_len && m.msg_iovlen > 1)
                m.msg_iov++, m.msg_iovlen--;
        }
    }
    return 0;
}

/* Receives from fd into the n buffers at iov (up to their size, at least `least` bytes unless
 * the sender is gone), and the descriptors that came with the first of them into got[0,
 * ngot) (-1: none; any more are closed); the bytes received, or -1. */
static ssize_t receive(int fd, struct iovec *iov, int n, size_t least, int *got, int ngot)
{
    union { char buf[CMSG_SPACE(NOPI_MAX_PASS * sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf };
    ssize_t k;
    for (int i = 0; i < ngot; i++)
        got[i] = -1;
    int flags = MSG_CMSG_CLOEXEC | (least == iov[0].iov_len && n == 1 ? MSG_WAITALL : 0);
    while ((k = recvmsg(fd, &m, flags)) < 0 && errno == EINTR)
        ;
    struct cmsghdr *c = k > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(0)) {
        int nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < nfd && i < NOPI_MAX_PASS; i++) {   /* ones not asked for: closed */
            int d;
            memcpy(&d, CMSG_DATA(c) + (size_t)i * sizeof d, sizeof d);
            if (i < ngot)
                got[i] = d;
            else
                close(d);
        }
    }
    return k;
}

bool nopi_read_request(int fd, char **req, uint64_t *len, int *got, int ngot)
{
    struct iovec iov = { len, sizeof *len };
    if (receive(fd, &iov, 1, sizeof *len, got, ngot) != (ssize_t)sizeof *len ||
        *len > MAX_REQUEST)
        return false;
    char *nr = realloc(*req, *len ? (size_t)*len : 1);
    if (!nr)
        return false;
    *req = nr;
    return nopi_fd_all(fd, nr, (size_t)*len, false) == 0;
}

bool nopi_read_request_alone(int fd, char **req, uint64_t *len, int *got, int ngot)
{
    char first[4096];
    struct iovec iov[2] = { { len, sizeof *len }, { first, sizeof first } };
    ssize_t k = receive(fd, iov, 2, 1, got, ngot);
    if (k <= 0)
        return false;
    size_t head = (size_t)k < sizeof *len ? (size_t)k : sizeof *len;
    if (head < sizeof *len &&
        nopi_fd_all(fd, (char *)len + head, sizeof *len - head, false) != 0)
        return false;
    size_t have = (size_t)k - head;   /* of the request's bytes, in first */
    if (*len > MAX_REQUEST || have > *len)
        return false;   /* more than one request: not a socket of one at a time */
    char *nr = realloc(*req, *len ? (size_t)*len : 1);
    if (!nr)
        return false;
    *req = nr;
    memcpy(nr, first, have);
    return nopi_fd_all(fd, nr + have, (size_t)*len - have, false) == 0;
}
