# Vector growth that reports running out of memory instead of throwing (grow.hpp): for the nogil
# kernels, which cannot pass a C++ exception or a Python one on. Each returns False on failure.
from libcpp.vector cimport vector

cdef extern from "grow.hpp" namespace "tokkit" nogil:
    bint grow_push[T](vector[T]& v, const T& x)
    bint grow_resize[T](vector[T]& v, size_t n)
    bint grow_reserve[T](vector[T]& v, size_t n)
    bint grow_assign[T](vector[T]& v, const T* a, const T* b)
    bint grow_append[T](vector[T]& v, const T* a, const T* b)
    void cut_to[T](vector[T]& v, size_t n)
    void throw_bad_alloc()
