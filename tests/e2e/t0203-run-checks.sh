#!/bin/sh
# The device checks of multicore output (racecheck, output no core wrote, initcheck) and the
# streams warning: each breaking kernel fails with its message, its fixed version passes,
# and --check/--no-check turn checks on and off.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/checks" "$WORK/checks"
cp -R "$NEURONOP_SRC/tests/fixtures/rules" "$WORK/rules"

test_expect "two cores writing one element is a race" '
    run run checks race randn:100 --schedule sequential
    expect_status 1
    expect_err "neuronop: race: error: output element 12 was written by core 0 and by core 1 (racecheck)"
    expect_err "neuronop: device checks: 1 error, 0 warnings"'

test_expect "the fixed kernel passes on 1, 3 and 8 cores" '
    for cores in 1 3 8; do
        run run checks race_fixed randn:100 --cores $cores
        expect_status 0
    done
    expect_err "neuronop: device checks: 0 errors, 0 warnings"'

test_expect "output no core wrote is an error" '
    run run checks unwritten randn:100
    expect_status 1
    expect_err "neuronop: unwritten: error: 4 of 100 output elements were written by no core, the first at element 96"'

test_expect "... and writing the remainder fixes it" '
    run run checks unwritten_fixed randn:100
    expect_status 0'

test_expect "reading output before anything wrote it is an error (initcheck)" '
    run run checks read_before_write randn:100
    expect_status 1
    expect_err "core 0: error: nt_tensor_to_tcm(offset=0, n=12): reads output element 0, which this core has not written yet (initcheck)"'

test_expect "reading it after writing it is fine" '
    run run checks read_after_write randn:100
    expect_status 0'

test_expect "more than 4 open streams is a warning" '
    run run rules/access.yaml five_streams randn:8
    expect_status 0
    expect_err "neuronop: five_streams: core 0: warning: nt_read_stream_of: 5 streams open at once; only 4 are fast"
    expect_err "neuronop: device checks: 0 errors, 1 warning"
    run run rules/access.yaml four_streams randn:8
    expect_status 0
    ! grep -q ": warning:" "$WORK/err"'

# An audit of gpsimd.md's rules found cores sharing the library's global and static data,
# the cores here being threads of one process: a static scratch array gave a silently wrong
# answer, and a global running total one that changed with the core order.
mkdir -p "$WORK/shared"
cat >"$WORK/shared/k.c" <<'EOF'
#include <neuronop.h>
float total;                  /* every core adds its part to it */
static float scratch[64];     /* kept off the stack */
nt_tensor *sums(const nt_tensor *t)
{
    nt_tensor *o = get_dst_tensor();
    int64_t part = nt_numel(t) / get_cpu_count(), at = get_cpu_id() * part;
    nt_tcm_accessor a = nt_tcm_accessor_of(t), b = nt_tcm_accessor_of(o);
    float *buf = tcm_malloc(sizeof(float) * (size_t)part);
    nt_tensor_to_tcm(&a, buf, at, part);
    for (int64_t i = 0; i < part; i++)
        total += buf[i];
    for (int64_t i = 0; i < part; i++)
        buf[i] = total;
    nt_tcm_to_tensor(&b, buf, at, part);
    tcm_free(buf);
    return o;
}
nt_tensor *scratched(const nt_tensor *t)
{
    nt_tensor *o = get_dst_tensor();
    int64_t part = nt_numel(t) / get_cpu_count(), at = get_cpu_id() * part;
    nt_tcm_accessor a = nt_tcm_accessor_of(t), b = nt_tcm_accessor_of(o);
    float *buf = tcm_malloc(sizeof(float) * (size_t)part);
    nt_tensor_to_tcm(&a, buf, at, part);
    for (int64_t i = 0; i < part; i++)
        scratch[i] = 2 * buf[i];
    for (int64_t i = 0; i < part; i++)
        buf[i] = scratch[i];
    nt_tcm_to_tensor(&b, buf, at, part);
    tcm_free(buf);
    return o;
}
EOF
cat >"$WORK/shared/s.c" <<'EOF'
#include <neuronop.h>
nt_tensor *same(const nt_tensor *t)
{
    return nt_empty(nt_dim(t), nt_sizes(t), NT_F32);
}
EOF
printf '%s\n' 'name: shared' 'compute_srcs: [k.c]' 'shape_srcs: [s.c]' 'multicore: true' \
    'ops:' '  sums: {args: [tensor], shape: same, kernel: sums}' \
    '  scratched: {args: [tensor], shape: same, kernel: scratched}' >"$WORK/shared/neuronop.yaml"

test_expect "a core that writes a global variable every core shares breaks racecheck" '
    run run shared sums ones:16 --schedule sequential
    expect_status 1
    expect_err "neuronop: sums: error: a core wrote the library'"'"'s variable '"'"'total'"'"', which every core shares (racecheck)"
    expect_err "keep a core'"'"'s own data in TCM (tcm_malloc) or on its stack"
    run run shared sums ones:16 --cores 1
    expect_status 0
    run run shared sums ones:16 --no-check race
    expect_status 0'

