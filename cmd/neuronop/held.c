/*
 * held.c - device diagnostics held while a multicore run goes on (report_hold), and printed
 * when it ends (report_release): one broken rule on every core was eight lines that differed
 * only in the core's number (a new user's find), and is one, "OP: cores 0-7: error: ...".
 * Messages print in the order they first came; a diagnostic not about one core is held in
 * its place.
 *
 * What is held is also kept rendered, as it would be printed, so that neuronop ended by a
 * signal while a run is held (a CI job's time limit: SIGTERM) still says what the run said
 * so far (a reviewer's find: a warning, then a spin, and a killed neuronop said nothing).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

typedef struct held_diag {
    nop_diag d;
    char op[sizeof ((nop_diag *)0)->where];   /* where without ": core N"; "" when other */
    uint64_t cores;                          /* the cores that said it, by number */
} held_diag;

enum { HELD_MAX = 64 };   /* past this many distinct messages, all print as they come */
static held_diag held[HELD_MAX];
static int nheld;
static bool holding;

/* The held messages as they would print, in one of two buffers: a signal handler writes
 * the one `shown` names, which is never the one being rendered (-1: none). */
enum { RENDERED_MAX = HELD_MAX * (REPORT_LINE_MAX + sizeof ((nop_diag *)0)->detail + 2) };
static char rendered[2][RENDERED_MAX];
static size_t rendered_len[2];
static volatile sig_atomic_t shown = -1;

static const int fatal[] = { SIGTERM, SIGINT, SIGHUP };
static struct sigaction before[sizeof fatal / sizeof fatal[0]];
static bool caught[sizeof fatal / sizeof fatal[0]];

/* The core named at the end of where ("relu_forward: core 7"), whose op part is copied to
 * op; -1 when where names no core below 64. */
static int core_of(const char *where, char *op, size_t size)
{
    const char *p = strstr(where, ": core ");
    if (!p)
        return -1;
    while (strstr(p + 1, ": core "))
        p = strstr(p + 1, ": core ");   /* the last: an op's name may hold the words */
    char *end;
    errno = 0;
    long id = strtol(p + 7, &end, 10);
    if (errno || end == p + 7 || *end || id < 0 || id >= 64 || (size_t)(p - where) >= size)
        return -1;
    snprintf(op, size, "%.*s", (int)(p - where), where);
    return (int)id;
}

static bool same_message(const nop_diag *a, const nop_diag *b)
{
    return a->severity == b->severity && !strcmp(a->msg, b->msg) &&
           !strcmp(a->detail, b->detail) && !strcmp(a->file, b->file) &&
           a->line == b->line && a->col == b->col;
}

/* h's where: d's own, or with its cores as ranges, "OP: cores 0-3, 5". */
static const char *where_of(const held_diag *h, char *buf, size_t size)
{
    if (!h->op[0])
        return h->d.where;
    size_t len = (size_t)snprintf(buf, size, "%s: core%s", h->op,
                                  (h->cores & (h->cores - 1)) ? "s" : "");
    const char *sep = " ";
    for (int i = 0; i < 64 && len < size; i++) {
        if (!(h->cores >> i & 1))
            continue;
        int j = i;
        while (j + 1 < 64 && (h->cores >> (j + 1) & 1))
            j++;
        len += (size_t)(j == i ? snprintf(buf + len, size - len, "%s%d", sep, i)
                               : snprintf(buf + len, size - len, "%s%d-%d", sep, i, j));
        sep = ", ";
        i = j;
    }
    return buf;
}

/* Renders what is held into the buffer not shown, then shows it. */
static void render(void)
{
    int next = shown == 0 ? 1 : 0;
    char *out = rendered[next];
    size_t len = 0;
    for (int i = 0; i < nheld; i++) {
        char where[sizeof held[i].op + 256];
        const char *w = where_of(&held[i], where, sizeof where);
        int n = report_format(&held[i].d, w, out + len, RENDERED_MAX - len);
        len += n > 0 ? (size_t)n : 0;
        if (len >= RENDERED_MAX - 1)
            break;
        n = snprintf(out + len, RENDERED_MAX - len, "\n%s%s", held[i].d.detail,
                     held[i].d.detail[0] ? "\n" : "");
        len += n > 0 ? (size_t)n : 0;
        if (len >= RENDERED_MAX - 1)
            break;
    }
    rendered_len[next] = len < RENDERED_MAX ? len : RENDERED_MAX - 1;
    atomic_signal_fence(memory_order_seq_cst);   /* the text before the index a handler reads */
    shown = next;
}

/* SIGTERM, SIGINT or SIGHUP while held: the held messages, then the signal's own end.  The
 * others are blocked meanwhile (sa_mask), and a standard error that takes nothing for a
 * tenth of a second is given up (a reviewer's find: a full pipe kept neuronop from ending). */
static void on_fatal(int sig)
{
    int i = shown;
    if (i >= 0) {
        const char *p = rendered[i];
        size_t left = rendered_len[i];
        struct pollfd pfd = { .fd = STDERR_FILENO, .events = POLLOUT };
        while (left > 0 && poll(&pfd, 1, 100) == 1 && (pfd.revents & POLLOUT)) {
            ssize_t n = write(STDERR_FILENO, p, left);
            if (n <= 0)
                break;
            p += n;
            left -= (size_t)n;
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_fatal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sa.sa_flags = SA_ONSTACK;   /* a core's thread has its own stack for signals: not a
                                 * kernel's few KB (with the sandbox off, cores are threads) */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaddset(&sa.sa_mask, fatal[i]);   /* one handler at a time: one copy printed */
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        caught[i] = sigaction(fatal[i], NULL, &before[i]) == 0 &&
                    before[i].sa_handler == SIG_DFL &&   /* an ignored one stays ignored */
                    sigaction(fatal[i], &sa, NULL) == 0;
    }
}

static void uncatch_fatal(void)
{
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        if (caught[i])
            sigaction(fatal[i], &before[i], NULL);
    memset(caught, 0, sizeof caught);
}

void report_release(void)
{
    /* a signal meanwhile waits for the messages to be printed, then takes its own course
     * (a reviewer's find: between the handlers' removal and the print, it lost them) */
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        sigaddset(&block, fatal[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    for (int i = 0; i < nheld; i++) {
        char where[sizeof held[i].op + 256];
        report_print(&held[i].d, where_of(&held[i], where, sizeof where));
    }
    fflush(stderr);
    nheld = 0;
    shown = -1;
    if (holding)
        uncatch_fatal();
    holding = false;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void report_hold(bool multicore)
{
    report_release();
    if (!multicore)
        return;
    holding = true;
    catch_fatal();
}

bool report_held(const nop_diag *d)
{
    if (!holding)
        return false;
    char op[sizeof d->where];
    int core = core_of(d->where, op, sizeof op);
    for (int i = 0; core >= 0 && i < nheld; i++)
        if (!strcmp(held[i].op, op) && !(held[i].cores >> core & 1) &&
            same_message(&held[i].d, d)) {
            held[i].cores |= (uint64_t)1 << core;
            render();
            return true;
        }
    if (nheld == HELD_MAX) {   /* those first, in their order, then d and the rest */
        report_release();
        return false;
    }
    held_diag *h = &held[nheld++];
    h->d = *d;
    h->op[0] = '\0';
    h->cores = 0;
    if (core >= 0) {
        snprintf(h->op, sizeof h->op, "%s", op);
        h->cores = (uint64_t)1 << core;
    }
    render();
    return true;
}
