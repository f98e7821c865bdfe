#!/bin/sh
# neuronop bench --trace: Chrome trace-event JSON (parsed here by jq, a real JSON parser), one
# track per core, spans for the kernel, TCM calls, tensor-library calls, printf and streams,
# on the modeled or the host clock, bounded per core; and its bad arguments.
. ./lib.sh
copy_example relu_tcm "$WORK/tcm"
copy_example relu_multicore "$WORK/mc"
copy_example add "$WORK/add"
copy_example softclip "$WORK/softclip"
copy_example printf_debug "$WORK/pf"

test_expect "a trace on the modeled clock: the kernel after the launch, TCM spans inside it" '
    run bench tcm relu_forward randn:32x4096 --iters 2 --warmup 0 --trace t.json
    expect_status 0
    expect_out "trace: '\''t.json'\'' (modeled clock): 260 spans"
    jq -e ".otherData.clock == \"modeled\" and .otherData.op == \"relu_forward\"" t.json
    jq -e "[.traceEvents[] | select(.ph == \"M\" and .name == \"thread_name\") | .args.name]
           == [\"core 0\", \"op\"]" t.json
    jq -e "[.traceEvents[] | select(.name == \"launch\")][0] | .ts == 0 and .dur == 10" t.json
    jq -e "[.traceEvents[] | select(.name == \"kernel\")][0] as \$k |
           \$k.ts == 10 and \$k.args.tcm_transfers == 256 and
           ([.traceEvents[] | select(.cat == \"tcm\")] | length == 260 and
            all(.ts >= \$k.ts and .ts + .dur <= \$k.ts + \$k.dur + 0.01))" t.json'

test_expect "TCM spans last what the cost model charges for the copies (within 1%)" '
    # 256 transfers of 700 cycles and 1 MiB at 1.75 bytes per cycle, at 1400 MHz
    jq -e "([.traceEvents[] | select(.cat == \"tcm\") | .dur] | add) as \$us |
           (\$us * 1400 / (256 * 700 + 1048576 / 1.75) - 1 | fabs) < 0.01" t.json'

test_expect "multicore: one track per core, each with its kernel span" '
    run bench mc relu_forward randn:32x4096 --iters 2 --warmup 0 --trace mc.json
    expect_status 0
    jq -e "[.traceEvents[] | select(.name == \"kernel\") | .tid] == [0, 1, 2, 3, 4, 5, 6, 7]" mc.json
    jq -e "[.traceEvents[] | select(.cat == \"tcm\")] | group_by(.tid) | length == 8" mc.json'

test_expect "--trace-clock host: host microseconds from the start of the run" '
    run bench mc relu_forward randn:32x4096 --iters 2 --warmup 0 --trace h.json --trace-clock host
    expect_status 0
    expect_out "(host clock)"
    jq -e ".otherData.clock == \"host\" and
           ([.traceEvents[] | select(.name == \"run\")][0].dur) as \$run |
           all(.traceEvents[] | select(.name == \"kernel\"); .ts > 0 and .ts + .dur <= \$run)" h.json
    jq -e "[.traceEvents[] | select(.name == \"launch\")] | length == 0" h.json'

test_expect "streams are async spans, one begin and one end each" '
    run bench add add randn:1000 rand:1000 --iters 2 --trace s.json
    expect_status 0
    jq -e "[.traceEvents[] | select(.cat == \"stream\")] | (map(select(.ph == \"b\")) | length == 3)
           and (map(select(.ph == \"e\")) | length == 3) and (group_by(.id) | length == 3)" s.json'

test_expect "tensor-library calls are spans" '
    run bench softclip softclip randn:4x8 1 0.5 --iters 2 --trace tl.json
    expect_status 0
    jq -e "[.traceEvents[] | select(.cat == \"tensorlib\")] | length == 3" tl.json'

test_expect "a core keeps 2000 spans; the rest are counted in its kernel span, and the output says so" '
    run bench pf row_sums randn:3000x5 --iters 1 --warmup 0 --trace p.json
    expect_status 0
    expect_out "3001 spans; past 2000 on a core they are only counted, in the core'\''s kernel span"
    jq -e "[.traceEvents[] | select(.cat == \"printf\")] | length == 2000" p.json
    test "$(wc -c <p.json)" -lt 300000
    jq -e "[.traceEvents[] | select(.name == \"kernel\")][0].args.not_drawn.printf == 1001" p.json'

test_expect "--json reports the trace" '
    run bench tcm relu_forward randn:4096 --iters 2 --trace j.json --json
    expect_status 0
    jq -e ".trace == {\"file\": \"j.json\", \"clock\": \"modeled\", \"spans\": 12, \"drawn\": 12}" out'

test_expect "bad --trace-clock, --trace-clock alone, and an unwritable trace file" '
    run bench tcm relu_forward randn:64 --trace t2.json --trace-clock wall
    expect_status 2
    expect_err "neuronop bench: error: --trace-clock takes modeled or host, not '\''wall'\''"
    run bench tcm relu_forward randn:64 --trace-clock host
    expect_status 2
    expect_err "neuronop bench: error: --trace-clock '\''host'\'' needs --trace FILE"
    run bench tcm relu_forward randn:64 --iters 1 --trace no/such/dir/t.json
    expect_status 2
    expect_err "neuronop: error: cannot write '\''no/such/dir/t.json'\'': No such file or directory"
    test ! -e t2.json'

# Before, these were found only after the timed runs, however long they took (--time 20
# here: a refusal takes milliseconds, so 15 s is no race), and a folder with a raw "Is a
# directory": refused as run -o is, before anything runs.
test_expect "--trace into a folder that does not exist, or naming a folder, is refused before the runs" '
    t0=$(date +%s)
    run bench tcm relu_forward randn:64 --time 20 --trace no/such/dir/t.json
    expect_status 2
    expect_err "neuronop: error: cannot write '\''no/such/dir/t.json'\'': No such file or directory"
    mkdir adir
    run bench tcm relu_forward randn:64 --time 20 --trace adir
    expect_status 2
    expect_err "neuronop: error: cannot write '\''adir'\'': it is a folder; name a .json file"
    test $(($(date +%s) - t0)) -lt 15'

test_expect "the traced run runs in the worker, confined, like the timed ones" '
    copy_example relu_tcm probe
    # a shape function, built by the system compiler, that leaves a mark only where it runs
    # unconfined (it runs in every run, the traced one included)
    sed -i "s/^name: relu_tcm/&\\ncompiler: cc/" probe/neuronop.yaml
    cat >probe/shape.c <<EOF
#include <neuronop.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
nt_tensor *relu_fwd_shape(const nt_tensor *t_in)
{
    char status[4096] = "";
    int fd = open("/proc/self/status", O_RDONLY);
    if (fd >= 0 && read(fd, status, sizeof status - 1) > 0 && !strstr(status, "Seccomp:\t2"))
        close(creat("unconfined-ran", 0644));
    return nt_zeros(nt_dim(t_in), nt_sizes(t_in), NT_F32);
}
EOF
    "$NEURONOP" build probe >/dev/null 2>&1
    run bench probe relu_forward randn:64 --iters 2 --warmup 0 --trace probe.json
    expect_status 0
    expect_out "trace: '\''probe.json'\'' (modeled clock)"
    jq -e "[.traceEvents[] | select(.name == \"kernel\")] | length == 1" probe.json
    test ! -e unconfined-ran
    NEURONOP_SANDBOX=off "$NEURONOP" bench probe relu_forward randn:64 --iters 1 \
        --trace off.json >/dev/null
    test -e unconfined-ran'

test_done