test_expect "so does one that keeps its scratch in a static array" '
    run run shared scratched ones:16
    expect_status 1
    expect_err "neuronop: scratched: error: a core wrote the library'"'"'s global or static data"'

test_expect "--no-check turns a check off, --check back on" '
    run run checks race randn:100 --no-check race
    expect_status 0
    run run checks race randn:100 --no-check race,unwritten --check race
    expect_status 1
    expect_err "(racecheck)"
    run run checks unwritten randn:100 --no-check=all
    expect_status 0'

# (a new user's find: "unknown check 'bounds'" read as a typo of a check that exists)
test_expect "a check that is always on is said to be so" '
    run run "$EXAMPLES/relu" relu_forward randn:4 --no-check bounds
    expect_status 2
    expect_err "neuronop run: error: '\''bounds'\'' is not a check --check and --no-check choose: bounds, dtype, shape-function, stack, crash and time checks are always on"'

test_expect "an unknown check name is a usage error with a suggestion" '
    run run checks race randn:100 --no-check rcae
    expect_status 2
    expect_err "neuronop run: error: unknown check '\''rcae'\''; did you mean '\''race'\''? (checks: race unwritten init dst multicore coherence readonly leak streams printf, or all)"
    expect_err "see '\''neuronop run --help'\''"'

# A never-written element's pattern names it exactly up to 2^19 elements (a reviewer's find:
# with a five-bit mark, 17 index bits named element 150000 of 200000 as 18928)
test_expect "a far never-written element copied into the output is named by its own offset" '
    mkdir -p far
    printf "%s\n" "#include <torch/torch.h>" \
        "torch::Tensor far_read(const torch::Tensor &t)" "{" \
        "    torch::Tensor out = get_dst_tensor();" "    auto o = out.accessor<float, 1>();" \
        "    o[10] = o[150000];" "    return out;" "}" >far/k.cpp
    printf "%s\n" "#include <torch/torch.h>" "#include <torchneuron/register.h>" \
        "torch::Tensor far_shape(const torch::Tensor &t) { return torch::empty(t.sizes(), torch::kFloat); }" \
        "NEURON_LIBRARY(far_ops, m) { m.def(\"far_read\", &far_shape, \"far_read\"); }" >far/s.cpp
    printf "%s\n" "name: far" "compute_srcs: [k.cpp]" "shape_srcs: [s.cpp]" >far/neuronop.yaml
    run run far far_read zeros:200000
    expect_status 1
    expect_err "accessor<float, N>()[...](offset=150000, n=1): reads output elements no core has written yet (initcheck)"'

# A device-rules tester's find: a shape function that wrote a global the kernel read passed
# its value on, where the device runs the shape function on the host when it compiles the op
test_expect "a global the shape function writes is put back before the kernel, with a warning" '
    mkdir -p shg
    printf "%s\n" "#include <neuronop.h>" "int64_t g_rows;" \
        "nt_tensor *k(const nt_tensor *t)" "{" "    nt_tensor *o = get_dst_tensor();" \
        "    nt_accessor a = nt_accessor_of(t), b = nt_accessor_of(o);" \
        "    for (int64_t i = 0; i < nt_numel(t); i++)" \
        "        nt_set_f32(&b, nt_get_f32(&a, i) + (float)g_rows, i);" "    return o;" "}" >shg/k.c
    printf "%s\n" "#include <neuronop.h>" "extern int64_t g_rows;" \
        "nt_tensor *same(const nt_tensor *t)" "{" "    g_rows = nt_size(t, 0);" \
        "    return nt_empty(nt_dim(t), nt_sizes(t), NT_F32);" "}" >shg/s.c
    printf "%s\n" "name: shg" "compute_srcs: [k.c]" "shape_srcs: [s.c]" \
        "ops: {k: {args: [tensor], shape: same, kernel: k}}" >shg/neuronop.yaml
    for how in libtcc cc; do   # (cc: a system link, whose data segment starts read-only)
        [ $how = libtcc ] || printf "compiler: cc\n" >>shg/neuronop.yaml
        run run shg k zeros:6
        expect_status 0
        expect_out "values: 0 0 0 0 0 0"
        expect_err "neuronop: k: shape function '\''same'\'': warning: the shape function wrote the library'\''s "
        expect_err "; on the device it runs on the host when the op is compiled, so the kernel sees the value from before it, as here"
        [ $how = cc ] || expect_err "wrote the library'\''s variable '\''g_rows'\''"
    done
    # neuronop test: the same warning from each of a case'\''s executions, printed once
    printf "tests:\n  - {name: t, op: k, args: [[zeros:6, zeros:7]]}\n" >>shg/neuronop.yaml
    run test shg
    expect_status 0
    test "$(grep -c "warning: the shape function wrote" err)" = 1'

test_done
