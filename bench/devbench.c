/*
 * devbench.c - performance of the virtual device, measured in-process through libneuronop:
 * the host cost of launching an op on 8 cores, the rate of TCM copies against plain memcpy of
 * the same chunks, and the speed-up of a memory-bound multicore kernel from 1 to 2 host
 * threads, and the tensor library's float32 element loops against the double-precision loop
 * they replaced.  Every ratio is against a baseline measured in the same run.
 * Usage: devbench SHARE_DIR KERNEL_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libneuronop.h"
#include "device/tensorlib.h"   /* the tensor library's element kernels, timed directly */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const nop_error *err)
{
    fprintf(stderr, "devbench: %s: %s\n", what, err->diag.msg);
    exit(1);
}

static nop_device *device_opts(const nop_profile *p, nop_device_opts o)
{
    nop_device *d;
    nop_error err;
    if (nop_device_new(&d, p, &o, &err) != 0)
        die("device", &err);
    return d;
}

static nop_device *device(const nop_profile *p, int threads, unsigned disabled_checks)
{
    nop_device_opts o = { .threads = threads, .disabled_checks = disabled_checks };
    return device_opts(p, o);
}

static double median(double *t, int n)
{
    for (int i = 1; i < n; i++)   /* insertion sort: n is small */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[n / 2];
}

/* Median seconds of `reps` runs of op on each of the ndev devices, devs[d] running libs[d]'s
 * op, their runs interleaved
 * (one on each, then again), so a shift in the machine's speed during the measurement (a
 * busy neighbour on a VM) touches every device alike instead of skewing their ratio. */
static void time_runs(nop_device *const *devs, const nop_library *const *libs, double *medians,
                      int ndev, const char *op, const nop_value *args, int nargs, int reps)
{
    double *t = calloc((size_t)(reps * ndev), sizeof *t);
    for (int r = -2; r < reps; r++)   /* two warm-up rounds */
        for (int d = 0; d < ndev; d++) {
            nop_run_result res;
            nop_error err;
            int opi = nop_library_find_op(libs[d], op);
            double t0 = now();
            if (nop_device_run(devs[d], libs[d], opi, args, nargs, &res, &err) != 0)
                die(op, &err);
            if (r >= 0)
                t[d * reps + r] = now() - t0;
            nop_run_result_clear(&res);
        }
    for (int d = 0; d < ndev; d++)
        medians[d] = median(t + d * reps, reps);
    free(t);
}

/* time_runs with one library for every device (at most 8). */
static void time_ops(nop_device *const *devs, double *medians, int ndev,
                     const nop_library *lib, const char *op, const nop_value *args, int nargs,
                     int reps)
{
    const nop_library *libs[8];
    for (int d = 0; d < ndev && d < 8; d++)
        libs[d] = lib;
    time_runs(devs, libs, medians, ndev < 8 ? ndev : 8, op, args, nargs, reps);
}

/* Median seconds of `reps` runs of op on dev. */
static double time_op(nop_device *dev, const nop_library *lib, const char *op,
                      const nop_value *args, int nargs, int reps)
{
    double m;
    time_ops(&dev, &m, 1, lib, op, args, nargs, reps);
    return m;
}

static void verdict(const char *what, int ok)
{
    printf("  [%s] %s\n", ok ? "ok" : "MISS", what);
}

/* The tensor library's loop before it computed in ATen's dtypes, kept as the baseline: every
 * element read as a double, computed in double and stored with conversion. */
__attribute__((noinline)) static void old_double_path(nop_tensor *r, const nop_tensor *a,
                                                      const nop_tensor *b, int op)
{
    for (int64_t i = 0; i < a->numel; i++) {
        double x = nopi_get_f(a, i), y = b ? nopi_get_f(b, i) : 0, v;
        switch (op) {
        case NOPI_TL_ADD: v = x + 1.0 * y; break;
        case NOPI_TL_MUL: v = x * y; break;
        default: v = exp(x); break;
        }
        nopi_set_f(r, i, v);
    }
}

/* float32 add, mul and exp over 32x4096 through the library's kernel (what nt_add_out and
 * friends run once their checks pass) and through the old double path, runs interleaved. */
