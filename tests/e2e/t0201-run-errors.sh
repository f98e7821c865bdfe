#!/bin/sh
# Every kernel mistake is an error naming op and core (or a warning), with exit status 1 -
# never a crash of neuronop and never a silently wrong answer.
. ./lib.sh
R="$NEURONOP_SRC/tests/fixtures/rules"
cp -R "$R" "$WORK/rules"
cp -R "$NEURONOP_SRC/tests/fixtures/rules_mc" "$WORK/rules_mc"

# fails LIBRARY OP ARG MESSAGE: the op fails with exit 1 and the message
fails() {
    run run "$1" "$2" "$3" --timeout 1
    expect_status 1
    expect_err "$4"
}

test_expect "a segfault is reported and neuronop survives" '
    fails rules/crash.yaml segv zeros:4 "neuronop: segv: core 0: error: kernel crashed: segmentation fault in kernel code, address 0x10"'

test_expect "a shape function that crashes is named, and no core reports a stack it never used" '
    fails rules/crash.yaml shape_segv zeros:4 "neuronop: shape_segv: shape function '\''segv_shape'\'': error: shape function crashed: segmentation fault in its own code, address 0x10"
    if grep "stack high-water" out; then exit 1; fi
    run run rules/crash.yaml shape_segv zeros:4 --json
    expect_status 1
    expect_out "\"ok\": false"
    expect_out "\"cores\": []"'

test_expect "a division by zero is reported" '
    run run rules/crash.yaml divzero zeros:4 0
    expect_status 1
    expect_err "neuronop: divzero: core 0: error: kernel crashed: arithmetic exception"'

test_expect "a stack overflow is reported with the stack size" '
    fails rules/crash.yaml deep zeros:4 "neuronop: deep: core 0: error: stack overflow: the kernel needs more than its STACK_SIZE of 6144 bytes"
    expect_err "declare a larger stack, at most 409600 bytes, with '\''stack_size: N'\'' in the manifest or -DSTACK_SIZE=N in extra_cflags, or move large local arrays into TCM (tcm_malloc)"'

test_expect "a stack overflow short of the guard page is caught by the high-water mark" '
    fails rules/crash.yaml wide_frame zeros:4 "neuronop: wide_frame: core 0: error: stack overflow: the kernel needs more than its STACK_SIZE of 6144 bytes (it used "
    expect_err "declare a larger stack, at most 409600 bytes, with '\''stack_size: N'\'' in the manifest or -DSTACK_SIZE=N in extra_cflags"'

# gpsimd.md: a stack that grows past its size is reported.  A frame larger than the guard
# below the stack once wrote into whatever was mapped there and passed half the time (1.2 MB:
# a 1 MB guard); one larger even than today's guard is known by the stack pointer.
test_expect "a local array larger than the guard below the stack is a stack overflow" '
    for n in 1200000 1200000 1200000 1200000 300000000 3000000000; do
        run run rules/limits.yaml huge_frame zeros:4 "$n"
        expect_status 1
        expect_err "neuronop: huge_frame: core 0: error: stack overflow: the kernel needs more than its STACK_SIZE of 6144 bytes"
    done
    # under a limit on address space the guards are smaller (not under AddressSanitizer, whose
    # shadow memory needs far more): the device still runs, and overflows are still caught
    [ -n "${NEURONOP_SANITIZED:-}" ] || ulimit -v 1048576
    for n in 4 1200000 300000000; do
        run run rules/limits.yaml huge_frame zeros:4 "$n"
        [ "$n" != 4 ] || { expect_status 0; continue; }
        expect_status 1
        expect_err "stack overflow: the kernel needs more than its STACK_SIZE of 6144 bytes"
    done
    # a frame just past the guard (16 MB here, 1 GiB without the limit) whose one write lands
    # in mapped memory faults nowhere: its next call into the runtime is below the stack, and
    # is a stack overflow (before, some of these passed).  That call'\''s own frames land there
    # too, before the check: where they wreck the worker, its death is the report.
    guard=$((16 << 20))
    [ -z "${NEURONOP_SANITIZED:-}" ] || guard=$((1 << 30))
    for k in $(seq 0 40); do
        run run rules/limits.yaml far_frame zeros:4 $((guard + k * 4096))
        expect_status 1
        grep -q -e "stack overflow: the kernel needs more than its STACK_SIZE of 6144 bytes" \
            -e "error: the device process died: " err || { cat err; exit 1; }
    done'

