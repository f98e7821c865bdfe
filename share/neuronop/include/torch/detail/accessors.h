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
 * Read-only accessors (from a const tensor: a kernel's inputs) have no way to write: that is
 * a compile error, as with torch.
 */
#ifndef NEURONOP_TORCH_DETAIL_ACCESSORS_H
#define NEURONOP_TORCH_DETAIL_ACCESSORS_H

namespace torch {
namespace detail {

/* A 16-bit float element reads as float too (float v = acc[i]), which would otherwise take
 * two user-defined conversions (element -> BFloat16 -> float) that C++ does not chain. */
template <class Self, class T> struct FloatView {};
template <class Self> struct FloatView<Self, c10::BFloat16> {
    operator float() const noexcept
    {
        return static_cast<const Self &>(*this).get();
    }
};
template <class Self> struct FloatView<Self, c10::Half> {
    operator float() const noexcept
    {
        return static_cast<const Self &>(*this).get();
    }
};

/* One element of a writable accessor: reads and writes go through the runtime. */
template <class T, size_t N> class ElementRef : public FloatView<ElementRef<T, N>, T> {
public:
    ElementRef(const nt_accessor *a, const int64_t *idx) noexcept : a_(a)
    {
        for (size_t k = 0; k < N; k++)
            idx_[k] = idx[k];
    }
    T get() const noexcept { return elem<T>::get(a_, static_cast<int>(N), idx_); }
    operator T() const noexcept { return get(); }
    const ElementRef &operator=(T v) const noexcept
    {
        elem<T>::set(a_, v, static_cast<int>(N), idx_);
        return *this;
    }
    const ElementRef &operator=(const ElementRef &o) const noexcept { return *this = T(o); }
    const ElementRef &operator+=(T v) const noexcept { return *this = T(*this) + v; }
    const ElementRef &operator-=(T v) const noexcept { return *this = T(*this) - v; }
    const ElementRef &operator*=(T v) const noexcept { return *this = T(*this) * v; }
    const ElementRef &operator/=(T v) const noexcept { return *this = T(*this) / v; }

private:
    const nt_accessor *a_;
    int64_t idx_[N];
};

/* a[i0]...[ik-1] of an N-dimensional accessor, with R indices still to give.  The last
 * index yields the element: a value when read-only, an ElementRef otherwise. */
template <class T, size_t N, size_t R, bool RO> class Level {
public:
    Level(const nt_accessor *a, const int64_t *idx) noexcept : a_(a)
    {
        for (size_t k = 0; k < N - R; k++)
            idx_[k] = idx[k];
    }
    Level<T, N, R - 1, RO> operator[](int64_t i) const noexcept
    {
        idx_[N - R] = i;
        return Level<T, N, R - 1, RO>(a_, idx_);
    }

private:
    const nt_accessor *a_;
    mutable int64_t idx_[N];
};
template <class T, size_t N> class Level<T, N, 1, true> {
public:
    Level(const nt_accessor *a, const int64_t *idx) noexcept : a_(a)
    {
        for (size_t k = 0; k + 1 < N; k++)
            idx_[k] = idx[k];
    }
    T operator[](int64_t i) const noexcept
    {
        idx_[N - 1] = i;
        return elem<T>::get(a_, static_cast<int>(N), idx_);
    }

private:
    const nt_accessor *a_;
    mutable int64_t idx_[N];
};
template <class T, size_t N> class Level<T, N, 1, false> {
public:
    Level(const nt_accessor *a, const int64_t *idx) noexcept : a_(a)
    {
        for (size_t k = 0; k + 1 < N; k++)
            idx_[k] = idx[k];
    }
    ElementRef<T, N> operator[](int64_t i) const noexcept
    {
        idx_[N - 1] = i;
        return ElementRef<T, N>(a_, idx_);
    }

private:
    const nt_accessor *a_;
    mutable int64_t idx_[N];
};

} // namespace detail

/* t.accessor<T, N>(): element-wise random access, a[i][j].  Single-core only; the slowest
 * path (each element is a runtime call).  read_only when made from a const tensor. */
template <class T, size_t N, bool read_only = false> class TensorAccessor {
    static_assert(N >= 1 && N <= 8, "accessor<T, N>: N is the tensor's number of dimensions, "
                  "1 to 8");

public:
    explicit TensorAccessor(const nt_tensor *t) noexcept : t_(t)
    {
        nt__cxx_check(NT__CXX_ACCESSOR, t, static_cast<int64_t>(N),
                      detail::elem_ok<T>::dtype);
        a_ = nt_accessor_of(t);
    }
    auto operator[](int64_t i) const noexcept
        -> decltype(detail::Level<T, N, N, read_only>(nullptr, nullptr)[i])
    {
        return detail::Level<T, N, N, read_only>(&a_, nullptr)[i];
    }
    int64_t size(int64_t dim) const noexcept { return nt_size(t_, static_cast<int>(dim)); }

private:
    const nt_tensor *t_;
    nt_accessor a_;
};

/* t.read_stream_accessor<T>(): reads the tensor's elements in order.  Single-core only; takes
 * 4 KB of the core's TCM until closed (on close() or at the end of its scope). */
template <class T> class TensorReadStreamAccessor {
public:
    explicit TensorReadStreamAccessor(const nt_tensor *t) noexcept : open_(true)
    {
        nt__cxx_check(NT__CXX_READ_STREAM, t, 0, detail::elem_ok<T>::dtype);
        s_ = nt_read_stream_of(t);
    }
    TensorReadStreamAccessor(TensorReadStreamAccessor &&o) noexcept : s_(o.s_), open_(o.open_)
    {
        o.open_ = false;
    }
    TensorReadStreamAccessor(const TensorReadStreamAccessor &) = delete;
    TensorReadStreamAccessor &operator=(const TensorReadStreamAccessor &) = delete;
    ~TensorReadStreamAccessor() { close(); }

    T read() noexcept { return detail::elem<T>::read(&s_); }
    int close() noexcept
    {
        if (open_)
            nt_stream_close(&s_);
        open_ = false;
        return 0;
    }

private:
    nt_read_stream s_;
    bool open_;
};

/* t.write_stream_accessor<T>(): writes the tensor's elements in order; what is written reaches
 * the tensor by close() or the end of the accessor's scope.  Single-core only; 4 KB of TCM. */
template <class T> class TensorWriteStreamAccessor {
public:
    explicit TensorWriteStreamAccessor(const nt_tensor *t) noexcept : open_(true)
    {
        nt__cxx_check(NT__CXX_WRITE_STREAM, t, 0, detail::elem_ok<T>::dtype);
        s_ = nt_write_stream_of(t);
    }
    TensorWriteStreamAccessor(TensorWriteStreamAccessor &&o) noexcept : s_(o.s_), open_(o.open_)
    {
        o.open_ = false;
    }
    TensorWriteStreamAccessor(const TensorWriteStreamAccessor &) = delete;
    TensorWriteStreamAccessor &operator=(const TensorWriteStreamAccessor &) = delete;
    ~TensorWriteStreamAccessor() { close(); }

    void write(T value) noexcept { detail::elem<T>::write(&s_, value); }
    int close() noexcept
    {
        if (open_)
            nt_stream_close(&s_);
        open_ = false;
        return 0;
    }

private:
    nt_write_stream s_;
    bool open_;
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
                      "it was made from a const tensor (an op's input); write to the output, "
                      "from get_dst_tensor() or a factory");
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
