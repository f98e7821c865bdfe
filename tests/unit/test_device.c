/* Unit tests of the virtual device: runs through the library API, the TCM pool, and two
 * devices working at once in one process. */
#include <pthread.h>

#include "unit.h"
#include "device/device.h"

static const char *const kernels =
    "#include <neuronop.h>\n"
    "nt_tensor *pool(const nt_tensor *t) {\n"
    "    /* how many 1 KB blocks fit in this core's pool, then free them all */\n"
    "    void *p[64]; int n = 0;\n"
    "    while (n < 64 && (p[n] = tcm_malloc(1024)) != 0) n++;\n"
    "    for (int i = 0; i < n; i++) tcm_free(p[i]);\n"
    "    nt_tensor *out = get_dst_tensor();\n"
    "    nt_accessor a = nt_accessor_of(out);\n"
    "    nt_set_f32(&a, (float)n, 0);\n"
    "    return out;\n"
    "}\n"
    "nt_tensor *twice(const nt_tensor *t, int64_t k) {\n"
    "    return nt_mul_s_out(get_dst_tensor(), t, nt_scalar_i(2 * k));\n"
    "}\n"
    "/* a store 100 bytes into the pool, past what the run's check looks at (16 + 64) */\n"
    "nt_tensor *wild(const nt_tensor *t) {\n"
    "    char *p = tcm_malloc(16);\n"
    "    p[100] = 1;\n"
    "    tcm_free(p);\n"
    "    return nt_fill_(get_dst_tensor(), nt_scalar_i(0));\n"
    "}\n"
    "/* 40 bytes, all of them its own: what tcm_free looks at past them reaches byte 100 */\n"
    "nt_tensor *tiny(const nt_tensor *t) {\n"
    "    float *p = tcm_malloc(40);\n"
    "    for (int i = 0; i < 10; i++) p[i] = 1.0f;\n"
    "    tcm_free(p);\n"
    "    return nt_fill_(get_dst_tensor(), nt_scalar_i(0));\n"
    "}\n";
static const char *const shapes =
    "#include <neuronop.h>\n"
    "nt_tensor *one(const nt_tensor *t) { return nt_empty(NT_SHAPE(1), NT_F32); }\n"
    "nt_tensor *same(const nt_tensor *t, int64_t k) {\n"
    "    return nt_empty(nt_dim(t), nt_sizes(t), nt_dtype_of(t)); }\n";

static const char *dir;
static nop_library *lib;
static nop_profile *profile;