# Before: the last element was computed in int64 and overflowed (UB, and a negative number).
test_expect "a copy whose last element is past INT64_MAX names it" '
    run run rules/limits.yaml tcm_far zeros:4 9223372036854775807 2
    expect_status 1
    expect_err "nt_tensor_to_tcm(offset=9223372036854775807, n=2): elements 9223372036854775807..9223372036854775808 are outside the tensor, which has 4"
    run run rules/limits.yaml tcm_far zeros:4 4 9223372036854775807
    expect_status 1
    expect_err "nt_tensor_to_tcm(offset=4, n=9223372036854775807): elements 4..9223372036854775810 are outside the tensor, which has 4"'

# Before: "nt_set_f32 with 1 index on a 0-dimensional tensor: give one index per dimension",
# which C's variadic macros cannot do.
test_expect "the standard accessor on a 0-dimensional tensor says what to use instead" '
    run run rules/limits.yaml zero_d_set zeros:4
    expect_status 1
    expect_err "neuronop: zero_d_set: core 0: error: nt_set_f32 on a 0-dimensional tensor, which the standard accessor cannot index: read or write its one element with a stream (nt_stream_read_*, nt_stream_write_*) or the tensor library (nt_fill_)"'

test_expect "a failed assert names the assertion and its line" '
    fails rules/crash.yaml asserts zeros:4 "neuronop: asserts: core 0: error: assertion failed: nt_numel(t) == 1000 (rules/k.c:"'

test_expect "abort() stops the core" '
    fails rules/crash.yaml aborts zeros:4 "neuronop: aborts: core 0: error: the kernel called abort()"'

test_expect "printf does not count against a kernel that fits its stack" '
    run run rules/crash.yaml full_stack_printf zeros:4
    expect_status 0
    expect_out "kernel printf output:"
    hw=$(sed -n "s/.*core 0: \([0-9]*\).*/\1/p" "$WORK/out")
    test "$hw" -gt 5200'

# 1 KB to 1.5 KB of the runtime's frames (tensor allocation, checks, Sleef) once went on the
# kernel's stack and made this kernel, with 5.6 KB of locals, overflow its 6 KB; its answer
# is torch's: clamp(2 ** exp(0), 0, 3) * 0.5
torch_says "import sys, torch, numpy; numpy.save(sys.stdout.buffer, (torch.clamp(torch.pow(2.0, torch.exp(torch.zeros(4))), 0, 3) * torch.full((4,), 0.5)).numpy())" >"$WORK/tl.npy"
test_expect "the tensor library does not count against a kernel that fits its stack" '
    run run rules/limits.yaml full_stack_tensorlib zeros:4 --expect "$WORK/tl.npy"
    expect_status 0
    room=$(sed -n "s/.*and \([0-9]*\) for runtime calls.*/\1/p" "$WORK/out")
    hw=$(sed -n "s/.*core 0: \([0-9]*\).*/\1/p" "$WORK/out")
    test "$hw" -gt 5600
    test "$hw" -le $((6144 + room))'

# a failed run's mark once took the error message's formatting too (2 KB), past STACK_SIZE
# and its room, where no overflow was (a new user's find)
test_expect "the error message of a failed call does not count against the kernel's stack" '
    run run rules/limits.yaml full_stack_refused zeros:4
    expect_status 1
    expect_err "nt_size(dim=6): the tensor has 1 dimension"
    room=$(sed -n "s/.*and \([0-9]*\) for runtime calls.*/\1/p" "$WORK/out")
    hw=$(sed -n "s/.*core 0: \([0-9]*\).*/\1/p" "$WORK/out")
    test "$hw" -gt 5600
    test "$hw" -le $((6144 + room))'

