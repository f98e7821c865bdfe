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
 * a compile error, as with torch.  A writable accessor's element is a handle (ElementRef):
 * what that changes for the code that uses it is said where it is defined.
 */
#ifndef NEURONOP_TORCH_DETAIL_ACCESSORS_H
#define NEURONOP_TORCH_DETAIL_ACCESSORS_H

namespace torch {
template <class T, size_t N, bool read_only = false> class TensorAccessor;
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

/* One element of a writable accessor: a handle on the element, whose reads and writes go
 * through the runtime.  It is not a T &, so three things torch code does with a T & are made
 * compile errors here rather than left to compute something else:
 *   - auto x = acc[i] (a copy of the value in torch) would be a second handle on the
 *     element, seeing later writes: the copy constructor is private;
 *   - c ? acc[i] : 0 would convert the element to int: a deleted constructor from numbers
 *     makes the two operands' types ambiguous;
 * and compound assignment computes in the wider type, as torch does (an int element *= 0.5
 * is int(x * 0.5), not x * int(0.5)). */
template <class T, size_t N> class ElementRef : public FloatView<ElementRef<T, N>, T> {
    template <class, size_t, size_t, bool> friend class Level;
    template <class, size_t, bool> friend class ::torch::TensorAccessor;

public:
    template <class U, typename std::enable_if<std::is_arithmetic<U>::value, int>::type = 0>
    ElementRef(U) = delete;

    T get() const noexcept { return elem<T>::get(&a_, static_cast<int>(N), idx_); }
    operator T() const noexcept { return get(); }
    const ElementRef &operator=(T v) const noexcept
    {
        elem<T>::set(&a_, v, static_cast<int>(N), idx_);
        return *this;
    }
    /* any number (one overload for all, so a BFloat16 element takes a float unambiguously) */
    template <class U, typename std::enable_if<std::is_arithmetic<U>::value, int>::type = 0>
    const ElementRef &operator=(U v) const noexcept
    {
        return *this = T(v);
    }
    const ElementRef &operator=(const ElementRef &o) const noexcept { return *this = o.get(); }
    template <class U, size_t M>
    const ElementRef &operator=(const ElementRef<U, M> &o) const noexcept
    {
        return *this = T(o.get());
    }
    template <class U> const ElementRef &operator+=(const U &v) const noexcept
    {
        return *this = T(get() + v);
    }
    template <class U> const ElementRef &operator-=(const U &v) const noexcept
    {
        return *this = T(get() - v);
    }
    template <class U> const ElementRef &operator*=(const U &v) const noexcept
    {
        return *this = T(get() * v);
    }
    template <class U> const ElementRef &operator/=(const U &v) const noexcept
    {
        return *this = T(get() / v);
    }
    const ElementRef &operator++() const noexcept { return *this += 1; }
    const ElementRef &operator--() const noexcept { return *this -= 1; }
    T operator++(int) const noexcept
    {
        T old = get();
        *this += 1;
        return old;
    }
    T operator--(int) const noexcept
    {
        T old = get();
        *this -= 1;
        return old;
    }

private:
    ElementRef(const nt_accessor &a, const int64_t *idx) noexcept : a_(a)
    {
        for (size_t k = 0; k < N; k++)
            idx_[k] = idx[k];
    }
    ElementRef(const ElementRef &) = default;
    nt_accessor a_;             /* a copy: an element outlives a temporary accessor */
    int64_t idx_[N];
};

/* a[i0]...[ik-1] of an N-dimensional accessor, with R indices still to give.  The last
 * index yields the element: a value when read-only (const, so a 16-bit float's cannot be
 * assigned to either), an ElementRef otherwise.  Each level holds a copy of the accessor, so
 * a row of a temporary accessor stays valid. */
template <class T, size_t N, size_t R, bool RO> class Level {
public:
    Level(const nt_accessor &a, const int64_t *idx) noexcept : a_(a)
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
    nt_accessor a_;
    mutable int64_t idx_[N];
};
template <class T, size_t N> class Level<T, N, 1, true> {
public:
    typedef typename std::conditional<std::is_class<T>::value, const T, T>::type value_type;
    Level(const nt_accessor &a, const int64_t *idx) noexcept : a_(a)
    {
        for (size_t k = 0; k + 1 < N; k++)
            idx_[k] = idx[k];
    }
    value_type operator[](int64_t i) const noexcept
    {
        idx_[N - 1] = i;
        return elem<T>::get(&a_, static_cast<int>(N), idx_);
    }

private:
    nt_accessor a_;
    mutable int64_t idx_[N];
};
template <class T, size_t N> class Level<T, N, 1, false> {
public:
    Level(const nt_accessor &a, const int64_t *idx) noexcept : a_(a)
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
    nt_accessor a_;
    mutable int64_t idx_[N];
};

} // namespace detail

/* t.accessor<T, N>(): element-wise random access, a[i][j].  Single-core only; the slowest
 * path (each element is a runtime call).  read_only when made from a const tensor. */
template <class T, size_t N, bool read_only> class TensorAccessor {
    static_assert(N >= 1 && N <= 8, "accessor<T, N>: N is the tensor's number of dimensions, "
                  "1 to 8");
    static_assert(detail::elem<T>::ok, NT__TORCH_ELEM_TYPES);

public:
    explicit TensorAccessor(const nt_tensor *t) noexcept : t_(t)
    {
        nt__cxx_check(NT__CXX_ACCESSOR, t, static_cast<int64_t>(N),
                      detail::elem_ok<T>::dtype);
        a_ = nt_accessor_of(t);
    }
    auto operator[](int64_t i) const noexcept
        -> decltype(detail::Level<T, N, N, read_only>(nt_accessor(), nullptr)[i])
    {
        return detail::Level<T, N, N, read_only>(a_, nullptr)[i];
    }
    int64_t size(int64_t dim) const noexcept { return nt_size(t_, static_cast<int>(dim)); }

private:
    const nt_tensor *t_;
    nt_accessor a_;
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
