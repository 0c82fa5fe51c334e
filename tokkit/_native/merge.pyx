# cython: language_level=3
"""The compiled merge/count engine: integer words in, merges out (no text).

Same API and output as `tokkit.train.merge_py` (read that first: it is the readable
version and documents the three scorings). Here the words live in one int32 buffer
compacted in place, pair counts in an open-addressing table keyed by
``left << 32 | right``, and the hot loops run without the GIL; only the
``merge_id`` and ``progress`` callbacks take it, once per merge.

The pmi and likelihood scorings keep a lazy max-heap. A pmi score changes only when
the pair's count or one of its symbols' counts changes, and every such pair touches
a, b or the new symbol, so those are re-queued after each merge and an entry whose
score is out of date is dropped.

A likelihood gain also depends on N, which falls with every merge. For a pair whose
count and symbol counts stay put the gain can only fall (d/dN of f(N) - f(N - n) is
ln(N / (N - n)) > 0); it rises when one of its symbols' counts falls, or when its own
count changes. So the heap holds upper bounds, each valid until a stated event, and
`pick_lik` pops entries, recomputing their exact gains, until the next bound is below
the best gain found: the pair it returns is the best under the exact float64
comparison, the one a recount would pick. Bounds, cheapest first:

* count-only, ``count * (ln N + 1)``: f(n) + f(c - n) - f(c) <= 0 for either symbol,
  so the gain is at most f(N) - f(N - n) <= n (ln N + 1). Holds until the pair's count
  grows; pushed for every new or grown pair.
* symbol floors: each symbol x has a floor ``low[x]`` 1/256 below its count (1/128 or
  1/64 for a symbol with 64 or 512 listed pairs and more), and the
  gain with c_a, c_b lowered to their floors (cheap linear forms, `lik_bound`) holds
  until the count changes or a symbol falls below its floor. Pairs that were ever
  near the top carry these; they are re-queued when their count falls and, all the
  pairs of symbol x together, when x falls below its floor.

Every bound adds a margin of 2 * 2**-40 f(N): the float64 gain is within 63 * 2**-53 f(N)
of the exact value (seven terms of at most f(N), each within a few ulps, six sums), so
the margin covers the rounding of the gain now and later and of the bound itself.

>>> import numpy as np
>>> word = np.array([0, 0, 0, 1, 3, 0, 0, 0, 1, 0, 2], dtype=np.int32)   # "aaabdaaabac"
>>> train_merges(word, np.array([0, 11]), np.array([1]), vocab_len=4, vocab_size=7, min_frequency=1)
[(0, 0, 4), (0, 1, 5), (4, 5, 6)]
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.math cimport log
from libcpp.vector cimport vector

from tokkit._native.merge_inputs import PROGRESS_EVERY, check_inputs, check_new_id

cdef int LOW_SHIFT = 8  # likelihood: a symbol's floor sits 1/256 below its count (tuned on en/wiki)


cdef class _Engine:
    """Training state; `pick` chooses the next pair, `merge` applies it (both without the GIL)."""

    def __init__(self, const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
                 int32_t vocab_len, bint pmi, int64_t min_frequency, bint lik=False):
        self.pmi = pmi or lik
        self.lik = lik
        self.threshold = min_frequency if min_frequency > 1 else 1
        with nogil:
            self.setup(symbols, offsets, counts, vocab_len)

    cdef void setup(self, const int32_t[::1] symbols, const int64_t[::1] offsets,
                    const int64_t[::1] counts, int32_t vocab_len) noexcept nogil:
        cdef Py_ssize_t n = counts.shape[0], w, i
        cdef int64_t pos = 0, L
        cdef PairSlot* slot
        cdef cbool created
        cdef int32_t lst
        cdef uint64_t k
        cdef int64_t total = 0
        self.grow_symbols(vocab_len + 1)
        self.visited.assign(n, -1)
        self.sym.reserve(offsets[n] - offsets[0] if n else 0)  # exact sizes: no doubling slack
        self.start.reserve(n)
        self.length.reserve(n)
        self.weight.reserve(n)
        for w in range(n):  # pack the words; those of length < 2 or count 0 take no part (length 0)
            L = offsets[w + 1] - offsets[w]
            if self.pmi:  # but every occurrence counts towards its symbol's count
                for i in range(offsets[w], offsets[w + 1]):
                    self.symcount[symbols[i]] += counts[w]
                total += L * counts[w]
            if L < 2 or counts[w] == 0:
                L = 0
            self.start.push_back(pos)
            self.length.push_back(<int32_t>L)
            self.weight.push_back(counts[w])
            for i in range(offsets[w], offsets[w] + L):
                self.sym.push_back(symbols[i])
            pos += L
        self.pairs.init(1 << 16)
        if self.lik:
            self.set_total(total)
            self.xlogx_table.resize(1 << 16)
            for i in range(1 << 16):
                self.xlogx_table[i] = xlogx(i)
            for i in range(vocab_len):
                self.refresh_symbol(<int32_t>i)
                self.set_low(<int32_t>i)
            for w in range(n):
                self.count_runs(&self.sym[self.start[w]] if self.length[w] else NULL, self.length[w],
                                -1, -1, -1, self.weight[w])
        for w in range(n):
            for i in range(self.start[w], self.start[w] + self.length[w] - 1):
                k = key(self.sym[i], self.sym[i + 1])
                slot = self.pairs.slot(k, &created)
                slot.val += self.weight[w]
                if created:
                    slot.aux = self.new_list()
                lst = slot.aux
                if self.lists[lst].empty() or self.lists[lst].back() != w:
                    self.lists[lst].push_back(<int32_t>w)
        for i in range(<Py_ssize_t>self.pairs.capacity()):
            slot = self.pairs.at(i)
            if slot.empty():
                continue
            k = slot.key()
            self.lists[slot.aux].shrink_to_fit()
            if self.pmi:
                if slot.val >= self.threshold and not self.lik:
                    self.track(k)
                self.push_pmi(k, slot.val)
            else:  # frequency: the heap entry owns the word list, as in tokenizers
                self.push_freq(slot.val, k, slot.aux)
                slot.aux = -1

    cdef void grow_symbols(self, size_t n) noexcept nogil:
        if n <= self.dl.size():
            return
        n = max(n, 2 * self.dl.size())
        self.dl.resize(n, 0)
        self.dr.resize(n, 0)
        self.ll.resize(n, -1)
        self.lr.resize(n, -1)
        self.mark_l.resize(n, -1)
        self.mark_r.resize(n, -1)
        if self.pmi:
            self.symcount.resize(n, 0)
            self.sym_pairs.resize(n)
        if self.lik:
            self.symf.resize(n, 0.0)
            self.halfruns.resize(n, 0)
            self.listed.resize(n)
            self.low.resize(n, 0)
            self.lnlow.resize(n, 0.0)

    cdef int32_t new_list(self) noexcept nogil:
        cdef int32_t i
        if not self.free.empty():
            i = self.free.back()
            self.free.pop_back()
            return i
        self.lists.push_back(vector[int32_t]())
        return <int32_t>(self.lists.size() - 1)

    cdef void release(self, int32_t i) noexcept nogil:
        if i >= 0:
            vector[int32_t]().swap(self.lists[i])  # give the memory back
            self.free.push_back(i)

    cdef void track(self, uint64_t k) noexcept nogil:
        self.sym_pairs[left(k)].push_back(k)
        if right(k) != left(k):
            self.sym_pairs[right(k)].push_back(k)

    cdef void push_freq(self, int64_t count, uint64_t k, int32_t lst) noexcept nogil:
        cdef FreqEntry e
        e.count, e.key, e.seq, e.list = count, k, self.seq, lst
        self.seq += 1
        self.fheap.push(e)

    cdef void push_pmi(self, uint64_t k, int64_t count) noexcept nogil:
        cdef PmiEntry e
        if count >= self.threshold:
            if self.lik:  # the count-only bound: holds until the pair's count grows
                e.score = <double>count * self.crude + 2.0 * self.margin
            else:
                e.score = pmi_score(count, self.symcount[left(k)], self.symcount[right(k)])
            e.count, e.key = count, k
            self.pheap.push(e)

    cdef void add(self, uint64_t k, int64_t delta) noexcept nogil:
        """pairs[k] += delta; erase the pair (and free its word list) when it reaches 0."""
        cdef cbool created
        cdef PairSlot* slot
        if delta == 0:
            return
        slot = self.pairs.slot(k, &created)
        # pmi: the symbols' pair lists hold candidates only (count >= threshold), so rescoring
        # skips the long tail of rare pairs; a pair joins them again when it climbs back
        if self.pmi and not self.lik and slot.val < self.threshold <= slot.val + delta:
            self.track(k)
        slot.val += delta
        if slot.val == 0:
            self.release(slot.aux)
            self.pairs.erase(slot)

    # ------------------------------------------------------------ picking the next pair

    cdef bint pick(self, uint64_t* best, int32_t* lst) noexcept nogil:
        """Pop the best valid entry into best/lst; False when training must stop."""
        cdef FreqEntry f
        cdef PmiEntry e
        cdef int64_t cur
        if self.lik:
            return self.pick_lik(best, lst)
        if self.pmi:
            if self.pheap.v.size() > 2 * self.pairs.used() + (1 << 16):  # mostly stale entries
                self.compact_pmi()
            while self.pheap.v.size():
                e = self.pheap.pop()
                if self.valid_pmi(e):
                    best[0] = e.key
                    lst[0] = self.pairs.find(e.key).aux
                    return True
            return False
        while self.fheap.v.size():
            f = self.fheap.pop()
            cur = self.pairs.get(f.key)
            if f.count != cur:  # stale: re-queue with today's count, keeping its words
                self.push_freq(cur, f.key, f.list)
                continue
            if cur < self.threshold:
                return False
            best[0], lst[0] = f.key, f.list
            return True
        return False

    cdef bint valid_pmi(self, PmiEntry& e) noexcept nogil:
        """An entry is current when both its count and its score match today's counts."""
        cdef PairSlot* slot = self.pairs.find(e.key)
        if slot == NULL or slot.val != e.count:
            return False
        return e.score == pmi_score(e.count, self.symcount[left(e.key)], self.symcount[right(e.key)])

    cdef void compact_pmi(self) noexcept nogil:
        cdef vector[PmiEntry] keep
        cdef size_t i
        for i in range(self.pheap.v.size()):
            if self.valid_pmi(self.pheap.v[i]):
                keep.push_back(self.pheap.v[i])
        self.pheap.v.swap(keep)
        self.pheap.rebuild()

    cdef double lik_score(self, uint64_t k, int64_t count) noexcept nogil:
        """The pair's likelihood gain from today's counts (see tokkit.train.merge_py.likelihood_score)."""
        cdef int32_t a = left(k), b = right(k)
        cdef int64_t n = self.halfruns[a] if a == b else count
        return gain_fn(n, self.small_xlogx(n), self.symcount[a], self.symf[a], self.symcount[b], self.symf[b],
                       self.total, self.ftotal, a == b)

    cdef bint pick_lik(self, uint64_t* best, int32_t* lst) noexcept nogil:
        """Pop bounds until the next one is below the best exact gain seen; re-queue the others."""
        cdef PmiEntry e, top
        cdef bint have = False
        cdef PairSlot* slot
        cdef size_t t
        if self.pheap.v.size() > 2 * self.pairs.used() + (1 << 16):  # mostly stale entries
            self.rebuild_lik()
        self.near.clear()
        while self.pheap.v.size():
            if have and self.pheap.v[0].score < top.score:  # no pair left can reach the best gain
                break
            e = self.pheap.pop()
            slot = self.pairs.find(e.key)
            if slot == NULL or slot.val < self.threshold:
                continue
            e.count = slot.val
            e.score = self.lik_score(e.key, e.count)
            if not have:
                top, have = e, True
            elif top < e:
                self.near.push_back(top)
                top = e
            else:
                self.near.push_back(e)
        for t in range(self.near.size()):  # symbol bounds from now on (see lik_bound)
            self.note_listed(self.near[t].key)
            self.push_floor(self.near[t].key, self.near[t].count)  # bounds: 2 margins (see push_floor)
        if not have:
            return False
        best[0] = top.key
        lst[0] = self.pairs.find(top.key).aux
        return True

    cdef void rebuild_lik(self) noexcept nogil:
        """One count-only bound per candidate pair."""
        cdef size_t i
        cdef PmiEntry e
        cdef PairSlot* slot
        self.pheap.v.clear()
        for i in range(self.listed.size()):
            self.listed[i].clear()
        for i in range(self.pairs.capacity()):
            slot = self.pairs.at(i)
            slot.flag = 0
            if not slot.empty() and slot.val >= self.threshold:
                e.count, e.key = slot.val, slot.key()
                e.score = <double>e.count * self.crude + 2.0 * self.margin
                self.pheap.v.push_back(e)
        self.pheap.rebuild()

    cdef void note_listed(self, uint64_t k) noexcept nogil:
        """List k under its symbols: from now on it is re-queued with a floor bound when one of them moves."""
        cdef PairSlot* slot = self.pairs.find(k)
        if slot != NULL and not slot.flag:
            slot.flag = 1
            self.listed[left(k)].push_back(k)
            if right(k) != left(k):
                self.listed[right(k)].push_back(k)

    cdef void requeue(self, uint64_t k) noexcept nogil:
        cdef PairSlot* slot = self.pairs.find(k)
        if slot != NULL:
            self.push_pmi(k, slot.val)

    cdef void push_floor(self, uint64_t k, int64_t count) noexcept nogil:
        cdef PmiEntry e
        e.count, e.key = count, k
        e.score = self.lik_bound(k, count) + 2.0 * self.margin  # one for the gain's rounding, one for the bound's
        self.pheap.push(e)

    cdef void requeue_flagged(self, uint64_t k) noexcept nogil:
        """Pair k's count fell: a symbol bound no longer holds for it (a count-only bound still does)."""
        cdef PairSlot* slot = self.pairs.find(k)
        if slot != NULL and slot.flag and slot.val >= self.threshold:
            self.push_floor(k, slot.val)

    cdef double lik_bound(self, uint64_t k, int64_t count) noexcept nogil:
        """An upper bound on the gain that holds while N falls and symbol counts stay at or above `low`.

        f(N) - f(N - n), the integral of ln x + 1 over [N - n, N], is at most n (ln N + 1) - n**2 / 2N
        (ln N - ln x >= (N - x) / N). f(c - m) - f(c) (m = n, or 2n for a == b) only grows as c
        falls, so it is at most its value at the floor c = low; when m <= c / 16 that is in turn at
        most -m (ln c + 1) + m**2 / 2(c - m) (ln c - ln x <= (c - x) / (c - m) on [c - m, c]).
        """
        cdef int32_t a = left(k), b = right(k)
        cdef int64_t n = self.halfruns[a] if a == b else count
        cdef double dn = <double>n
        cdef double g = dn * self.crude - dn * dn * self.half_inv_total + self.small_xlogx(n)
        g += self.floor_term(a, n if a != b else 2 * n)
        if a != b:
            g += self.floor_term(b, n)
        return g

    cdef double floor_term(self, int32_t x, int64_t m) noexcept nogil:
        """At least f(c - m) - f(c) for every count c >= max(low[x], m) (see lik_bound)."""
        cdef int64_t c = self.low[x]
        cdef double dm = <double>m
        if c < 16 * m:
            if c < m:
                c = m
            return xlogx(c - m) - xlogx(c)
        return 0.5 * dm * dm / <double>(c - m) - dm * (self.lnlow[x] + 1.0)

    cdef double small_xlogx(self, int64_t n) noexcept nogil:
        if n < <int64_t>self.xlogx_table.size():
            return self.xlogx_table[n]
        return xlogx(n)

    cdef void set_low(self, int32_t x) noexcept nogil:
        cdef size_t many = self.listed[x].size()
        # long lists get wider floors (1/128, 1/64): fewer re-queues of the whole list, a little looser bounds
        cdef int shift = LOW_SHIFT if many < 64 else (LOW_SHIFT - 1 if many < 512 else LOW_SHIFT - 2)
        self.low[x] = self.symcount[x] - (self.symcount[x] >> shift)
        self.lnlow[x] = log(<double>self.low[x]) if self.low[x] > 0 else 0.0

    cdef void set_total(self, int64_t total) noexcept nogil:
        self.total = total
        self.ftotal = xlogx(total)
        self.margin = self.ftotal * (1.0 / 1099511627776.0)  # 2**-40 f(N)
        self.crude = (log(<double>total) if total > 0 else 0.0) + 1.0  # gain <= count * (ln N + 1)
        self.half_inv_total = 0.5 / <double>total if total > 0 else 0.0

    cdef void refresh_symbol(self, int32_t x) noexcept nogil:
        self.symf[x] = xlogx(self.symcount[x])

    cdef bint count_runs(self, int32_t* buf, int32_t L, int32_t a, int32_t b, int32_t r, int64_t c) noexcept nogil:
        """halfruns[x] += c * floor(k / 2) per run of k x's in buf: for every x (a < 0), else for a, b, r.

        Returns whether it found any run.
        """
        cdef int32_t i = 0, j, x
        cdef bint found = False
        while i + 1 < L:
            x = buf[i]
            if x != buf[i + 1] or (a >= 0 and x != a and x != b and x != r):
                i += 1
                continue
            j = i + 2
            while j < L and buf[j] == x:
                j += 1
            self.halfruns[x] += c * ((j - i) // 2)
            found = True
            i = j
        return found

    # ------------------------------------------------------------ applying a merge

    cdef void note(self, int32_t s, int64_t c, bint before) noexcept nogil:
        """Record a merged occurrence with neighbour s before it (pairs (s,a) -> (s,r)) or after it."""
        if before:
            if self.mark_l[s] != self.stamp:
                self.mark_l[s] = self.stamp
                self.touched_l.push_back(s)
                self.dl[s] = 0
                self.ll[s] = self.new_list()
            self.dl[s] += c
        else:
            if self.mark_r[s] != self.stamp:
                self.mark_r[s] = self.stamp
                self.touched_r.push_back(s)
                self.dr[s] = 0
                self.lr[s] = self.new_list()
            self.dr[s] += c

    cdef void note_word(self, int32_t lst, int32_t w) noexcept nogil:
        if self.lists[lst].empty() or self.lists[lst].back() != w:
            self.lists[lst].push_back(w)

    cdef void merge(self, int32_t a, int32_t b, int32_t r, int32_t lst) noexcept nogil:
        """Merge (a, b) -> r left to right in the words of list `lst`, then update counts and queue."""
        cdef vector[int32_t] words
        cdef size_t t
        cdef int32_t w, i, j, L, s
        cdef int32_t* buf
        cdef int64_t c, merged = 0
        cdef bint runs = False, rr, had
        if lst >= 0:
            words.swap(self.lists[lst])
        if not self.pmi:  # the popped entry owned it; in pmi it stays the pair's (now empty) list
            self.release(lst)
        self.grow_symbols(<size_t>r + 1)
        if self.lik:  # runs of a, b or r anywhere at all? (if not, no word needs counting before)
            runs = self.halfruns[a] > 0 or self.halfruns[b] > 0 or self.halfruns[r] > 0
        self.stamp += 1
        self.touched_l.clear()
        self.touched_r.clear()
        for t in range(words.size()):
            w = words[t]
            if self.visited[w] == self.stamp:
                continue
            self.visited[w] = self.stamp
            L, c = self.length[w], self.weight[w]
            buf = &self.sym[self.start[w]] if L else NULL
            # the word's (x, x) merges for x in a, b, r: out now, back in below
            had = runs and self.count_runs(buf, L, a, b, r, -c)
            rr = False
            i = j = 0
            while i < L:
                if buf[i] == a and i + 1 < L and buf[i + 1] == b:
                    merged += c
                    if j > 0:  # (p, a) -> (p, r); p may be an r made a moment ago
                        s = buf[j - 1]
                        rr = rr or s == r
                        self.note(s, c, True)
                        self.note_word(self.ll[s], w)
                    if i + 2 < L:  # (b, n) -> (r, n); n is still the original symbol
                        s = buf[i + 2]
                        self.note(s, c, False)
                        if s == r:  # (r, r) has one word list whatever side found it
                            rr = True
                            self.note(r, 0, True)
                            self.note_word(self.ll[r], w)
                        else:
                            self.note_word(self.lr[s], w)
                    buf[j] = r
                    i += 2
                else:
                    buf[j] = buf[i]
                    i += 1
                j += 1
            self.length[w] = j
            if had or (rr and self.lik):  # merging makes no new runs of a or b, only of r
                self.count_runs(buf, j, a, b, r, c)
        # increments first, so a count only ever reaches 0 (and is erased) for good
        for t in range(self.touched_l.size()):
            s = self.touched_l[t]
            self.add(key(s, r), self.dl[s])
        for t in range(self.touched_r.size()):
            s = self.touched_r[t]
            self.add(key(r, s), self.dr[s])
        for t in range(self.touched_l.size()):
            s = self.touched_l[t]
            self.add(key(s, a), -self.dl[s])
        for t in range(self.touched_r.size()):
            s = self.touched_r[t]
            self.add(key(b, s), -self.dr[s])
        if self.pmi:  # true counts: the merged occurrences of (a, b) are gone too
            self.add(key(a, b), -merged)
            self.symcount[a] -= merged
            self.symcount[b] -= merged
            self.symcount[r] += merged
        if self.lik:
            self.set_total(self.total - merged)
            self.refresh_symbol(a)
            self.refresh_symbol(b)
            self.refresh_symbol(r)
        for t in range(self.touched_l.size()):
            s = self.touched_l[t]
            self.settle(key(s, r), self.ll[s])
        for t in range(self.touched_r.size()):
            s = self.touched_r[t]
            if s != r:
                self.settle(key(r, s), self.lr[s])
        if self.pmi and not self.lik:
            self.rescore(a)
            if b != a:
                self.rescore(b)
            self.rescore(r)
        if self.lik:
            for t in range(self.touched_l.size()):
                self.requeue_flagged(key(self.touched_l[t], a))
            for t in range(self.touched_r.size()):
                self.requeue_flagged(key(b, self.touched_r[t]))
            self.requeue(key(a, b))  # normally gone; if not, it needs a bound again (its entry was used up)
            if self.symcount[a] < self.low[a]:
                self.rescore(a)
            if b != a and self.symcount[b] < self.low[b]:
                self.rescore(b)
            if self.symcount[r] == merged:  # a new symbol (not a reused one): its first floor
                self.set_low(r)

    cdef void settle(self, uint64_t k, int32_t lst) noexcept nogil:
        """Hand the words where pair k was just created to the queue (frequency) or the pair (pmi)."""
        cdef PairSlot* slot = self.pairs.find(k)
        cdef int32_t own
        cdef size_t t
        if slot == NULL or slot.val <= 0:
            self.release(lst)
        elif not self.pmi:
            self.push_freq(slot.val, k, lst)
        else:
            if slot.aux < 0:
                slot.aux = lst
            else:
                own = slot.aux
                for t in range(self.lists[lst].size()):
                    self.lists[own].push_back(self.lists[lst][t])
                self.release(lst)
            if self.lik:  # its count grew: a new count-only bound
                self.push_pmi(k, slot.val)

    cdef void rescore(self, int32_t x) noexcept nogil:
        """Queue a fresh score for every candidate pair touching x (its count changed: scores moved)."""
        cdef vector[uint64_t]* v = &self.sym_pairs[x]
        cdef size_t t, keep = 0
        cdef PairSlot* slot
        if self.lik:  # x fell below its floor: new floor, new bounds for the pairs that use it
            self.set_low(x)
            for t in range(self.listed[x].size()):
                slot = self.pairs.find(self.listed[x][t])
                if slot != NULL and slot.val >= self.threshold:
                    self.listed[x][keep] = self.listed[x][t]
                    keep += 1
                    self.push_floor(self.listed[x][t], slot.val)
                elif slot != NULL:
                    slot.flag = 0  # dropped here; note_listed may list it again
            self.listed[x].resize(keep)
            return
        for t in range(v[0].size()):
            slot = self.pairs.find(v[0][t])
            if slot != NULL and slot.val >= self.threshold:
                v[0][keep] = v[0][t]
                keep += 1
                self.push_pmi(v[0][t], slot.val)
        v[0].resize(keep)


def train_merges(symbols, offsets, counts, *, vocab_len: int, vocab_size: int, min_frequency: int = 2,
                 scoring: str = "frequency", merge_id=None, progress=None) -> list:
    """Learn merges until the vocab holds `vocab_size` ids or no pair reaches `min_frequency`.

    Returns [(left id, right id, new id), ...]; see `tokkit.train.merge_py.train_merges`.
    """
    symbols, offsets, counts = check_inputs(symbols, offsets, counts, vocab_len, vocab_size, scoring)
    cdef _Engine engine = _Engine(symbols, offsets, counts, vocab_len, scoring == "pmi", min_frequency,
                                  scoring == "likelihood")
    cdef uint64_t best
    cdef int32_t lst, a, b, new
    cdef bint found
    merges = []
    while vocab_len < vocab_size:
        with nogil:
            found = engine.pick(&best, &lst)
        if not found:
            break
        a, b = left(best), right(best)
        new = vocab_len if merge_id is None else check_new_id(merge_id(a, b), a, b, vocab_len)
        if new == vocab_len:
            vocab_len += 1
        merges.append((a, b, new))
        with nogil:
            engine.merge(a, b, new, lst)
        if progress is not None and len(merges) % PROGRESS_EVERY == 0:
            progress(len(merges))
    if progress is not None:
        progress(len(merges))
    return merges


def likelihood_score(n, count_a, count_b, total, same=False) -> float:
    """The compiled engine's likelihood gain, for checking it against tokkit.train.merge_py.likelihood_score.

    >>> from tokkit.train import merge_py as _merge_py
    >>> likelihood_score(3, 10, 7, 40) == _merge_py.likelihood_score(3, 10, 7, 40)
    True
    """
    return gain(n, count_a, xlogx(count_a), count_b, xlogx(count_b), total, xlogx(total), same)