# TCM copies at a tensor's edges (a tester's and a new user's finds): a copy of no elements
# past the end copies nothing (a ceiling-divided split's last cores make one), was refused
# as "offset and count must be at least 0"; one element too many named every element of the
# copy as outside; and a copy from a tensor whose write stream is still open read what the
# device has not flushed yet, unreported
test_expect "TCM copies at the end: none past it is fine, one too many names that one" '
    run run rules/limits.yaml tcm_edges zeros:10 0
    expect_status 0
    run run rules/limits.yaml tcm_edges zeros:10 1
    expect_status 1
    expect_err "core 0: error: nt_tensor_to_tcm(offset=0, n=11): element 10 is outside the tensor, which has 10"'

test_expect "a TCM copy of a tensor with a write stream open is possibly incoherent" '
    run run rules/limits.yaml tcm_edges zeros:10 2
    expect_status 1
    expect_err "core 0: error: nt_tensor_to_tcm: possibly incoherent access: a TCM copy of a tensor with a write stream open"'

test_expect "a larger STACK_SIZE lets the same kernel run" '
    sed -i "s/^compute_srcs/extra_cflags: [-DSTACK_SIZE=131072]\ncompute_srcs/" rules/crash.yaml
    run run rules/crash.yaml deep zeros:4
    expect_status 0
    expect_out "stack high-water (bytes; STACK_SIZE 131072, and "'

test_expect "a kernel that never ends is stopped at --timeout" '
    fails rules/crash.yaml spin zeros:4 "neuronop: spin: core 0: error: timeout: the kernel ran for more than 1 s and was stopped"'

test_expect "the public multicore relu sample fails on 10 elements: out of range on core 7" '
    run run rules_mc sample_relu randn:10
    expect_status 1
    expect_err "neuronop: sample_relu: core 7: error: nt_tensor_to_tcm(offset=21, n=3): elements 21..23 are outside the tensor, which has 10"'

test_expect "the sample passes when the size divides by the core count" '
    run run rules_mc sample_relu randn:64
    expect_status 0'

# Reading what another core wrote was taken when that core had finished: the sequential and
# parallel schedules passed it and the reversed failed it, each core as reading an element
# "no core has written yet" (device-rules tester).
for schedule in sequential parallel reversed shuffle; do
    test_expect "a core reading another core's part is an error in the $schedule schedule" '
        run run rules_mc running_sum ones:16 --schedule '"$schedule"'
        expect_status 1
        grep -q "^neuronop: running_sum: core [1-7]: error: nt_tensor_to_tcm(offset=[0-9]*, n=1): reads output element [0-9]*, which \(core [0-6] wrote (initcheck): cores never synchronise\|this core has not written yet (initcheck): the output starts undefined on the device, and cores never synchronise\)" err
        if grep -q "no core has written" err; then exit 1; fi'
done
test_expect "the sequential schedule names the core whose part was read" '
    run run rules_mc running_sum ones:16 --schedule sequential --cores 2
    expect_status 1
    expect_err "neuronop: running_sum: core 1: error: nt_tensor_to_tcm(offset=7, n=1): reads output element 7, which core 0 wrote (initcheck): cores never synchronise, so what one reads of another'"'"'s part depends on the order they run in; read back only what this core wrote"'

for case in \
    "tcm_past_end|nt_tensor_to_tcm(offset=10, n=4): elements 12..13 are outside the tensor, which has 12" \
    "tcm_buffer_overrun|nt_tensor_to_tcm(offset=0, n=8): 32 bytes do not fit in the TCM buffer" \
    "stream_past_end|nt_stream_read_f32: reads past the end of a 12-element tensor" \
    "stream_after_close|nt_stream_read_f32: the stream was already closed" \
    "wrong_index_count|nt_get_f32 with 1 index on a 2-dimensional tensor" \
    "index_out_of_range|nt_get_f32: index 4 of dimension 1 is out of range for a 3x4 tensor" \
    "write_input|nt_set_f32: writes to an input tensor; inputs are read-only" \
    "dtype_mismatch|nt_get_bf16 on a float32 tensor: use nt_get_f32"
