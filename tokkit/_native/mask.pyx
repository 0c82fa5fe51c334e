# cython: language_level=3
"""Compiled 80/10/10 masking kernel: geometric gaps between chosen positions, no GIL.

Without word ids a row is masked like this: the ids are copied and the labels set to -100 in
plain vectorised loops, then the chosen positions are reached by jumping over geometric gaps
(P(gap = g) = p(1-p)^g), one draw per chosen position instead of one per position. Draw i of
row r is h = mix(keys[r, 0] + i * GAMMA) (SplitMix64); its high 32 bits U give the gap as the
smallest g with U < cdf[g] (a bucket table over U's top bits gives the starting g). A gap past
the table (g == L) skips L positions without choosing: the geometric law is memoryless. A chosen
position that is special is simply dropped, so the choice is i.i.d. Bernoulli(p) over the
eligible positions. The low 32 bits of the same draw pick [MASK] / random / keep; a random
replacement at column j takes its token from mix(keys[r, 1] + (j + 1) * GAMMA). Special ids are a
sorted array searched by bisection, and the k-th non-special id is found the same way, so memory
grows with the number of special ids, never with the vocabulary size. With word ids, every
position gets its own hash (the first token of a word decides for it). Each value depends only on
(row key, counter), so the result does not depend on the thread count, and tokkit/inputs/masking.py
reproduces it exactly with numpy.

>>> # see tokkit.inputs.masking.mask_tokens for the public entry point
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

ctypedef fused id_t:
    int32_t
    int64_t

cdef extern from *:
    """
    #include <atomic>
    #include <condition_variable>
    #include <mutex>
    #include <thread>
    #include <unistd.h>
    #define TOKKIT_GAMMA 0x9E3779B97F4A7C15ULL
    typedef void (*tokkit_rows_fn)(void*, long, long);

    // One persistent helper thread: spawning a thread per call costs ~50-80 us here, as much as
    // masking a whole 256 x 128 batch, while a hand-off to a waiting thread costs a few us.
    // After a task the helper spins briefly (calls tend to come back to back), then sleeps.
    struct TokkitHelper {
        std::mutex m, busy;
        std::condition_variable cv;
        std::atomic<int> state{0};  // 0 idle, 1 task posted, 2 task done
        tokkit_rows_fn fn = nullptr;
        void* job = nullptr;
        long lo = 0, hi = 0;
        pid_t pid = getpid();
        TokkitHelper() { std::thread([this] { loop(); }).detach(); }
        void loop() {
            for (;;) {
                for (int spins = 0; state.load(std::memory_order_acquire) != 1;) {
                    if (++spins < 1000) { std::this_thread::yield(); continue; }
                    std::unique_lock<std::mutex> lk(m);
                    cv.wait(lk, [this] { return state.load(std::memory_order_acquire) == 1; });
                }
                fn(job, lo, hi);
                state.store(2, std::memory_order_release);
            }
        }
    };
    static TokkitHelper* tokkit_helper = nullptr;
    static std::mutex tokkit_helper_init;

    // Run f(job, lo, hi) over [0, n): rows [0, n/2) on the calling thread, the rest on the helper.
    // `threads` is 1 or 2; a second concurrent caller simply runs on its own thread.
    static void tokkit_parallel_rows(tokkit_rows_fn f, void* job, long n, int threads) {
        if (threads <= 1 || n < 2) { f(job, 0L, n); return; }
        TokkitHelper* h;
        {
            std::lock_guard<std::mutex> g(tokkit_helper_init);
            // After fork() the child has the struct but not the thread: start a new one.
            if (tokkit_helper == nullptr || tokkit_helper->pid != getpid()) tokkit_helper = new TokkitHelper();
            h = tokkit_helper;
        }
        std::unique_lock<std::mutex> guard(h->busy, std::try_to_lock);
        if (!guard.owns_lock()) { f(job, 0L, n); return; }
        long half = n / 2;
        {
            std::lock_guard<std::mutex> lk(h->m);
            h->fn = f; h->job = job; h->lo = half; h->hi = n;
            h->state.store(1, std::memory_order_release);
        }
        h->cv.notify_one();
        f(job, 0L, half);
        while (h->state.load(std::memory_order_acquire) != 2) std::this_thread::yield();
        h->state.store(0, std::memory_order_release);
    }
    """
    ctypedef void (*tokkit_rows_fn)(void*, long, long) noexcept nogil
    const uint64_t GAMMA "TOKKIT_GAMMA"
    void tokkit_parallel_rows(tokkit_rows_fn f, void* job, long n, int threads) nogil



cdef inline uint64_t mix(uint64_t z) noexcept nogil:
    # SplitMix64's finaliser: a bijective avalanche of the 64-bit counter state.
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef int64_t NO_SPECIAL[1]


cdef inline bint is_special_id(const int64_t* special, long n, int64_t v) noexcept nogil:
    # Bisection over the sorted special ids; most ids lie above the last one and return at once.
    cdef long lo = 0, hi = n, mid
    if n == 0 or v > special[n - 1] or v < special[0]:
        return False
    while lo < hi:
        mid = (lo + hi) >> 1
        if special[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return special[lo] == v


cdef inline int64_t nth_allowed(const int64_t* skip, long n, int64_t k) noexcept nogil:
    # The k-th id that is not special (from 0): k plus the special ids below it, which are those
    # whose skip[i] = special[i] - i (the non-special ids before special[i]) is at most k.
    cdef long lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if skip[mid] <= k:
            lo = mid + 1
        else:
            hi = mid
    return k + lo


cdef struct Job:
    const void* ids
    const uint8_t* special
    const int64_t* words
    const uint64_t* keys
    uint64_t seed
    const int64_t* special_ids
    const int64_t* skip
    long n_special
    const uint64_t* cdf
    const uint16_t* start
    void* out
    int64_t* labels
    long cols
    long vocab
    long n_allowed
    long n_cdf
    int start_shift
    uint64_t t_choose
    uint64_t t_mask
    uint64_t t_rand
    int64_t mask_id
    long bad_row


cdef inline uint64_t row_key(const Job* job, long r, int which) noexcept nogil:
    if job.keys != NULL:
        return job.keys[2 * r + which]
    return mix(job.seed + <uint64_t>(2 * r + 1 + which) * GAMMA)


cdef inline bint copy_row(const id_t* row, id_t* orow, int64_t* lrow, long cols, uint64_t vocab) noexcept nogil:
    # One vectorised pass: copy the ids, set the labels to -100, and check 0 <= v < vocab, which
    # holds exactly when the sign bits of v - vocab and ~v are both set. The check is a
    # branch-free AND of those bits because SSE2 (the default target) has no 64-bit compare.
    # Returns True when some id is outside the vocabulary.
    cdef uint64_t ok = ~(<uint64_t>0), v
    cdef long j
    for j in range(cols):
        orow[j] = row[j]
        lrow[j] = -100
        v = <uint64_t><int64_t>row[j]
        ok &= (v - vocab) & ~v
    return (ok >> 63) == 0


cdef void run_rows(Job* job, long lo, long hi, id_t* out, const id_t* ids) noexcept nogil:
    # Every field is copied to a local first: the stores to out/labels could otherwise alias the
    # Job struct and force the compiler to reload it on each position.
    cdef const uint8_t* special = job.special
    cdef const int64_t* special_ids = job.special_ids
    cdef const int64_t* skip = job.skip
    cdef long n_special = job.n_special
    cdef const uint64_t* cdf = job.cdf
    cdef const uint16_t* start = job.start
    cdef int64_t* labels = job.labels
    cdef long r, j, c, g, end, cols = job.cols, n_cdf = job.n_cdf, bad_row = -1
    cdef int shift = job.start_shift
    cdef uint64_t vocab = <uint64_t>job.vocab
    cdef uint64_t t_mask = job.t_mask, t_rand = job.t_rand
    cdef uint64_t n_allowed = <uint64_t>job.n_allowed
    cdef id_t mask_id = <id_t>job.mask_id
    cdef uint64_t k0, k1, h, u, i, lo32
    cdef const id_t* row
    cdef id_t* orow
    cdef int64_t* lrow
    cdef const uint8_t* srow
    cdef int64_t v, w
    if job.words != NULL:
        run_word_rows(job, lo, hi, out, ids)
        return
    for r in range(lo, hi):
        row = ids + r * cols
        orow = out + r * cols
        lrow = labels + r * cols
        srow = special + r * cols
        if copy_row(row, orow, lrow, cols, vocab):
            bad_row = r  # the caller raises; the row is left unmasked
            continue
        if job.t_choose == 0:
            continue
        k0, k1 = row_key(job, r, 0), row_key(job, r, 1)
        # Draws past the last non-special position (padding) could only pick specials: stop there.
        # The picks before it are the same, so the result is unchanged.
        end = cols
        while end > 0 and srow[end - 1]:
            end -= 1
        c = 0  # positions consumed so far
        i = 0
        while True:
            i += 1
            h = mix(k0 + i * GAMMA)
            u = h >> 32
            g = start[u >> shift]
            while u >= cdf[g]:  # cdf[n_cdf] is above every U: a sentinel
                g += 1
            if g == n_cdf:  # past the table: skip n_cdf positions, choose none
                c += n_cdf
                if c >= end:
                    break
                continue
            j = c + g
            c = j + 1
            if j >= end:
                break
            v = row[j]
            if srow[j] or is_special_id(special_ids, n_special, v):
                continue  # dropping ineligible picks keeps the rest i.i.d. Bernoulli(p)
            # The draw's low 32 bits make the 80/10/10 choice, as a select rather than a branch
            # (the outcome is random, so a branch would be mispredicted a fifth of the time).
            lo32 = h & 0xFFFFFFFFULL
            lrow[j] = v
            orow[j] = mask_id if lo32 < t_mask else <id_t>v
            if lo32 - t_mask < t_rand:  # t_mask <= lo32 < t_mask + t_rand (unsigned wrap)
                h = mix(k1 + <uint64_t>(j + 1) * GAMMA)
                orow[j] = <id_t>nth_allowed(skip, n_special, <int64_t>(((h >> 32) * n_allowed) >> 32))
    if bad_row >= 0:
        job.bad_row = bad_row  # benign race between threads: any offending row will do


cdef void run_word_rows(Job* job, long lo, long hi, id_t* out, const id_t* ids) noexcept nogil:
    # Whole words: one hash per position, the first token of each word decides for the word.
    cdef const uint8_t* special = job.special
    cdef const int64_t* special_ids = job.special_ids
    cdef const int64_t* skip = job.skip
    cdef long n_special = job.n_special
    cdef const int64_t* words = job.words
    cdef int64_t* labels = job.labels
    cdef long r, j, p, cols = job.cols, vocab = job.vocab, bad_row = -1
    cdef uint64_t t_choose = job.t_choose, t_mask = job.t_mask, t_keep = job.t_mask + job.t_rand
    cdef uint64_t n_allowed = <uint64_t>job.n_allowed
    cdef id_t mask_id = <id_t>job.mask_id
    cdef uint64_t k0, k1, h, hi32
    cdef int64_t v, w, prev_word
    cdef bint chosen = False
    for r in range(lo, hi):
        k0, k1 = row_key(job, r, 0), row_key(job, r, 1)
        prev_word = -1
        for j in range(cols):
            p = r * cols + j
            v = ids[p]
            out[p] = <id_t>v
            labels[p] = -100
            if v < 0 or v >= vocab:
                bad_row = r
                prev_word = -1
                continue
            if special[p]:
                prev_word = -1  # [CLS], [SEP], padding: a word never runs across them
                continue
            if is_special_id(special_ids, n_special, v):
                continue  # e.g. an [UNK] inside a word: never chosen, but the word goes on
            h = mix(k0 + <uint64_t>(j + 1) * GAMMA)
            w = words[p]
            # A word is a run of equal non-negative word ids; its first token decides for it.
            if w < 0 or w != prev_word:
                chosen = <uint64_t><uint32_t>h < t_choose
            prev_word = w
            hi32 = h >> 32
            # Written without a branch on `chosen` (taken 15% of the time at random, so a branch
            # would be mispredicted often); only the rare random replacement branches.
            labels[p] = v if chosen else -100
            out[p] = mask_id if (chosen & (hi32 < t_mask)) else <id_t>v
            if chosen & (hi32 >= t_mask) & (hi32 < t_keep):
                h = mix(k1 + <uint64_t>(j + 1) * GAMMA)
                out[p] = <id_t>nth_allowed(skip, n_special, <int64_t>(((h >> 32) * n_allowed) >> 32))
    if bad_row >= 0:
        job.bad_row = bad_row


cdef void rows_i32(void* job, long lo, long hi) noexcept nogil:
    cdef Job* j = <Job*>job
    run_rows(j, lo, hi, <int32_t*>j.out, <const int32_t*>j.ids)


cdef void rows_i64(void* job, long lo, long hi) noexcept nogil:
    cdef Job* j = <Job*>job
    run_rows(j, lo, hi, <int64_t*>j.out, <const int64_t*>j.ids)


cdef class Tables:
    """The per-settings lookup tables, held as typed views once so each call need not re-acquire them.

    `special` holds the sorted special ids and `skip` their special[i] - i; `vocab` is the
    vocabulary size (ids lie in [0, vocab)). `cdf` holds the gap table (L thresholds on 32-bit U,
    then a sentinel 2**32); `start` (2**b entries) the first candidate gap of each bucket of U's
    top b bits.
    """
    cdef const int64_t[::1] special
    cdef const int64_t[::1] skip
    cdef int64_t vocab
    cdef const uint64_t[::1] cdf
    cdef const uint16_t[::1] start
    cdef int shift
    cdef uint64_t t_choose, t_mask, t_rand
    cdef int64_t mask_id

    def __init__(self, special, skip, int64_t vocab, cdf, start, uint64_t t_choose, uint64_t t_mask,
                 uint64_t t_rand, int64_t mask_id):
        self.special, self.skip, self.cdf, self.start = special, skip, cdf, start
        cdef int bits = 0
        cdef Py_ssize_t b, n
        while (1 << bits) < self.start.shape[0]:
            bits += 1
        n = self.cdf.shape[0]
        if (1 << bits) != self.start.shape[0] or bits > 32 or n < 2 or self.cdf[n - 1] < (1ULL << 32):
            raise ValueError("start must have 2**b entries and cdf must end with the sentinel 2**32")
        for b in range(self.start.shape[0]):
            if self.start[b] > n - 1:
                raise ValueError("start points past the gap table")
        if self.skip.shape[0] != self.special.shape[0]:
            raise ValueError("special and skip must have the same length")
        if not 0 < vocab < (1LL << 31):
            raise ValueError("vocab must lie in [1, 2**31)")  # the random draw multiplies 32-bit numbers
        self.vocab = vocab
        self.shift = 32 - bits
        self.t_choose, self.t_mask, self.t_rand, self.mask_id = t_choose, t_mask, t_rand, mask_id


def mask_rows(
    const id_t[:, ::1] ids,
    const uint8_t[:, ::1] special,
    words,
    keys,
    Tables tables,
    id_t[:, ::1] out,
    int64_t[:, ::1] labels,
    uint64_t seed=0,
    int threads=1,
):
    """Fill `out` and `labels` for every row; return the index of a row holding an id outside
    [0, vocab), or -1. Shapes and dtypes are checked by the caller.

    Row keys are `keys` (uint64, shape (rows, 2)) or, when it is None, derived from `seed`:
    row r gets (mix(seed + (2r + 1) * GAMMA), mix(seed + (2r + 2) * GAMMA))."""
    cdef const int64_t[:, ::1] wv
    cdef const uint64_t[:, ::1] kv
    cdef Job job
    cdef long rows = ids.shape[0]
    cdef tokkit_rows_fn fn
    job.ids = &ids[0, 0] if ids.size else NULL
    job.special = &special[0, 0] if special.size else NULL
    job.words = NULL
    if words is not None:
        wv = words
        job.words = &wv[0, 0] if wv.size else NULL
    job.keys = NULL
    if keys is not None:
        kv = keys
        if kv.shape[0] != rows or kv.shape[1] != 2:
            raise ValueError("keys must have shape (rows, 2)")
        job.keys = &kv[0, 0] if kv.size else NULL
    job.seed = seed
    job.n_special = tables.special.shape[0]
    job.special_ids = &tables.special[0] if job.n_special else NO_SPECIAL  # never read when empty
    job.skip = &tables.skip[0] if job.n_special else NO_SPECIAL
    job.out = &out[0, 0] if out.size else NULL
    job.labels = &labels[0, 0] if labels.size else NULL
    job.cols = ids.shape[1]
    job.vocab = tables.vocab
    job.n_allowed = tables.vocab - job.n_special
    job.cdf = &tables.cdf[0]
    job.start = &tables.start[0]
    job.n_cdf = tables.cdf.shape[0] - 1
    job.start_shift = tables.shift
    job.t_choose = tables.t_choose
    job.t_mask = tables.t_mask
    job.t_rand = tables.t_rand
    job.mask_id = tables.mask_id
    job.bad_row = -1
    if ids.size == 0:
        return -1
    if id_t is int64_t:
        fn = rows_i64
    else:
        fn = rows_i32
    with nogil:
        tokkit_parallel_rows(fn, <void*>&job, rows, threads)
    return job.bad_row
