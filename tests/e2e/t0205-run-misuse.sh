#!/bin/sh
# Every remaining way a kernel or shape function can misuse the kernel API gets its message
# naming the op, the core (or shape function) and the call; exit status 1.
. ./lib.sh
cp -R "$NEURONOP_SRC/tests/fixtures/misuse" "$WORK/m"

# case LIBRARY OP MESSAGE: the op fails with exit status 1 and MESSAGE (pointers vary, so
# messages are matched up to the first one)
check() {
    run run "m/$1.yaml" "$2" randn:3x4
    expect_status 1
    expect_err "neuronop: $2: $3"
}

while IFS='|' read -r lib op msg; do
    [ -n "$lib" ] || continue
    test_expect "misuse: $op" "check $lib $op \"$msg\""
done <<'CASES'
a|tcm_free_foreign|core 0: error: tcm_free(0x
a|tcm_free_twice|core 0: error: tcm_free(0x
a|tcm_free_stream|core 0: error: tcm_free(0x
a|size_dim|core 0: error: nt_size(dim=5): the tensor has 2 dimensions
a|coherence_bad|core 0: error: nt_set_coherence(policy=7): the policies are NT_COHERENT, NT_INCOHERENT_VERBOSE and NT_INCOHERENT_QUIET
a|dtype_bad|core 0: error: nt_zeros: 42 is not a dtype (NT_F32 ... NT_U8)
a|stream_wrong_kind|core 0: error: nt_stream_write_f32 on a read stream
a|tcm_negative|core 0: error: nt_tensor_to_tcm(offset=-1, n=2): offset and count must be at least 0
a|tcm_not_tcm|core 0: error: nt_tensor_to_tcm(offset=0, n=2): the buffer 0x
a|null_tensor|core 0: error: nt_numel: the tensor is NULL
b|not_a_tensor|core 0: error: nt_numel: 0x
b|returns_garbage|core 0: error: the kernel returned 0x
b|shape_service|shape function 'shape_service': error: tcm_malloc: shape function 'shape_service' calls a device service
b|shape_null|shape function 'shape_null': error: the shape function returned NULL
CASES

test_expect "the messages after the pointers say what is wrong" '
    run run m/a.yaml tcm_free_twice randn:3x4
    expect_err "): not a pointer tcm_malloc returned on this core, or already freed"
    run run m/a.yaml tcm_free_stream randn:3x4
    expect_err "): this TCM belongs to an open stream; close the stream instead"
    run run m/a.yaml tcm_not_tcm randn:3x4
    expect_err " is not TCM from tcm_malloc on this core (or was freed)"
    run run m/b.yaml not_a_tensor randn:3x4
    expect_err " is not a tensor (freed, or a pointer to something else)"
    run run m/b.yaml returns_garbage randn:3x4
    expect_err ", which is not a tensor"'

test_done