do
    op=${case%%|*}
    msg=${case#*|}
    test_expect "access rule: $op" '
        fails rules/access.yaml '"$op"' randn:3x4 "neuronop: '"$op"': core 0: error: '"$msg"'"'
done

for case in \
    "returns_null|core 0: error: the kernel returned NULL" \
    "wrong_shape|core 0: error: the kernel returned a float32 tensor of shape 1, but the shape function 'same' declared float32 of shape 3x4" \
    "incoherent|core 0: error: nt_accessor_of: possibly incoherent access" \
    "unclosed_write|core 0: error: a write stream was never closed" \
    "shape_reads_data|shape function 'peek_shape': error: nt_accessor_of: shape function 'peek_shape' touches tensor data"
do
    op=${case%%|*}
    msg=${case#*|}
    test_expect "output rule: $op" '
        fails rules/output.yaml '"$op"' randn:3x4 "neuronop: '"$op"': '"$msg"'"'
done

# Before, a shape function's time included making its output: 512 MiB took longer than
# --timeout 0.05 to map and zero, and the shape function was said to loop for ever.
test_expect "making a large output is not counted as the shape function'\''s time" '
    run run rules/limits.yaml huge_output zeros:1 --timeout 0.05
    expect_status 1
    expect_err "neuronop: huge_output: core 0: error: the kernel returned NULL"
    if grep "shape function" err; then exit 1; fi'

# Before: "returned a int32 tensor".  Each dtype's name with its article: an int8 to an
# int64, a uint8 (you-int), a float16, a bfloat16 and a float32 (declared int32 there).
mkdir "$WORK/dt"
printf '%s\n' '#include <neuronop.h>' \
    'nt_tensor *as_dtype(const nt_tensor *t, int64_t d) { return nt_zeros(NT_SHAPE(3, 4), (nt_dtype)d); }' \
    >"$WORK/dt/k.c"
printf '%s\n' '#include <neuronop.h>' \
    'nt_tensor *declares(const nt_tensor *t, int64_t d)' \
    '{ return nt_empty(NT_SHAPE(3, 4), d == NT_F32 ? NT_I32 : NT_F32); }' >"$WORK/dt/s.c"
printf '%s\n' 'name: dt' 'compute_srcs: [k.c]' 'shape_srcs: [s.c]' 'ops:' \
    '  as_dtype: {args: [tensor, int64], shape: declares, kernel: as_dtype}' >"$WORK/dt/neuronop.yaml"
test_expect "a dtype's name takes its article: a kernel's wrong output, an accessor's wrong tensor" '
    for case in "0|a float32|int32" "1|a bfloat16|float32" "2|a float16|float32" \
                "3|an int32|float32" "4|an int8|float32" "5|an int64|float32" \
                "6|an int16|float32" "7|a uint8|float32"; do
        d=${case%%|*} rest=${case#*|}
        run run dt as_dtype zeros:3x4 "$d"
        expect_status 1
        expect_err "neuronop: as_dtype: core 0: error: the kernel returned ${rest%|*} tensor of shape 3x4, but the shape function '\''declares'\'' declared ${rest#*|} of shape 3x4"
    done
    run run rules/access.yaml dtype_mismatch zeros:3x4:i32
    expect_err "nt_get_bf16 on an int32 tensor: use nt_get_i32"
    run run rules/access.yaml dtype_mismatch zeros:3x4:u8
    expect_err "nt_get_bf16 on a uint8 tensor: use nt_get_u8"'

test_expect "NT_INCOHERENT_VERBOSE makes the same access a warning" '
    run run rules/output.yaml incoherent_verbose randn:3x4
    expect_status 0
    expect_err "neuronop: incoherent_verbose: core 0: warning: nt_accessor_of: possibly incoherent access"'

test_expect "printf passes doubles and ints beyond the argument registers" '
    run run rules/output.yaml print_many zeros:2
    expect_status 0
    expect_out "0.50 1.50 2.50 3.50 4.50 5.50 6.50 7.50 8.50 9.50 | 1 2 3 4 5 6 7"'

test_expect "TCM left allocated is a warning" '
    run run rules/output.yaml tcm_leak randn:3x4
    expect_status 0
    expect_err "neuronop: tcm_leak: core 0: warning: 100 bytes of TCM still allocated"'

test_expect "a standard accessor in a multicore kernel is an error" '
    fails rules_mc standard_accessor randn:16 "cores 0-7: error: nt_accessor_of: a standard accessor in a multicore kernel"'

# eight lines that differed in the core's number alone (a new user's find)
test_expect "a message several cores give is one line naming them, in the worker and out" '
    for sandbox in on off; do
        NEURONOP_SANDBOX=$sandbox "$NEURONOP" run rules_mc odd_cores randn:64 >out 2>err &&
            exit 1
        test "$(grep -c "store past the end" err)" = 1
        grep -q "^neuronop: odd_cores: cores 1, 3, 5, 7: error: a store past the end" err
        grep -q "^neuronop: odd_cores: cores 0, 2, 4, 6: warning: 16 bytes of TCM" err
        grep -q "^neuronop: device checks: 4 errors, 4 warnings$" err
    done'

# held until the run ends, they were lost when it did not (a reviewer'\''s find: a CI job'\''s
# time limit ends neuronop with SIGTERM)
test_expect "what a held run said so far is printed when neuronop is ended meanwhile" '
    "$NEURONOP" run rules_mc warn_spin randn:64 -j 8 --timeout 60 >out 2>err &
    pid=$!
    for _ in 1 2 3 4 5 6 7 8 9 10; do   # its worker started: the run is held by then
        pgrep -P $pid >/dev/null && break
        sleep 1
    done
    sleep 2
    kill -TERM $pid
    status=0
    wait $pid || status=$?
    test "$status" = 143
    test "$(grep -c "warning: tcm_malloc(1073741824) returned NULL" err)" = 1
    grep -q "^neuronop: warn_spin: cores\{0,1\} [0-7].* warning: tcm_malloc(1073741824) returned NULL" err'

test_expect "a multicore kernel that never calls get_dst_tensor fails" '
    fails rules_mc no_dst randn:16 "neuronop: no_dst: error: no core called get_dst_tensor"'

test_expect "printf from cores other than 0 is dropped with one warning" '
    run run rules_mc talk randn:16
    expect_status 0
    expect_out "core 0 of 8"
    if grep -q "core 1 of 8" "$WORK/out"; then exit 1; fi
    test "$(grep -c "warning: printf from core" "$WORK/err")" = 1'

test_expect "several failing cores are all reported" '
    run run rules_mc sample_relu randn:10 --cores 3
    expect_status 1
    expect_err "core 2: error: nt_tensor_to_tcm"'

test_expect "a missing --expect file is an input error found before the op runs" '
    copy_example relu r
    run run r relu_forward randn:4x4 --expect missing.npy
    expect_status 2
    expect_err "neuronop: error: cannot read .npy file '\''missing.npy'\''"
    ! grep -q "relu_forward: ok" out'

test_expect "host errors after a good run are not counted as device check errors" '
    copy_example relu r2
    ln -s /dev/full full   # a link of its own: a regression replaces it, not the device
    run run r2 relu_forward randn:4x4 -o full
    expect_status 2
    expect_err "neuronop: device checks: 0 errors, 0 warnings"
    expect_err "neuronop: error: cannot write '\''full'\'': No space left on device"
    test -L full
    run run r2 relu_forward randn:4x4 -o full --json
    expect_status 2
    jq -e ".ok == false" out
    run run r2 relu_forward zeros:2x2 -o z.npy
    expect_status 0
    run run r2 relu_forward ones:2x2 --expect z.npy
    expect_status 1
    expect_err "neuronop: device checks: 0 errors, 0 warnings"
    expect_err "output differs from '\''z.npy'\''"'

test_done