static int setup(void **state)
{
    dir = unit_tmpdir();
    lib = unit_build(dir, "name: dev\ncompute_srcs: [k.c]\nshape_srcs: [s.c]\n"
                     "ops:\n  pool: {args: [tensor], shape: one, kernel: pool}\n"
                     "  twice: {args: [tensor, int64], shape: same, kernel: twice}\n"
                     "  wild: {args: [tensor], shape: one, kernel: wild}\n"
                     "  tiny: {args: [tensor], shape: one, kernel: tiny}\n",
                     kernels, shapes, false);
    nop_error err;
    if (!lib || nop_profile_load(&profile, "trn1", unit_share_dir(), &err) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    nop_library_close(lib);
    nop_profile_free(profile);
    unit_cleanup(dir);
    return 0;
}

/* Runs pool on dev: the 1 KB blocks its core's TCM pool held; *peak gets the pool's peak. */
static double blocks_in_pool(nop_device *dev, int64_t *peak)
{
    nop_error err;
    nop_tensor *t;
    assert_int_equal(nop_tensor_generate(&t, "zeros:1", 0, &err), 0);
    nop_value v = { .type = NOP_ARG_TENSOR, .tensor = t };
    nop_run_result res;
    assert_int_equal(nop_device_run(dev, lib, nop_library_find_op(lib, "pool"), &v, 1, &res,
                                    &err), 0);
    double blocks = nop_tensor_get(res.output, 0);
    *peak = res.cores[0].counters.tcm_peak;
    nop_run_result_clear(&res);
    nop_tensor_free(t);
    return blocks;
}

static void tcm_pool_holds_16_kb(void **state)
{
    nop_device *dev;
    nop_error err;
    assert_int_equal(nop_device_new(&dev, profile, NULL, &err), 0);
    int64_t peak;
    assert_true(blocks_in_pool(dev, &peak) == 16.0);
    assert_int_equal(peak, 16384);
    nop_device_free(dev);
}

static void arguments_must_match(void **state)
{
    nop_device *dev;
    nop_error err;
    assert_int_equal(nop_device_new(&dev, profile, NULL, &err), 0);
    nop_value v = { .type = NOP_ARG_DOUBLE, .d = 1 };
    nop_run_result res;
    assert_int_equal(nop_device_run(dev, lib, nop_library_find_op(lib, "pool"), &v, 1, &res,
                                    &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_non_null(strstr(err.diag.msg, "must be a tensor, not a double"));
    nop_run_result_clear(&res);
    nop_device_free(dev);
}

/* A benchmark whose run fails keeps nothing, in this process as in a worker: the caller
 * has no result to clear. */
static void a_failed_benchmark_keeps_nothing(void **state)
{
    nop_device *dev;
    nop_error err;
    assert_int_equal(nop_device_new(&dev, profile, NULL, &err), 0);
    nop_value v = { .type = NOP_ARG_DOUBLE, .d = 1 };
    nop_bench_opts o = { .warmup = 0, .iters = 3 };
    nop_bench_result b;
    assert_int_equal(nop_bench(dev, lib, nop_library_find_op(lib, "pool"), &v, 1, &o, &b,
                               &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_null(b.seconds);
    assert_int_equal(b.runs, 0);
    assert_null(b.fastest.cores);
    nop_device_free(dev);
}

/* A traced device records spans (pool's 33 tcm_malloc and tcm_free calls, on its one core) and
 * saves them; an untraced one, alongside, records nothing. */
static void only_a_traced_device_records(void **state)
{
    nop_device *plain, *traced;
    nop_error err;
    nop_device_opts o = { .trace = true };
    assert_int_equal(nop_device_new(&plain, profile, NULL, &err), 0);
    assert_int_equal(nop_device_new(&traced, profile, &o, &err), 0);
    nop_tensor *t;
    assert_int_equal(nop_tensor_generate(&t, "zeros:1", 0, &err), 0);
    nop_value v = { .type = NOP_ARG_TENSOR, .tensor = t };
    nop_run_result a, b;
    int op = nop_library_find_op(lib, "pool");
    assert_int_equal(nop_device_run(traced, lib, op, &v, 1, &b, &err), 0);
    assert_int_equal(nop_device_run(plain, lib, op, &v, 1, &a, &err), 0);
    assert_null(a.trace);
    assert_non_null(b.trace);
    nop_model m;
    nop_model_run(profile, &b, 1.0, &m);
    nop_trace_info info;
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    assert_int_equal(nop_trace_save(&b, profile, &m, NOP_TRACE_MODELED, "pool", path, &info,
                                    &err), 0);
    assert_int_equal(info.spans, 33);   /* 16 tcm_malloc that succeed, 1 that fails, 16 frees */
    assert_int_equal(info.drawn, info.spans);
    assert_int_equal(nop_trace_save(&a, profile, &m, NOP_TRACE_HOST, "pool", path, &info,
                                    &err), -1);
    assert_non_null(strstr(err.diag.msg, "not traced"));
    nop_run_result_clear(&a);
    nop_run_result_clear(&b);
    nop_tensor_free(t);
    nop_device_free(plain);
    nop_device_free(traced);
}

typedef struct job {
    int64_t k;
    int failures;
} job;

/* Each thread has its own device and runs `twice` with its own factor many times. */
static void *hammer(void *arg)
{
    job *j = arg;
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .schedule = NOP_SCHED_SEQUENTIAL };
    if (nop_device_new(&dev, profile, &o, &err) != 0)
        return NULL;
    nop_tensor *t;
    nop_tensor_generate(&t, "arange:64", 0, &err);
    nop_value v[2] = { { .type = NOP_ARG_TENSOR, .tensor = t },
                       { .type = NOP_ARG_INT64, .i = j->k, .is_int = true } };
    for (int r = 0; r < 50; r++) {
        nop_run_result res;
        if (nop_device_run(dev, lib, nop_library_find_op(lib, "twice"), v, 2, &res, &err) != 0 ||
            nop_tensor_get(res.output, 63) != 63.0 * 2 * (double)j->k)
            j->failures++;
        nop_run_result_clear(&res);
    }
    nop_tensor_free(t);
    nop_device_free(dev);
    return NULL;
}

static void two_devices_do_not_interfere(void **state)
{
    pthread_t a, b;
    job ja = { 1, 0 }, jb = { 3, 0 };
    pthread_create(&a, NULL, hammer, &ja);
    pthread_create(&b, NULL, hammer, &jb);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(ja.failures, 0);
    assert_int_equal(jb.failures, 0);
}

/* A library opened or described stays unchanged until its file is rewritten or removed. */
static void a_library_knows_when_its_file_changed(void **state)
{
    nop_library *described;
    nop_error err;
    const char *path = nop_library_path(lib);
    assert_int_equal(nop_library_describe(&described, path, &err), 0);
    assert_false(nop_library_changed(lib));
    assert_false(nop_library_changed(described));
    char copy[600];
    snprintf(copy, sizeof copy, "%s.saved", path);
    assert_int_equal(rename(path, copy), 0);   /* gone */
    assert_true(nop_library_changed(lib));
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", copy, path);   /* back, as another file */
    assert_int_equal(system(cmd), 0);
    assert_true(nop_library_changed(lib));
    assert_true(nop_library_changed(described));
    nop_library_close(described);
}

/* A renewed device runs as one made with the new options would, and refuses options it
 * cannot take without being made again. */
static void a_renewed_device_takes_what_a_run_reads(void **state)
{
    nop_device *dev;
    nop_error err;
    nop_device_opts o = { .threads = 2 };
    assert_int_equal(nop_device_new(&dev, profile, &o, &err), 0);
    o.cores = 3;
    o.schedule = NOP_SCHED_SHUFFLE;
    o.seed = 9;
    assert_int_equal(nopi_device_renew(dev, &o, &err), 0);
    nop_device_opts now = nopi_device_opts(dev);
    assert_int_equal(now.cores, 3);
    assert_int_equal(now.schedule, NOP_SCHED_SHUFFLE);
    assert_int_equal(now.seed, 9);
    assert_int_equal(nopi_device_max_cores(dev), 3);
    o.cores = 100;
    assert_int_equal(nopi_device_renew(dev, &o, &err), -1);
    assert_int_equal(err.kind, NOP_ERR_INPUT);
    assert_string_equal(err.diag.msg, "100 cores: a device has 1 to 64");
    o.cores = 1;
    o.threads = 1;
    assert_int_equal(nopi_device_renew(dev, &o, &err), -1);
    assert_int_equal(nop_error_fault(&err), NOP_FAULT_HOST);
    assert_int_equal(nopi_device_opts(dev).cores, 3);   /* a refused renewal changes nothing */
    /* the TCM pool a kernel finds is whole after a renewal */
    o.threads = 2;
    assert_int_equal(nopi_device_renew(dev, &o, &err), 0);
    int64_t peak;
    assert_true(blocks_in_pool(dev, &peak) == 16.0);
    nop_device_free(dev);
}

/* Runs op on dev with one zeros:1 tensor: its return code. */
static int run_op(nop_device *dev, const char *op)
{
    nop_error err;
    nop_tensor *t;
    assert_int_equal(nop_tensor_generate(&t, "zeros:1", 0, &err), 0);
    nop_value v = { .type = NOP_ARG_TENSOR, .tensor = t };
    nop_run_result res;
    memset(&res, 0, sizeof res);
    int rc = nop_device_run(dev, lib, nop_library_find_op(lib, op), &v, 1, &res, &err);
    if (rc != 0)
        print_message("%s: %s\n", op, err.diag.msg);
    nop_run_result_clear(&res);
    nop_tensor_free(t);
    return rc;
}

/* What a run's kernel left in TCM past everything its checks looked at is not the next
 * run's to answer for: the next fills what it reaches before its kernel sees it (a review's
 * worry, for kept devices that run one op after another). */
static void tcm_a_run_left_is_not_the_next_runs(void **state)
{
    nop_device *dev;
    nop_error err;
    assert_int_equal(nop_device_new(&dev, profile, NULL, &err), 0);
    assert_int_equal(run_op(dev, "wild"), 0);   /* unseen, as on the device */
    assert_int_equal(run_op(dev, "tiny"), 0);
    assert_int_equal(run_op(dev, "tiny"), 0);
    nop_device_free(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tcm_pool_holds_16_kb),
        cmocka_unit_test(arguments_must_match),
        cmocka_unit_test(a_failed_benchmark_keeps_nothing),
        cmocka_unit_test(two_devices_do_not_interfere),
        cmocka_unit_test(only_a_traced_device_records),
        cmocka_unit_test(a_library_knows_when_its_file_changed),
        cmocka_unit_test(a_renewed_device_takes_what_a_run_reads),
        cmocka_unit_test(tcm_a_run_left_is_not_the_next_runs),
    };
    return cmocka_run_group_tests_name("device", tests, setup, teardown);
}
