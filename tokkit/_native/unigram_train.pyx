"""The unigram trainer's loops: seed substrings, forward-backward, Viterbi counts and second-best paths.

The compiled twin of `tokkit/train/unigram_py.py` (same arguments, same numbers, in the same
order of additions). Pieces live in a trie (trie.hpp) whose edges are one hash table keyed by
(node << 21 | code point); every word's lattice is rebuilt from it on each pass.

>>> import numpy as np
>>> pieces = np.array([97, 98, 97, 98], dtype=np.int32)            # "a", "b", "ab"
>>> p_off = np.array([0, 1, 2, 4]); scores = np.log([0.25, 0.25, 0.5])
>>> words = np.array([97, 98, 98], dtype=np.int32); w_off = np.array([0, 2, 3]); counts = np.array([3, 1])
>>> viterbi_counts(pieces, p_off, scores, words, w_off, counts, unk_score=-20.0).tolist()
[0.0, 1.0, 3.0]
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from libc.math cimport INFINITY, exp, log, log1p
from libc.stdint cimport int8_t, int32_t, int64_t, uint32_t
from libcpp.vector cimport vector

cdef extern from "trie.hpp" namespace "tokkit":
    cdef cppclass Step "tokkit::CodeTrie::Step":
        int32_t node, value
    cdef cppclass CodeTrie:
        Step step(int32_t node, uint32_t unit) nogil
        int32_t add_child(int32_t node, uint32_t unit) except + nogil
        int32_t value(int32_t node) nogil
        void set_value(int32_t node, int32_t v) nogil
        bint reserve(size_t edges) nogil

cdef int32_t NO_PIECE = -1  # the id of an unknown node
E_CHUNKS = 8  # the E-step sums this many fixed word ranges apart, then adds them in order
# A word whose every path scores above this (in nats) runs its forward-backward in probabilities:
# exp(-600) is far above the smallest double, with room for the sums of many paths.
cdef double LINEAR_FLOOR = -600.0


cdef class _Trie:
    """The pieces as a trie: each node's value is the piece ending there (NO_PIECE: none)."""

    cdef CodeTrie trie
    cdef Py_ssize_t longest

    def __init__(self, const int32_t[::1] cps, const int64_t[::1] offsets):
        cdef Py_ssize_t i, k
        cdef int32_t node
        self.longest = 1
        if not self.trie.reserve(offsets[offsets.shape[0] - 1] - offsets[0] if offsets.shape[0] else 0):
            raise MemoryError("no memory for the pieces' trie")
        for i in range(offsets.shape[0] - 1):
            node = 0
            for k in range(offsets[i], offsets[i + 1]):
                if cps[k] < 0 or cps[k] >= (1 << 21):
                    raise ValueError(f"code point {cps[k]} out of range")
                node = self.trie.add_child(node, <uint32_t>cps[k])
            self.trie.set_value(node, <int32_t>i)
            self.longest = max(self.longest, offsets[i + 1] - offsets[i])

    cdef int nodes(self, const int32_t* word, Py_ssize_t n, vector[int32_t]& start_at,
                   vector[int32_t]& ends, vector[int32_t]& pids) except -1 nogil:
        """Each start's nodes (end, piece) in start_at[i]:start_at[i + 1], an unknown one first when no
        one-character piece starts there, then by increasing end."""
        cdef Py_ssize_t i, j, first
        cdef int32_t node
        cdef Step to
        cdef bint single
        start_at.clear(); ends.clear(); pids.clear()
        for i in range(n):
            start_at.push_back(<int32_t>ends.size())
            first = ends.size()
            single = False
            node = 0
            j = i
            while j < n and j - i < self.longest:
                to = self.trie.step(node, <uint32_t>word[j])
                if to.node < 0:
                    break
                node = to.node
                j += 1
                if to.value != NO_PIECE:
                    ends.push_back(<int32_t>j)
                    pids.push_back(to.value)
                    if j == i + 1:
                        single = True
            if not single:
                ends.insert(ends.begin() + first, <int32_t>(i + 1))
                pids.insert(pids.begin() + first, NO_PIECE)
        start_at.push_back(<int32_t>ends.size())
        return 0


