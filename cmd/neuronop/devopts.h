/*
 * devopts.h - the options that choose and shape the virtual device, shared by run, bench and
 * test, and the op arguments they take (ARG... in the run syntax).
 */
#ifndef NEURONOP_DEVOPTS_H
#define NEURONOP_DEVOPTS_H

#include "libneuronop.h"
#include "options.h"

#define DEFAULT_DEVICE "trn1"   /* the profile without --device (neuronop-run(1)) */

struct command_spec;

struct device_cli {
    const struct command_spec *spec;   /* the command whose options these are: a bad
                                        * value is its usage error */
    const char *device;     /* --device: profile name or path */
    long cores;             /* --cores */
    long threads;           /* -j, --threads */
    const char *schedule;   /* --schedule */
    long seed;              /* --seed */
    double timeout;         /* --timeout */
    struct option_list check, no_check;   /* --check=LIST, --no-check=LIST */
    unsigned disabled;      /* the checks they leave off (device_cli_checks) */
    bool memcheck;          /* --memcheck: run the memcheck build (target.c) */
    const char *build_dir;  /* --build-dir: where a folder or manifest target is built */
    bool profile;           /* time runtime calls for the cost model (bench) */
    bool keep_worker;       /* one long-lived zygote serves every run (nop_device_opts): for
                             * a command that makes many runs, such as `__serve` */
    nop_diag_fn *diag;      /* where device warnings go; NULL: printed (report_sink) */
    void *diag_ctx;
};

/* Whether user code runs in the device's worker process: always, unless NEURONOP_SANDBOX is
 * "off" (for a debugger, or to measure what the worker costs; see neuronop(1)). */
bool sandbox_on(void);

/* The schedules --schedule takes, in enum nop_schedule order, NULL-terminated. */
extern const char *const schedule_names[];

/* The option_spec rows for a struct device_cli; put them in a command's option table. */
#define DEVICE_OPTIONS(dc) \
    DEVICE_NAME_OPTION(dc), \
    OPTION_RANGE(0, "cores", OPT_INT, &(dc).cores, "N", \
                 "cores for multicore ops (default: the profile's)", 1, 64), \
    THREADS_OPTION(dc), \
    { 0, "schedule", OPT_STRING, &(dc).schedule, "ORDER", \
      "parallel, sequential, reversed or shuffle", COMPLETE_VALUES, schedule_names, 0, 0 }, \
    SEED_OPTION(dc), \
    TIMEOUT_OPTION(dc), \
    DEVICE_CHECK_OPTIONS(dc)

/* The rows test shares with DEVICE_OPTIONS (one text each: an auditor found test's own
 * copies drifting). */
#define DEVICE_NAME_OPTION(dc) \
    { 0, "device", OPT_STRING, &(dc).device, "NAME", "device profile (default " \
      DEFAULT_DEVICE ")", COMPLETE_DEVICES, NULL, 0, 0 }
#define THREADS_OPTION(dc) \
    OPTION_RANGE('j', "threads", OPT_INT, &(dc).threads, "N", \
                 "host threads (default: one per CPU)", 1, 1024)
#define SEED_OPTION(dc) \
    OPTION(0, "seed", OPT_INT, &(dc).seed, "N", \
           "seed for generators and shuffled schedules (default 0)")
#define TIMEOUT_OPTION(dc) \
    OPTION_RANGE(0, "timeout", OPT_DOUBLE, &(dc).timeout, "SECONDS", \
                 "stop a kernel after this long", 0.001, 86400)

/* The rows that choose the device's checks (test takes these but not every DEVICE_OPTIONS
 * row). */
#define DEVICE_CHECK_OPTIONS(dc) \
    { 0, "check", OPT_LIST, &(dc).check, "LIST", "turn device checks on (comma-separated)", \
      COMPLETE_VALUES, nop_check_names, 0, 0 }, \
    { 0, "no-check", OPT_LIST, &(dc).no_check, "LIST", "turn device checks off (race, ...)", \
      COMPLETE_VALUES, nop_check_names, 0, 0 }, \
    OPTION(0, "memcheck", OPT_FLAG, &(dc).memcheck, NULL, \
           "check the kernel's own pointer accesses (runs the library's --memcheck build)")

/* The row for where a folder or manifest target is built (run, bench and test). */
#define BUILD_DIR_OPTION(dc) \
    OPTION(0, "build-dir", OPT_STRING, &(dc).build_dir, "DIR", \
           "build a folder or manifest into DIR, not its build_directory (a read-only checkout)")

/* Turns --check/--no-check into dc->disabled; prints and returns 2 for an unknown name. */
int device_cli_checks(struct device_cli *dc);

/* Loads the profile and makes the device; prints errors and returns their exit status. */
int device_cli_open(struct device_cli *dc, nop_profile **profile, nop_device **dev);

/* Makes a second device like device_cli_open's, on its profile, that records traces (a run
 * on it is slower: keep it out of timed runs).  Prints errors; returns their exit status. */
int device_cli_tracer(struct device_cli *dc, const nop_profile *profile, nop_device **dev);

/* Whether --cores suits lib (NULL: not known yet) and profile: a single-core library's ops
 * run on one core, and a device has so many.  0, or STATUS_USAGE with why (CORES_WHY_SIZE
 * bytes hold it) filled; run, python and the Python package's supervisor all check so. */
#define CORES_WHY_SIZE 512
int device_cli_cores_fit(const struct device_cli *dc, const nop_library *lib,
                         const nop_profile *profile, char *why, size_t size);

/* An op ready to run from the command line (`LIB|DIR OP ARG...`): its library opened or
 * built, its arguments made, its device and profile loaded. */
struct op_call {
    nop_library *lib;
    int op;
    const char *name;           /* OP, as given */
    char display[300];          /* the op as shown: ns::OP for a C++ library's op */
    nop_value *vals;
    nop_tensor **tensors;       /* the tensors made for vals (NULL for scalars) */
    int nvals;
    nop_profile *profile;
    nop_device *dev;
};

/* Fills oc from args (LIB|DIR, OP, then ARG...; nargs >= 2) and dc.  Prints errors and
 * returns their exit status; release oc with op_call_close either way (it starts zeroed). */
int op_call_open(struct op_call *oc, struct device_cli *dc, char **args, int nargs,
                 bool verbose);
void op_call_close(struct op_call *oc);

#endif /* NEURONOP_DEVOPTS_H */