static void tensorlib_loops(void)
{
    nop_error err;
    nop_tensor *x, *y, *r;
    if (nop_tensor_generate(&x, "randn:32x4096", 1, &err) != 0 ||
        nop_tensor_generate(&y, "randn:32x4096", 2, &err) != 0 ||
        nop_tensor_generate(&r, "zeros:32x4096", 0, &err) != 0)
        die("tensor library input", &err);
    printf("== tensor library: float32 element-wise ops over 32x4096 (1 host thread)\n");
    static const struct { const char *name; nopi_tl_op op; bool binary; } ops[] = {
        { "add", NOPI_TL_ADD, true }, { "mul", NOPI_TL_MUL, true }, { "exp", NOPI_TL_EXP, false },
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        enum { REPS = 41 };
        double tn[REPS], to[REPS];
        nopi_tl_args a = { .op = ops[k].op, .ct = NT_F32, .a = x, .b = ops[k].binary ? y : NULL,
                           .ai = 1, .af = 1 };
        for (int i = 0; i < REPS; i++) {
            double t0 = now();
            nopi_tl_run(&a, r);
            tn[i] = now() - t0;
            t0 = now();
            old_double_path(r, x, a.b, ops[k].op);
            to[i] = now() - t0;
        }
        double n = median(tn, REPS), o = median(to, REPS);
        printf("  %s: %.3f ms; the old double path %.3f ms; %.2fx as fast\n", ops[k].name,
               n * 1e3, o * 1e3, o / n);
        char what[96];
        snprintf(what, sizeof what, "float32 %s at least as fast as the old double path",
                 ops[k].name);
        verdict(what, n <= o);
    }
    nop_tensor_free(x);
    nop_tensor_free(y);
    nop_tensor_free(r);
}

/* A plain loop over the same data, compiled by this file's compiler (gcc -O2, g++'s back
 * end): the baseline of the C++ kernel's compute. */