cdef inline double logaddexp(double x, double y) noexcept nogil:
    if x == -INFINITY:
        return y
    if x > y:
        return x + log1p(exp(y - x))
    return y + log1p(exp(x - y))


cdef inline double node_score(int32_t pid, const double[::1] scores, double unk_score) noexcept nogil:
    return unk_score if pid == NO_PIECE else scores[pid]


cdef Py_ssize_t viterbi(const int32_t* word, Py_ssize_t n, vector[int32_t]& start_at, vector[int32_t]& ends,
                        vector[int32_t]& pids, const double[::1] scores, double unk_score, int32_t banned,
                        vector[double]& best, vector[int32_t]& back_from, vector[int32_t]& back_pid,
                        vector[int32_t]& path) except -1 nogil:
    """The best path's piece ids into `path` (left to right); its length, or 0 when there is none."""
    cdef Py_ssize_t i, k, j
    cdef double s
    best.assign(n + 1, -INFINITY)
    back_from.assign(n + 1, 0)
    back_pid.assign(n + 1, 0)
    best[0] = 0.0
    for i in range(n):
        if best[i] == -INFINITY:
            continue
        for k in range(start_at[i], start_at[i + 1]):
            if pids[k] == banned:
                continue
            j = ends[k]
            s = best[i] + node_score(pids[k], scores, unk_score)
            if s > best[j]:
                best[j] = s
                back_from[j] = <int32_t>i
                back_pid[j] = pids[k]
    path.clear()
    if best[n] == -INFINITY:
        return 0
    j = n
    while j > 0:
        path.push_back(back_pid[j])
        j = back_from[j]
    for i in range(<Py_ssize_t>path.size() // 2):
        k = path[i]
        path[i] = path[path.size() - 1 - i]
        path[path.size() - 1 - i] = <int32_t>k
    return path.size()


def e_step(const int32_t[::1] piece_cps, const int64_t[::1] piece_offsets, const double[::1] scores,
           const int32_t[::1] word_cps, const int64_t[::1] word_offsets, const int64_t[::1] counts,
           *, double unk_score, int threads=1):
    """Expected piece counts (forward-backward) and the sum of count * log Z.

    The words are cut into E_CHUNKS fixed ranges, each summed on its own (on up to `threads`
    threads, the GIL released) and the ranges added in order: the result never depends on threads.
    """
    cdef _Trie trie = _Trie(piece_cps, piece_offsets)
    cdef Py_ssize_t n_pieces = piece_offsets.shape[0] - 1, n_words = counts.shape[0]
    if scores.shape[0] != n_pieces:
        raise ValueError("one score per piece")
    parts = np.zeros((E_CHUNKS, n_pieces), dtype=np.float64)
    objectives = np.zeros(E_CHUNKS, dtype=np.float64)
    bounds = [n_words * c // E_CHUNKS for c in range(E_CHUNKS + 1)]

    def run(Py_ssize_t c):
        cdef double[::1] part = parts[c]
        cdef double[::1] obj = objectives[c:c + 1]
        cdef Py_ssize_t w0 = bounds[c], w1 = bounds[c + 1]
        with nogil:
            obj[0] = _e_range(trie, scores, word_cps, word_offsets, counts, unk_score, w0, w1, part)

    _run_chunks(run, threads)
    expected = np.zeros(n_pieces, dtype=np.float64)
    objective = 0.0
    for c in range(E_CHUNKS):
        expected += parts[c]
        objective += float(objectives[c])
    return expected, objective


cdef double _e_range(_Trie trie, const double[::1] scores, const int32_t[::1] word_cps,
                     const int64_t[::1] word_offsets, const int64_t[::1] counts, double unk_score,
                     Py_ssize_t w0, Py_ssize_t w1, double[::1] expected) except? -1.0 nogil:
    """Forward-backward over words w0..w1-1, adding their expected counts; returns their sum of count * log Z.

    A word short enough that no path through it can underflow a double runs in probabilities
    (one multiply-add an edge); a longer one in log space (an exp and a log1p an edge). The two
    give the same numbers up to rounding.
    """
    cdef vector[int32_t] start_at, ends, pids
    cdef vector[double] alpha, beta, prob
    cdef Py_ssize_t w, i, k, n, pid, n_pieces = scores.shape[0]
    cdef const int32_t* word
    cdef double freq, z, objective = 0.0, lowest = unk_score
    for k in range(n_pieces):
        prob.push_back(exp(scores[k]))
        lowest = min(lowest, scores[k])
    prob.push_back(exp(unk_score))  # prob[n_pieces]: an unknown node
    for w in range(w0, w1):
        n = word_offsets[w + 1] - word_offsets[w]
        word = &word_cps[word_offsets[w]] if n else NULL
        freq = <double>counts[w]
        trie.nodes(word, n, start_at, ends, pids)
        if n * lowest > LINEAR_FLOOR:
            objective += _linear_word(n, start_at, ends, pids, prob.data(), n_pieces, freq, alpha, beta, expected)
            continue
        alpha.assign(n + 1, -INFINITY)
        alpha[0] = 0.0
        for i in range(n):
            for k in range(start_at[i], start_at[i + 1]):
                alpha[ends[k]] = logaddexp(alpha[ends[k]], alpha[i] + node_score(pids[k], scores, unk_score))
        beta.assign(n + 1, -INFINITY)
        beta[n] = 0.0
        for i in range(n - 1, -1, -1):
            for k in range(start_at[i], start_at[i + 1]):
                beta[i] = logaddexp(beta[i], beta[ends[k]] + node_score(pids[k], scores, unk_score))
        z = alpha[n]
        for i in range(n):
            for k in range(start_at[i], start_at[i + 1]):
                if pids[k] != NO_PIECE:
                    expected[pids[k]] += freq * exp(alpha[i] + scores[pids[k]] + beta[ends[k]] - z)
        objective += freq * z
    return objective


cdef double _linear_word(Py_ssize_t n, vector[int32_t]& start_at, vector[int32_t]& ends, vector[int32_t]& pids,
                         const double* prob, Py_ssize_t unk, double freq, vector[double]& alpha, vector[double]& beta,
                         double[::1] expected) except? -1.0 nogil:
    """One word's forward-backward in probabilities (prob[unk] for an unknown node); returns freq * log Z."""
    cdef Py_ssize_t i, k, pid
    cdef double z, scale
    alpha.assign(n + 1, 0.0)
    alpha[0] = 1.0
    for i in range(n):
        for k in range(start_at[i], start_at[i + 1]):
            pid = pids[k] if pids[k] != NO_PIECE else unk
            alpha[ends[k]] += alpha[i] * prob[pid]
    beta.assign(n + 1, 0.0)
    beta[n] = 1.0
    for i in range(n - 1, -1, -1):
        for k in range(start_at[i], start_at[i + 1]):
            pid = pids[k] if pids[k] != NO_PIECE else unk
            beta[i] += beta[ends[k]] * prob[pid]
    z = alpha[n]
    scale = freq / z
    for i in range(n):
        for k in range(start_at[i], start_at[i + 1]):
            if pids[k] != NO_PIECE:
                expected[pids[k]] += scale * (alpha[i] * prob[pids[k]] * beta[ends[k]])
    return freq * log(z)


def viterbi_counts(const int32_t[::1] piece_cps, const int64_t[::1] piece_offsets, const double[::1] scores,
                   const int32_t[::1] word_cps, const int64_t[::1] word_offsets, const int64_t[::1] counts,
                   *, double unk_score, int threads=1):
    """How often each piece is on the words' best paths, weighted by the words' counts (float64).

    Like e_step, E_CHUNKS fixed word ranges on up to `threads` threads, added in order.
    """
    cdef _Trie trie = _Trie(piece_cps, piece_offsets)
    cdef Py_ssize_t n_pieces = piece_offsets.shape[0] - 1, n_words = counts.shape[0]
    if scores.shape[0] != n_pieces:
        raise ValueError("one score per piece")
    parts = np.zeros((E_CHUNKS, n_pieces), dtype=np.float64)
    bounds = [n_words * c // E_CHUNKS for c in range(E_CHUNKS + 1)]

    def run(Py_ssize_t c):
        cdef double[::1] part = parts[c]
        cdef Py_ssize_t w0 = bounds[c], w1 = bounds[c + 1]
        with nogil:
            _viterbi_range(trie, scores, word_cps, word_offsets, counts, unk_score, w0, w1, part)

    _run_chunks(run, threads)
    freq = np.zeros(n_pieces, dtype=np.float64)
    for c in range(E_CHUNKS):
        freq += parts[c]
    return freq


cdef int _viterbi_range(_Trie trie, const double[::1] scores, const int32_t[::1] word_cps,
                        const int64_t[::1] word_offsets, const int64_t[::1] counts, double unk_score,
                        Py_ssize_t w0, Py_ssize_t w1, double[::1] freq) except -1 nogil:
    """Add the counts of words w0..w1-1 to the pieces on their best paths."""
    cdef vector[int32_t] start_at, ends, pids, back_from, back_pid, path
    cdef vector[double] best
    cdef Py_ssize_t w, k, n, length
    cdef const int32_t* word
    for w in range(w0, w1):
        n = word_offsets[w + 1] - word_offsets[w]
        word = &word_cps[word_offsets[w]] if n else NULL
        trie.nodes(word, n, start_at, ends, pids)
        length = viterbi(word, n, start_at, ends, pids, scores, unk_score, -2, best, back_from, back_pid, path)
        for k in range(length):
            if path[k] != NO_PIECE:
                freq[path[k]] += <double>counts[w]
    return 0


def _run_chunks(run, int threads):
    """run(c) for every chunk c, on up to `threads` threads."""
    if threads > 1:
        with ThreadPoolExecutor(max_workers=min(threads, E_CHUNKS)) as pool:
            list(pool.map(run, range(E_CHUNKS)))
    else:
        for c in range(E_CHUNKS):
            run(c)


def alternatives(const int32_t[::1] piece_cps, const int64_t[::1] piece_offsets, const double[::1] scores,
                 *, double unk_score):
    """(kind int8[n], alt_ids int32, alt_offsets int64[n + 1]): see tokkit.train.unigram_py.alternatives."""
    cdef _Trie trie = _Trie(piece_cps, piece_offsets)
    cdef Py_ssize_t n_pieces = piece_offsets.shape[0] - 1
    if scores.shape[0] != n_pieces:
        raise ValueError("one score per piece")
    kind_arr = np.zeros(n_pieces, dtype=np.int8)
    offsets_arr = np.zeros(n_pieces + 1, dtype=np.int64)
    cdef int8_t[::1] kind = kind_arr
    cdef int64_t[::1] alt_offsets = offsets_arr
    cdef vector[int32_t] alt, start_at, ends, pids, back_from, back_pid, path
    cdef vector[double] best
    cdef Py_ssize_t i, k, n, length
    cdef bint unknown
    cdef const int32_t* word
    with nogil:
        for i in range(n_pieces):
            n = piece_offsets[i + 1] - piece_offsets[i]
            word = &piece_cps[piece_offsets[i]]
            trie.nodes(word, n, start_at, ends, pids)
            if viterbi(word, n, start_at, ends, pids, scores, unk_score, -2, best, back_from, back_pid, path) >= 2:
                kind[i] = 0
            else:
                length = viterbi(word, n, start_at, ends, pids, scores, unk_score, <int32_t>i,
                                 best, back_from, back_pid, path)
                unknown = False
                for k in range(length):
                    unknown = unknown or path[k] == NO_PIECE
                if length == 0 or unknown:
                    kind[i] = 1
                else:
                    kind[i] = 2
                    for k in range(length):
                        alt.push_back(path[k])
            alt_offsets[i + 1] = alt.size()
    alt_arr = np.array([alt[k] for k in range(<Py_ssize_t>alt.size())], dtype=np.int32)
    return kind_arr, alt_arr, offsets_arr


cdef enum:
    BAD = -1      # a character no piece may hold
    MARKER = -2   # ▁: only a piece's first character
    ALONE = -3    # a character that is a piece of its own only (a digit with --split-digits)


def count_substrings(const int32_t[::1] word_cps, const int64_t[::1] word_offsets, const int64_t[::1] counts,
                     const int32_t[::1] classes, *, Py_ssize_t max_length, int64_t min_count):
    """Count every substring of 2 to max_length characters a piece may be, weighted by the words' counts.

    classes[k] is word_cps[k]'s class: -1 never in a piece, -2 only first, -3 only alone, 0 joins any
    script, s > 0 a script (a piece holds one). Returns (cps int32, offsets int64, counts int64) of
    those seen at least min_count times, in no particular order.

    Substrings grow one character a pass, from every start whose substring so far was seen at
    least min_count times (a longer one is never seen more often): the trie holds only the
    extensions of frequent substrings, not every substring of every rare word.
    """
    if classes.shape[0] != word_cps.shape[0]:
        raise ValueError("one class per code point")
    cdef CodeTrie trie
    cdef vector[int32_t] parent, last_cp, depth
    cdef vector[int64_t] seen
    cdef vector[int64_t] active, grown       # start positions still growing
    cdef vector[int32_t] node_at, script_at  # per start: its substring's trie node and script so far
    cdef vector[int32_t] word_of             # per position: its word
    cdef Py_ssize_t w, p, j, level, k
    cdef int32_t node, cls
    parent.push_back(-1); last_cp.push_back(0); depth.push_back(0); seen.push_back(0)
    with nogil:
        node_at.assign(word_cps.shape[0], 0)
        script_at.assign(word_cps.shape[0], 0)
        word_of.assign(word_cps.shape[0], 0)
        for w in range(counts.shape[0]):
            for p in range(word_offsets[w], word_offsets[w + 1]):
                word_of[p] = <int32_t>w
                active.push_back(p)
        for level in range(max_length):
            grown.clear()
            for k in range(<Py_ssize_t>active.size()):
                p = active[k]
                j = p + level
                w = word_of[p]
                if j >= word_offsets[w + 1]:
                    continue
                cls = classes[j]
                if cls == BAD or (level > 0 and (cls == MARKER or cls == ALONE or classes[p] == ALONE)):
                    continue
                if cls > 0:
                    if script_at[p] == 0:
                        script_at[p] = cls
                    elif cls != script_at[p]:
                        continue
                node = trie.add_child(node_at[p], <uint32_t>word_cps[j])
                if node == <int32_t>parent.size():  # a new node
                    parent.push_back(node_at[p]); last_cp.push_back(word_cps[j])
                    depth.push_back(<int32_t>(level + 1)); seen.push_back(0)
                seen[node] += counts[w]
                node_at[p] = node
                grown.push_back(p)
            active.clear()
            for k in range(<Py_ssize_t>grown.size()):  # the counts of this length are complete now
                if seen[node_at[grown[k]]] >= min_count:
                    active.push_back(grown[k])
    return _collect(parent, last_cp, depth, seen, min_count)


cdef tuple _collect(vector[int32_t]& parent, vector[int32_t]& last_cp, vector[int32_t]& depth,
                    vector[int64_t]& seen, int64_t min_count):
    """The trie's nodes of depth >= 2 seen at least min_count times, spelled out from their parents."""
    cdef Py_ssize_t n = 0, total = 0, node, k, pos, j
    for node in range(1, <Py_ssize_t>parent.size()):
        if depth[node] >= 2 and seen[node] >= min_count:
            n += 1
            total += depth[node]
    cps_arr = np.empty(total, dtype=np.int32)
    off_arr = np.zeros(n + 1, dtype=np.int64)
    cnt_arr = np.empty(n, dtype=np.int64)
    cdef int32_t[::1] cps = cps_arr
    cdef int64_t[::1] offs = off_arr
    cdef int64_t[::1] cnts = cnt_arr
    k = 0
    for node in range(1, <Py_ssize_t>parent.size()):
        if depth[node] >= 2 and seen[node] >= min_count:
            offs[k + 1] = offs[k] + depth[node]
            cnts[k] = seen[node]
            pos, j = offs[k + 1] - 1, node
            while j > 0:
                cps[pos] = last_cp[j]
                pos -= 1
                j = parent[j]
            k += 1
    return cps_arr, off_arr, cnt_arr
