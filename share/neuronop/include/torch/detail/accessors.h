/*
 * torch/detail/accessors.h - the three ways a kernel reaches tensor data, as the device's
 * torch has them: TensorAccessor (t.accessor<T, N>(), element-wise, a[i][j]),
 * TensorReadStreamAccessor / TensorWriteStreamAccessor (sequential; a write stream flushes
 * on close() or when it goes out of scope) and TensorTcmAccessor (bulk copies to and from
 * tcm_malloc buffers).  Included by <torch/torch.h>; not on its own.
 *
 * Each is a handle on the C API's accessor (neuronop.h), so every device rule is checked by
 * the same runtime code as for a C kernel, and counted and priced the same.  What torch checks
 * from the template arguments - T against the tensor's dtype, N against its dimensions - is
 * checked when the accessor is made (nt__cxx_check), and reported in these C++ terms.
 * Read-only accessors (from a const tensor: a kernel's inputs) give const T & elements, so a
 * write through one is a compile error; a writable accessor's elements are T &, as torch's.
 */
#ifndef NEURONOP_TORCH_DETAIL_ACCESSORS_H
#define NEURONOP_TORCH_DETAIL_ACCESSORS_H

namespace torch {

/* t.accessor<T, N>(): element-wise random access, a[i][j].  Single-core only; the slowest
 * path (each element reference is a runtime call).  read_only when made from a const
 * tensor (or a temporary).
 *
 * As in torch, a[i] of an N-dimensional accessor is a row, a TensorAccessor<T, N - 1> (so a
 * helper taking a TensorAccessor<float, 1> takes it), and the last index yields the
 * element: a T & into the tensor's memory (a const T & when read-only), so every use a T &
 * has - auto copies, T & bindings, std::max, std::swap, template deduction, compound
 * operators - is the language's own.  Each element reference is one runtime call
 * (nt__cxx_ref) that checks the indices and the accessor's rules and counts the access for
 * the cost model before the reference is made; what it cannot see (whether the reference is
 * then read or written) is said in neuronop-cxx(3).  A row holds a copy of the accessor and
 * the indices given so far, so a row of a temporary accessor stays valid. */
template <class T, size_t N, bool read_only = false> class TensorAccessor {
    static_assert(N >= 1 && N <= 8, "accessor<T, N>: N is the tensor's number of dimensions, "
                  "1 to 8");
    /* (a tester's find: TensorAccessor<const float, 1> was told float is no device type) */
    static_assert(!std::is_const<T>::value, "TensorAccessor<const T, N>: the element type is "
                  "written without const; a read-only accessor is TensorAccessor<T, N, true>, "
                  "what accessor<T, N>() of a const tensor gives (or write auto)");
    static_assert(std::is_const<T>::value || detail::elem<T>::ok, NT__TORCH_ELEM_TYPES);
    template <class, size_t, bool> friend class TensorAccessor;

public:
    typedef typename std::conditional<read_only, const T &, T &>::type reference;
    typedef typename std::conditional<N == 1, reference,
                                      TensorAccessor<T, N - 1, read_only>>::type index_type;
    /* what a const accessor (or row) gives, as torch's const operator[]: a const T &, or a
     * const row, whose elements are const T & (a write through one is a compile error there:
     * an ATen tester's find) */
    typedef typename std::conditional<N == 1, const T &,
                                      const TensorAccessor<T, N - 1, read_only>>::type
        const_index_type;

    explicit TensorAccessor(const nt_tensor *t) noexcept : t_(t), depth_(0)
    {
        nt__cxx_check(NT__CXX_ACCESSOR, t, static_cast<int64_t>(N),
                      detail::elem_ok<T>::dtype);
        a_ = nt_accessor_of(t);
    }
    index_type operator[](int64_t i) noexcept
    {
        return at(i, std::integral_constant<bool, N == 1>(), !read_only);
    }
    const_index_type operator[](int64_t i) const noexcept
    {
        return at(i, std::integral_constant<bool, N == 1>(), false);
    }
    /* size(0) is the size of this accessor's first dimension (of a row: the row's); dim < 0
     * counts from the last, which a row shares with its tensor */
    int64_t size(int64_t dim) const noexcept
    {
        const int64_t d = dim < 0 ? dim : dim + depth_;
        if (d != static_cast<int>(d))   /* out of range, not wrapped by nt_size's int */
            nt__cxx_check(NT__CXX_DIM, t_, dim, 0);
        return nt_size(t_, static_cast<int>(d));
    }

private:
    TensorAccessor(const TensorAccessor<T, N + 1, read_only> &up, int64_t i) noexcept
        : t_(up.t_), a_(up.a_), depth_(up.depth_ + 1)
    {
        for (int k = 0; k < up.depth_; k++)
            idx_[k] = up.idx_[k];
        idx_[up.depth_] = i;
    }
    index_type at(int64_t i, std::false_type, bool) const noexcept { return index_type(*this, i); }
    index_type at(int64_t i, std::true_type, bool writable) const noexcept
    {
        idx_[depth_] = i;
        return *static_cast<T *>(nt__cxx_ref(&a_, depth_ + 1, idx_, writable));
    }

    const nt_tensor *t_;
    nt_accessor a_;
    int depth_;                 /* indices given before this accessor: a row's */
    mutable int64_t idx_[8];    /* ... and their values; the last index goes after them */
};

namespace detail {
/* What both stream accessors are: an open stream, moved but never copied, closed once - by
 * close() or at the end of the accessor's scope, which flushes a write stream. */
class OpenStream {
public:
    OpenStream(OpenStream &&o) noexcept : s_(o.s_), open_(o.open_) { o.open_ = false; }
    OpenStream(const OpenStream &) = delete;
    OpenStream &operator=(const OpenStream &) = delete;
    ~OpenStream() { close(); }
    int close() noexcept
    {
        if (open_)
            nt_stream_close(&s_);
        open_ = false;
        return 0;
    }

protected:
    explicit OpenStream(nt_stream s) noexcept : s_(s), open_(true) {}
    nt_stream s_;

private:
    bool open_;
};
} // namespace detail

/* t.read_stream_accessor<T>(): reads the tensor's elements in order.  Single-core only; takes
 * 4 KB of the core's TCM until closed (on close() or at the end of its scope). */
template <class T> class TensorReadStreamAccessor : public detail::OpenStream {
    static_assert(detail::elem<T>::ok, NT__TORCH_ELEM_TYPES);

public:
    explicit TensorReadStreamAccessor(const nt_tensor *t) noexcept : OpenStream(start(t)) {}
    T read() noexcept { return detail::elem<T>::read(&s_); }

private:
    static nt_read_stream start(const nt_tensor *t) noexcept
    {
        nt__cxx_check(NT__CXX_READ_STREAM, t, 0, detail::elem_ok<T>::dtype);
        return nt_read_stream_of(t);
    }
};

/* t.write_stream_accessor<T>(): writes the tensor's elements in order; what is written reaches
 * the tensor by close() or the end of the accessor's scope.  Single-core only; 4 KB of TCM. */
template <class T> class TensorWriteStreamAccessor : public detail::OpenStream {
    static_assert(detail::elem<T>::ok, NT__TORCH_ELEM_TYPES);

public:
    explicit TensorWriteStreamAccessor(const nt_tensor *t) noexcept : OpenStream(start(t)) {}
    void write(T value) noexcept { detail::elem<T>::write(&s_, value); }

private:
    static nt_write_stream start(const nt_tensor *t) noexcept
    {
        nt__cxx_check(NT__CXX_WRITE_STREAM, t, 0, detail::elem_ok<T>::dtype);
        return nt_write_stream_of(t);
    }
};

/* t.tcm_accessor(): copies between the tensor and a tcm_malloc buffer; offsets and counts in
 * elements of the flattened tensor.  The fast path, and the only one allowed in multicore.
 * T of each copy must be the tensor's element type (checked on each copy, inline). */
template <bool read_only> class TensorTcmAccessor {
public:
    explicit TensorTcmAccessor(const nt_tensor *t) noexcept
        : a_(nt_tcm_accessor_of(t)), dtype_(nt_dtype_of(t))
    {
    }
    template <class T> void tensor_to_tcm(T *tcm_ptr, size_t tensor_offset, size_t num_elem) noexcept
    {
        if (detail::elem_ok<T>::dtype != dtype_)
            nt__cxx_check(NT__CXX_TO_TCM, a_.t_, 0, detail::elem_ok<T>::dtype);
        nt_tensor_to_tcm(&a_, tcm_ptr, static_cast<int64_t>(tensor_offset),
                         static_cast<int64_t>(num_elem));
    }
    template <class T> void tcm_to_tensor(T *tcm_ptr, size_t tensor_offset, size_t num_elem) noexcept
    {
        static_assert(!read_only && sizeof(T) > 0, "tcm_to_tensor on a read-only TCM accessor: "
                      "it was made from a const tensor (an op's input) or a temporary (as on "
                      "the device); write to a named tensor: torch::Tensor out = "
                      "get_dst_tensor();");
        if (detail::elem_ok<T>::dtype != dtype_)
            nt__cxx_check(NT__CXX_FROM_TCM, a_.t_, 0, detail::elem_ok<T>::dtype);
        nt_tcm_to_tensor(&a_, tcm_ptr, static_cast<int64_t>(tensor_offset),
                         static_cast<int64_t>(num_elem));
    }

private:
    nt_tcm_accessor a_;
    nt_dtype dtype_;
};

} // namespace torch

#endif /* NEURONOP_TORCH_DETAIL_ACCESSORS_H */