__attribute__((noinline)) static void plain_relu(const float *in, float *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

/* The C++ TCM relu against a plain loop, and the TCM relu built by `compiler: cc` against
 * libtcc's build of it.  Each ratio from runs interleaved in this process. */
static void cxx_and_cc(char **argv, const nop_profile *p, nop_device *dev1,
                       const nop_library *tcclib)
{
    nop_error err;
    /* the seed tutorial's shape: 32x4096 floats, 512 KB, in cache, so compute counts */
    nop_tensor *x;
    if (nop_tensor_generate(&x, "randn:32x4096", 0, &err) != 0)
        die("input", &err);
    const nop_value vx = { .type = NOP_ARG_TENSOR, .tensor = x }, *v = &vx;
    nop_manifest *m;
    nop_build_result br;
    nop_build_opts bo = { .share_dir = argv[1], .force = true };
    nop_library *cxxlib, *cclib;
    if (nop_manifest_load(&m, argv[3], &err) != 0 || nop_build(m, &bo, &br, &err) != 0 ||
        nop_library_open(&cxxlib, br.lib_path, &err) != 0)
        die("C++ setup", &err);
    nop_manifest_free(m);
    if (nop_manifest_load(&m, argv[4], &err) != 0 || nop_build(m, &bo, &br, &err) != 0 ||
        nop_library_open(&cclib, br.lib_path, &err) != 0)
        die("cc setup", &err);
    nop_manifest_free(m);
    printf("== C++ kernels and the cc back end (TCM relu over 32x4096 floats, 1 host thread)\n");

    nop_device *one = device_opts(p, (nop_device_opts){ .threads = 1, .cores = 1 });
    int64_t n = nop_tensor_numel(v->tensor);
    float *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    for (int64_t i = 0; i < n; i++)
        in[i] = (float)nop_tensor_get(v->tensor, i);
    enum { REPS = 101 };
    double tk[REPS], tp[REPS];
    for (int r = -2; r < REPS; r++) {
        double t0 = now();
        nop_run_result res;
        if (nop_device_run(one, cxxlib, 0, v, 1, &res, &err) != 0)
            die("C++ relu", &err);
        double t1 = now();
        nop_run_result_clear(&res);
        double t2 = now();
        plain_relu(in, out, n);
        __asm__ volatile("" : : "r"(out) : "memory");
        double t3 = now();
        if (r >= 0)
            tk[r] = t1 - t0, tp[r] = t3 - t2;
    }
    double k = median(tk, REPS), pl = median(tp, REPS);
    printf("  C++ TCM relu (g++ -O2, 1 core): %.3f ms; plain -O2 loop, same data: %.3f ms; "
           "throughput ratio %.2fx\n", k * 1e3, pl * 1e3, pl / k);
    verdict("C++ TCM relu at least 0.9x the throughput of a plain -O2 loop", pl / k >= 0.9);
    free(in);
    free(out);

    nop_device *const pair[2] = { dev1, dev1 };
    const nop_library *libs[2] = { tcclib, cclib };
    double tc[2];
    time_runs(pair, libs, tc, 2, "relu", v, 1, 101);
    printf("  TCM relu on 8 cores: libtcc %.3f ms, compiler: cc %.3f ms; throughput ratio "
           "%.2fx\n", tc[0] * 1e3, tc[1] * 1e3, tc[0] / tc[1]);
    verdict("compiler: cc at least 1.3x libtcc's throughput on the TCM relu",
            tc[0] / tc[1] >= 1.3);
    nop_device_free(one);
    nop_library_close(cxxlib);
    nop_library_close(cclib);
    nop_tensor_free(x);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: devbench SHARE_DIR KERNEL_DIR CXX_KERNEL_DIR CC_KERNEL_DIR\n");
        return 2;
    }
    nop_error err;
    nop_manifest *m;
    nop_build_result br;
    nop_build_opts bo = { .share_dir = argv[1] };
    nop_library *lib;
    nop_profile *p;
    if (nop_manifest_load(&m, argv[2], &err) != 0 || nop_build(m, &bo, &br, &err) != 0 ||
        nop_library_open(&lib, br.lib_path, &err) != 0 ||
        nop_profile_load(&p, "trn1", argv[1], &err) != 0)
        die("setup", &err);
    nop_library *mclib;   /* the same kernels built with --memcheck */
    bo.memcheck = true;
    if (nop_build(m, &bo, &br, &err) != 0 || nop_library_open(&mclib, br.lib_path, &err) != 0)
        die("memcheck setup", &err);
    nop_manifest_free(m);

    printf("== neuronop run: launch, TCM copies, host-thread scaling\n");
    /* launch: a kernel that does nothing, on 8 cores (it writes no output, so the check for
     * unwritten output is off here; every other check is on) */
    nop_tensor *one;
    nop_tensor_generate(&one, "zeros:8", 0, &err);
    nop_value v1 = { .type = NOP_ARG_TENSOR, .tensor = one };
    nop_device *dev1 = device(p, 1, 0), *launcher = device(p, 1, NOP_CHECK_UNWRITTEN);
    double launch = time_op(launcher, lib, "noop", &v1, 1, 201);
    printf("  launch of an op on 8 cores (1 host thread):    %.1f us\n", launch * 1e6);
    verdict("launch on 8 cores under 50 us of host time", launch < 50e-6);

    /* the bench harness: wall time per run of nop_bench against a bare loop of runs */
    {
        enum { N = 3000 };
        int opi = nop_library_find_op(lib, "noop");
        double best_bare = 1e9, best_bench = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now();
            for (int i = 0; i < N; i++) {
                nop_run_result r;
                if (nop_device_run(launcher, lib, opi, &v1, 1, &r, &err) != 0)
                    die("noop", &err);
                nop_run_result_clear(&r);
            }
            double bare = (now() - t0) / N;
            nop_bench_opts bopts = { 0, N, 0, NULL, NULL };
            nop_bench_result bres;
            t0 = now();
            if (nop_bench(launcher, lib, opi, &v1, 1, &bopts, &bres, &err) != 0)
                die("bench", &err);
            double bench = (now() - t0) / N;
            nop_bench_result_clear(&bres);
            best_bare = bare < best_bare ? bare : best_bare;
            best_bench = bench < best_bench ? bench : best_bench;
        }
        double extra = best_bench - best_bare;
        printf("  bench harness: %.2f us per run over a bare loop (%.1f us per run)\n",
               extra * 1e6, best_bare * 1e6);
        verdict("the timing harness adds under 1 us per timed run", extra < 1e-6);
    }

    /* TCM copies of 4 KB chunks from a 4 MiB tensor (cache-resident, so the copies and not
     * DRAM set the pace), against memcpy of the same chunks */
    nop_tensor *big;
    nop_tensor_generate(&big, "rand:1048576", 0, &err);
    int64_t rounds = 64;
    nop_value v2[2] = { { .type = NOP_ARG_TENSOR, .tensor = big },
                        { .type = NOP_ARG_INT64, .i = rounds, .is_int = true } };
    double t_tcm = time_op(launcher, lib, "tcm_read", v2, 2, 7) - launch;   /* reads only */
    const float *src = malloc(1048576 * sizeof(float));
    memset((void *)src, 1, 1048576 * sizeof(float));
    static float buf[1024];
    double best = 1e9;
    for (int rep = 0; rep < 7; rep++) {
        double t0 = now();
        for (int64_t r = 0; r < rounds; r++)
            for (int64_t i = 0; i + 1024 <= 1048576; i += 1024) {
                memcpy(buf, src + i, sizeof buf);
                __asm__ volatile("" : : "r"(buf) : "memory");   /* keep every copy */
            }
        double t = now() - t0;
        best = t < best ? t : best;
    }
    free((void *)src);
    double bytes = (double)rounds * 1048576 * sizeof(float);
    printf("  TCM copies, 4 KB chunks: %.2f GB/s; memcpy of the same chunks: %.2f GB/s; "
           "ratio %.0f%%\n", bytes / t_tcm / 1e9, bytes / best / 1e9, 100 * best / t_tcm);
    verdict("TCM copies at least 70% of memcpy bandwidth on 4 KB chunks", best / t_tcm >= 0.70);

    /* scaling: relu through TCM on 8 cores, 1 vs 2 host threads */
    nop_tensor *x;
    nop_tensor_generate(&x, "randn:4194304", 0, &err);
    nop_value v3 = { .type = NOP_ARG_TENSOR, .tensor = x };
    nop_device *dev2 = device(p, 2, 0);
    nop_device *scaling[2] = { dev1, dev2 };
    double ts[2];
    time_ops(scaling, ts, 2, lib, "relu", &v3, 1, 11);
    double t1 = ts[0], t2 = ts[1];
    printf("  multicore relu over 16 MiB: 1 host thread %.2f ms, 2 threads %.2f ms; "
           "speed-up %.2fx\n", t1 * 1e3, t2 * 1e3, t1 / t2);
    verdict("a memory-bound multicore kernel at least 1.6x faster on 2 threads than on 1",
            t1 / t2 >= 1.6);

    /* on the TCM relu, one thread: the device checks that can be turned off (their whole
     * cost), and the cost model's accounting (neuronop bench times every runtime call) */
    nop_device *bare = device(p, 1, NOP_CHECK_ALL);
    nop_device *profiled = device_opts(p, (nop_device_opts){ .threads = 1, .profile = true });
    nop_device *trio[3] = { dev1, bare, profiled };
    double tt[3];
    time_ops(trio, tt, 3, lib, "relu", &v3, 1, 15);
    double checked = tt[0], unchecked = tt[1], with_profile = tt[2];
    printf("  TCM relu on 8 cores, 1 thread: all checks %.2f ms, --no-check=all %.2f ms; "
           "checks cost %.1f%%\n", checked * 1e3, unchecked * 1e3,
           100 * (checked - unchecked) / unchecked);
    verdict("device checks cost at most 10% host time on the TCM relu",
            checked <= unchecked * 1.10);
    nop_device_free(bare);
    printf("  TCM relu, 1 thread: counted for the cost model %.2f ms, plain %.2f ms; "
           "counting costs %.1f%%\n", with_profile * 1e3, checked * 1e3,
           100 * (with_profile - checked) / checked);
    verdict("counting for the cost model slows a TCM kernel by at most 10%",
            with_profile <= checked * 1.10);
    nop_device_free(profiled);

    /* memcheck: every pointer access of the kernel goes through a check (no target: it is
     * a debugging mode; the figure says what it costs) */
    nop_device *const pair[2] = { dev1, dev1 };
    const nop_library *libs[2] = { lib, mclib };
    double tm[2];
    time_runs(pair, libs, tm, 2, "relu", &v3, 1, 7);
    printf("  TCM relu, 1 thread: --memcheck %.2f ms, plain %.2f ms; memcheck slows it %.1fx\n",
           tm[1] * 1e3, tm[0] * 1e3, tm[1] / tm[0]);
    nop_library_close(mclib);

    cxx_and_cc(argv, p, dev1, lib);
    tensorlib_loops();

    nop_device_free(launcher);
    nop_tensor_free(one);
    nop_tensor_free(big);
    nop_tensor_free(x);
    nop_device_free(dev1);
    nop_device_free(dev2);
    nop_profile_free(p);
    nop_library_close(lib);
    return 0;
}
