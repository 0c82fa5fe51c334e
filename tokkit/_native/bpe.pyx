"""BPE merging by rank: the exact order of tokenizers' BPE (lowest rank, then leftmost).

Short words use a plain scan for the best pair; long ones (a 1,000,000-letter word is one
GPT-2 piece) use a heap over a linked list, so the time stays n log n.

>>> from tokkit._native.encode_tables import PairMap
>>> merge_ids(PairMap([(1, 1), (3, 1)], [3, 4]), [1, 1, 1])
[4]
"""
from libc.stdint cimport int32_t, int64_t, uint32_t
from libcpp.vector cimport vector
from libcpp.queue cimport priority_queue
from tokkit._native.encode_tables cimport PairMap

cdef enum:
    SHORT = 24  # up to this many symbols, scanning beats the heap's bookkeeping


cdef void bpe_merge(PairMap merges, vector[int32_t]& ids, vector[int32_t]& starts,
                    vector[int32_t]& ends) noexcept nogil:
    if <Py_ssize_t>ids.size() <= SHORT:
        merge_short(merges, ids, starts, ends)
    else:
        merge_long(merges, ids, starts, ends)


cdef void merge_short(PairMap merges, vector[int32_t]& ids, vector[int32_t]& starts,
                      vector[int32_t]& ends) noexcept nogil:
    # ranks[i]: packed (rank, merged id) of the pair (i, i+1), -1 when it is no merge. Only the
    # neighbours of a merge need a new lookup, so a word costs O(n) lookups.
    cdef Py_ssize_t n = ids.size(), i, best_i
    cdef int64_t best
    cdef int64_t ranks[SHORT]
    for i in range(n - 1):
        ranks[i] = merges.get(ids[i], ids[i + 1])
    while n > 1:
        best = -1
        best_i = -1
        for i in range(n - 1):
            # packed rank << 32 | id: comparing packed values compares ranks (ranks are unique)
            if ranks[i] >= 0 and (best < 0 or ranks[i] < best):
                best = ranks[i]
                best_i = i
        if best_i < 0:
            break
        ids[best_i] = <int32_t><uint32_t>best
        ends[best_i] = ends[best_i + 1]
        ids.erase(ids.begin() + best_i + 1)
        starts.erase(starts.begin() + best_i + 1)
        ends.erase(ends.begin() + best_i + 1)
        n -= 1
        for i in range(best_i + 1, n - 1):
            ranks[i] = ranks[i + 1]
        if best_i + 1 < n:
            ranks[best_i] = merges.get(ids[best_i], ids[best_i + 1])
        if best_i > 0:
            ranks[best_i - 1] = merges.get(ids[best_i - 1], ids[best_i])


cdef void merge_long(PairMap merges, vector[int32_t]& ids, vector[int32_t]& starts,
                     vector[int32_t]& ends) noexcept nogil:
    cdef Py_ssize_t n = ids.size(), i, j, nx, pv, k
    cdef vector[Py_ssize_t] prev, next_
    cdef vector[char] alive
    # min-heap on (rank, position) through negated keys in a max-heap
    cdef priority_queue[int64_t] heap
    cdef int64_t v, top, rank
    prev.resize(n)
    next_.resize(n)
    alive.assign(n, 1)
    for i in range(n):
        prev[i] = i - 1
        next_[i] = i + 1 if i + 1 < n else -1
    for i in range(n - 1):
        v = merges.get(ids[i], ids[i + 1])
        if v >= 0:
            heap.push(-(((v >> 32) << 32) | i))
    while not heap.empty():
        top = -heap.top()
        heap.pop()
        rank = top >> 32
        i = <uint32_t>top
        if not alive[i] or next_[i] < 0:
            continue
        nx = next_[i]
        v = merges.get(ids[i], ids[nx])
        if v < 0 or (v >> 32) != rank:
            continue  # stale: this pair changed since it was queued
        ids[i] = <int32_t><uint32_t>v
        ends[i] = ends[nx]
        alive[nx] = 0
        next_[i] = next_[nx]
        if next_[nx] >= 0:
            prev[next_[nx]] = i
        pv = prev[i]
        if pv >= 0:
            v = merges.get(ids[pv], ids[i])
            if v >= 0:
                heap.push(-(((v >> 32) << 32) | pv))
        if next_[i] >= 0:
            v = merges.get(ids[i], ids[next_[i]])
            if v >= 0:
                heap.push(-(((v >> 32) << 32) | i))
    k = 0
    for j in range(n):
        if alive[j]:
            ids[k] = ids[j]
            starts[k] = starts[j]
            ends[k] = ends[j]
            k += 1
    ids.resize(k)
    starts.resize(k)
    ends.resize(k)


def merge_ids(PairMap merges, list symbols) -> list:
    """Merge a list of symbol ids (testing helper)."""
    cdef vector[int32_t] ids, starts, ends
    for k, s in enumerate(symbols):
        ids.push_back(s)
        starts.push_back(k)
        ends.push_back(k + 1)
    bpe_merge(merges, ids, starts, ends)
    return [ids[k] for k in range(ids.size())]
