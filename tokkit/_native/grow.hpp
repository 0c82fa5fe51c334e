// Growing a vector inside the nogil kernels, where a std::bad_alloc has nowhere to go: Cython turns
// one thrown through an `except +` call into a Python MemoryError that a noexcept function can only
// print and drop. These report failure instead; the kernel marks its output (Rows.oom) and stops,
// and the Python entry point raises one OutOfMemory. The try blocks cost nothing unless they throw.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace tokkit {

template <class T>
inline bool grow_push(std::vector<T>& v, const T& x) noexcept {
    try {
        v.push_back(x);
        return true;
    } catch (...) {
        return false;
    }
}

template <class T>
inline bool grow_resize(std::vector<T>& v, size_t n) noexcept {
    try {
        v.resize(n);
        return true;
    } catch (...) {
        return false;
    }
}

template <class T>
inline bool grow_reserve(std::vector<T>& v, size_t n) noexcept {
    try {
        v.reserve(n);
        return true;
    } catch (...) {
        return false;
    }
}

// The first n elements kept (n <= size): shrinking never allocates.
template <class T>
inline void cut_to(std::vector<T>& v, size_t n) noexcept {
    v.erase(v.begin() + n, v.end());
}

// [a, b) appended to v (on failure v keeps what it held).
template <class T>
inline bool grow_append(std::vector<T>& v, const T* a, const T* b) noexcept {
    try {
        v.insert(v.end(), a, b);
        return true;
    } catch (...) {
        return false;
    }
}

// v = [a, b) (on failure v keeps what it held, or is empty)
template <class T>
inline bool grow_assign(std::vector<T>& v, const T* a, const T* b) noexcept {
    try {
        v.assign(a, b);
        return true;
    } catch (...) {
        return false;
    }
}

// For a callback that C++ code calls inside its own try (the general path's pre-tokenizer steps):
// the failure goes on up as the exception it was.
[[noreturn]] inline void throw_bad_alloc() { throw std::bad_alloc(); }

}  // namespace tokkit
