/* libFuzzer target: the parent's reading of a worker's records (lib/isolate/watch.c, take.c),
 * on any bytes.  The worker runs user code, so whatever comes down its record pipe may have
 * been written by a hostile kernel: every length, count and type must be checked before it
 * is used or anything is allocated for it.  The bytes are read as a run's records are, then
 * taken into a run result, which is then freed. */
#include <sys/mman.h>

#include "fuzz.h"
#include "isolate/sandbox.h"

static int take_run(void *ctx, uint32_t type, const void *data, size_t len, void **own)
{
    return nopi_run_take(ctx, type, data, len, own) == 0 ? 0 : -1;
}

static void drop_diag(void *ctx, const nop_diag *d)
{
    (void)ctx, (void)d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static nop_profile *profile;
    static nop_device *dev;
    static struct nopi_phase_page *page;
    if (!dev) {   /* made once: a device costs more than most inputs (run from the tree) */
        nop_error err;
        nop_device_opts o = { .diag = drop_diag };
        if (nop_profile_load(&profile, "trn1", "share/neuronop", &err) != 0 ||
            nop_device_new(&dev, profile, &o, &err) != 0 ||
            !(page = aligned_alloc(4096, sizeof *page)))
            abort();
        memset(page, 0, sizeof *page);
    }
    int fd = memfd_create("records", MFD_CLOEXEC);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET))
        abort();
    nop_run_result r;
    memset(&r, 0, sizeof r);
    nopi_watch wt = { .dev = dev, .phase = page, .op = "fuzz", .budget = 5, .timeout = 1,
                      .runs = 1, .ncores = 8, .take = take_run, .ctx = &r };
    nopi_watch_start(&wt);
    nopi_watch_read(&wt, fd);   /* to the end of the bytes: a memfd never blocks */
    close(fd);
    nop_run_result_clear(&r);
    return 0;
}
