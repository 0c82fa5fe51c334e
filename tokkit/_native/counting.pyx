"""Word counting for the trainers: UTF-8 in, distinct pre-tokenized words with counts out.

The scan runs without the GIL, so two threads counting two chunks with two counters use two cores.
Words live in short_keys.hpp's WordTable: keys in one growing byte arena, 8-byte slots holding a
32-bit hash tag and an entry number, entries holding an arena offset and an int64 count, about 40
bytes per distinct word with the keys (a std::unordered_map<std::string, ...> is ~100).

>>> c = WordCounter("gpt2"); c.count(b"the cat the\\n"); c.total, len(c)
(4, 4)
>>> blob, offsets, counts = c.to_arrays(); blob, offsets.tolist()
(b'\\n cat thethe', [0, 1, 5, 9, 12])
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memchr, memcpy
from libcpp.vector cimport vector
from libcpp cimport bool as cpp_bool

from tokkit._native.short_keys cimport CountEntry, CountTable, WordTable, hash_words, key_words, prefetch_line
from tokkit._native.text cimport (BertOptions, Piece, TextView, ascii_only, bert_norm_pieces, utf8_check,
                                  utf8_decode, utf8_encode, Gpt2Classes, gpt2_piece_ends, gpt2_regex_classes,
                                  gpt2_tokenizers_classes, PatternClasses, pattern_piece_ends,
                                  pattern_tokenizers_classes)

import numpy as np

from tokkit._native.text_api import FAMILY
from tokkit.errors import OutOfMemory

cdef extern from *:
    """
    #include <algorithm>
    #include <cstring>
    #include <cstdint>
    // Entry numbers sorted by their key bytes (memcmp order, shorter prefix first).
    static void tokkit_sort_words(uint32_t* idx, size_t n, const unsigned char* arena, const uint64_t* offs) {
        std::sort(idx, idx + n, [arena, offs](uint32_t a, uint32_t b) {
            size_t la = offs[a + 1] - offs[a], lb = offs[b + 1] - offs[b];
            int c = std::memcmp(arena + offs[a], arena + offs[b], la < lb ? la : lb);
            return c < 0 || (c == 0 && la < lb);
        });
    }
    """
    void tokkit_sort_words(uint32_t* idx, size_t n, const unsigned char* arena, const uint64_t* offs) nogil

cdef enum:
    MODE_GPT2 = 0
    MODE_BERT = 1
    MODE_WHITESPACE = 2
    MODE_PATTERN = 3     # a byte-level pattern family with a compiled scanner (pattern_scan.hpp)
    PIECES_AT_ONCE = 64  # piece ends a scanner hands over per call
    SHORT_SLOTS = 131072  # the short-word table's cap: 4 MB, room for the 65,536 most frequent words


cdef inline Py_ssize_t space_width(const unsigned char* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The UTF-8 length of the whitespace char at p[i] (0: none there, or i == n). Whitespace is the
    `regex` package's \\s: [\\t\\n\\v\\f\\r ] and the Unicode White_Space chars U+0085, U+00A0, U+1680,
    U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000."""
    if i >= n:
        return 0
    cdef unsigned char c = p[i], d, e
    if c < 0x80:
        return 1 if c == 32 or (9 <= c <= 13) else 0
    if c == 0xC2:
        return 2 if i + 1 < n and (p[i + 1] == 0x85 or p[i + 1] == 0xA0) else 0
    if c < 0xE1 or c > 0xE3 or i + 2 >= n:
        return 0
    d = p[i + 1]
    e = p[i + 2]
    if c == 0xE1:
        return 3 if d == 0x9A and e == 0x80 else 0
    if c == 0xE3:
        return 3 if d == 0x80 and e == 0x80 else 0
    if d == 0x80:
        return 3 if e <= 0x8A or e == 0xA8 or e == 0xA9 or e == 0xAF else 0
    return 3 if d == 0x81 and e == 0x9F else 0


cdef class WordCounter:
    """Counts pre-tokenized words of UTF-8 text ("gpt2": GPT-2 pattern, line by line; "cl100k" (or
    "llama3"), "qwen2", "o200k": that pattern of tokkit._native.patterns, line by line, split as
    tokenizers' Split does; "bert": BERT; "whitespace": the runs between whitespace, as the `regex`
    package's \\S+ finds them).

    gpt2_classes="tokenizers" (default) splits as tokenizers' ByteLevel (and tiktoken) do, as the
    trainers need for parity; "regex" as the `regex` package (its newer Unicode makes ~17,000 more
    letters and ~340 more digits). The two differ only on those recent characters. The pattern
    families have tokenizers' classes only.

    One counter belongs to one thread at a time; add counters together with `update`.

    >>> c = WordCounter("bert"); c.count("Héllo, héllo!".encode()); c.total, len(c)
    (4, 3)
    >>> c = WordCounter("o200k"); c.count(b"HELLOworld's 12345\\n"); c.to_arrays()[0]
    b"\\n 12345HELLOworld's"
    """
    cdef int mode
    cdef bint tk_classes             # gpt2: tokenizers' Unicode classes instead of the regex package's
    cdef Gpt2Classes classes         # gpt2: the scanner's classes (one of the two tables)
    cdef PatternClasses pattern_classes  # pattern families: the scanner's classes (tokenizers')
    cdef int family                  # pattern families: FAMILY_* of pattern_scan.hpp
    cdef BertOptions opts
    cdef WordTable words             # every word (entry i is words.arena[words.offs[i]:words.offs[i + 1]])
    cdef CountTable short_words      # words of up to 16 bytes, keys inline (see count_short); flushed
                                     # into the table above before anything reads the counts
    cdef int64_t total_
    cdef bint busy

    def __init__(self, str mode, *, lowercase=True, strip_accents=None, clean_text=True, handle_chinese_chars=True,
                 str gpt2_classes="tokenizers"):
        if mode == "gpt2":
            self.mode = MODE_GPT2
        elif mode == "bert":
            self.mode = MODE_BERT
        elif mode == "whitespace":
            self.mode = MODE_WHITESPACE
        elif mode in FAMILY:
            self.mode = MODE_PATTERN
            self.family = FAMILY[mode]
            self.pattern_classes.init(pattern_tokenizers_classes())
        else:
            raise ValueError(f"WordCounter mode must be 'gpt2', {', '.join(map(repr, FAMILY))}, 'bert' or "
                             f"'whitespace', not {mode!r}")
        if gpt2_classes not in ("regex", "tokenizers"):
            raise ValueError(f"gpt2_classes must be 'regex' or 'tokenizers', not {gpt2_classes!r}")
        if self.mode == MODE_PATTERN and gpt2_classes != "tokenizers":
            raise ValueError(f"the {mode} scanner has tokenizers' classes only, not gpt2_classes={gpt2_classes!r}")
        self.tk_classes = gpt2_classes == "tokenizers"
        self.classes.init(gpt2_tokenizers_classes() if self.tk_classes else gpt2_regex_classes())
        self.opts.lowercase = bool(lowercase)
        self.opts.strip_accents = bool(lowercase if strip_accents is None else strip_accents)
        self.opts.clean_text = bool(clean_text)
        self.opts.handle_chinese_chars = bool(handle_chinese_chars)
        self.short_words.set_max_slots(SHORT_SLOTS)

    def __len__(self):
        self.flush()
        return self.words.size()

    @property
    def total(self):
        """Number of words counted (with repetitions)."""
        return self.total_

    @property
    def nbytes(self):
        """Bytes held by the table (capacity of its arrays)."""
        return (self.short_words.capacity() * sizeof(CountEntry) + self.words.slot_bytes() + self.words.arena.capacity()
                + self.words.offs.capacity() * 8 + self.words.counts.capacity() * 8)

    cdef int add(self, const unsigned char* p, Py_ssize_t n, int64_t count) except -1 nogil:
        if not self.words.add(p, n, count):
            with gil:
                raise MemoryError("no memory for the word table, or more than 2**32 - 1 distinct words in one "
                                  "WordCounter")
        return 0

    cdef int scan(self, const unsigned char* p, Py_ssize_t n) except -1 nogil:
        """Count the words of valid UTF-8 p[:n], one line (ending with its \\n) at a time."""
        cdef vector[uint32_t] ucs
        cdef vector[Piece] pieces
        cdef vector[Py_UCS4] norm
        cdef unsigned char buf[4]
        cdef vector[unsigned char] word
        cdef TextView v
        cdef Py_ssize_t a = 0, b, k, j
        cdef const void* nl
        cdef Piece pc
        if self.mode == MODE_WHITESPACE:
            return self.scan_words(p, n)
        while a < n:
            nl = memchr(p + a, 10, n - a)
            b = (<const unsigned char*>nl - p) + 1 if nl != NULL else n
            if self.mode == MODE_GPT2 or self.mode == MODE_PATTERN:
                self.scan_line(p, a, b, n)
                a = b
                continue
            if ascii_only(p + a, b - a):  # zero copy: a latin-1 view of the bytes themselves
                v.data = p + a
                v.kind = 1
                v.length = b - a
            else:
                utf8_decode(p + a, b - a, ucs)
                v.data = ucs.data()
                v.kind = 4
                v.length = ucs.size()
            pieces.clear()
            norm.clear()
            if not bert_norm_pieces(v, &self.opts, norm, pieces):
                with gil:
                    raise OutOfMemory("out of memory while counting words; nothing of the call was kept")
            for k in range(<Py_ssize_t>pieces.size()):
                pc = pieces[k]
                word.clear()
                for j in range(pc.norm_start, pc.norm_end):
                    if norm[j] < 128:
                        word.push_back(<unsigned char>norm[j])
                    else:
                        word.insert(word.end(), buf, buf + utf8_encode(norm[j], buf))
                self.add(word.data(), word.size(), 1)
            self.total_ += pieces.size()
            a = b
        return 0

    cdef int scan_line(self, const unsigned char* p, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n) except -1 nogil:
        """Count the pieces of the line p[a:b] (of p[:n]) that the UTF-8 scanner of the mode's pattern finds
        (no piece crosses b, as when tokenizers' trainers split each line on its own)."""
        cdef size_t ends[PIECES_AT_ONCE]
        cdef Py_ssize_t got
        while a < b:
            if self.mode == MODE_GPT2:
                got = gpt2_piece_ends(self.classes, p, a, b, n, ends, PIECES_AT_ONCE)
            else:
                got = pattern_piece_ends(self.pattern_classes, self.family, p, a, b, ends, PIECES_AT_ONCE)
            self.count_short(p, a, NULL, ends, got, n)
            a = ends[got - 1]
            self.total_ += got
        return 0

    cdef int scan_words(self, const unsigned char* p, Py_ssize_t n) except -1 nogil:
        """Count the words of p[:n] that whitespace separates, PIECES_AT_ONCE at a time."""
        cdef size_t starts[PIECES_AT_ONCE]
        cdef size_t ends[PIECES_AT_ONCE]
        cdef Py_ssize_t i = 0, got = 0, w
        while True:
            w = space_width(p, i, n)
            while w:
                i += w
                w = space_width(p, i, n)
            if i >= n:
                break
            starts[got] = i
            while i < n and not space_width(p, i, n):
                i += 1
            ends[got] = i
            got += 1
            if got == PIECES_AT_ONCE:
                self.count_short(p, 0, starts, ends, got, n)
                self.total_ += got
                got = 0
        if got:
            self.count_short(p, 0, starts, ends, got, n)
            self.total_ += got
        return 0

    cdef int count_short(self, const unsigned char* p, Py_ssize_t a, const size_t* starts, const size_t* ends,
                         Py_ssize_t got, Py_ssize_t n) except -1 nogil:
        """Count the words p[starts[q]:ends[q]] (with starts NULL: p[a:ends[0]], p[ends[0]:ends[1]], ...):
        first hash them all and prefetch their slots in the short-word table, then count them there
        (words over 16 bytes, and new words once that table is at its cap, go to the main table)."""
        cdef uint64_t k0[PIECES_AT_ONCE]
        cdef uint64_t k1[PIECES_AT_ONCE]
        cdef uint64_t h[PIECES_AT_ONCE]
        cdef Py_ssize_t q, start, m
        cdef CountEntry* e
        cdef cpp_bool full
        for q in range(got):
            start = starts[q] if starts != NULL else (ends[q - 1] if q else a)
            m = ends[q] - start
            if m <= 16:
                key_words(p + start, m, start + 16 <= n, &k0[q], &k1[q])
                h[q] = hash_words(k0[q], k1[q], m)
                prefetch_line(self.short_words.slot_address(h[q]))
        for q in range(got):
            start = starts[q] if starts != NULL else (ends[q - 1] if q else a)
            m = ends[q] - start
            e = NULL
            if m <= 16:
                e = self.short_words.find(k0[q], k1[q], m, h[q])
                if e == NULL:
                    e = self.short_words.add(k0[q], k1[q], m, h[q], &full)
            if e != NULL:
                e.count += 1
            else:
                self.add(p + start, m, 1)
        return 0

    cdef int flush(self) except -1 nogil:
        """Move the short-word table's counts into the main table (before anything reads them)."""
        cdef size_t i
        cdef CountEntry* e
        cdef uint64_t words[2]
        if not self.short_words.size():
            return 0
        for i in range(self.short_words.capacity()):
            e = self.short_words.slot(i)
            if e.length:
                words[0] = e.k0
                words[1] = e.k1
                self.add(<const unsigned char*>words, e.length, e.count)
        self.short_words.clear()
        return 0

    def count(self, data, *, str errors="strict"):
        """Count the words of UTF-8 `data` (bytes); the GIL is released for the scan.

        errors="strict": invalid UTF-8 raises ValueError("invalid UTF-8 at byte N") (N inside data);
        errors="replace": decoded as bytes.decode(errors="replace") first.
        """
        if errors not in ("strict", "replace"):
            raise ValueError(f"errors must be 'strict' or 'replace', not {errors!r}")
        if not isinstance(data, bytes):
            data = bytes(data)
        cdef Py_ssize_t n = len(data), bad
        if n == 0:
            return
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
        with nogil:
            bad = utf8_check(p, n)
        if bad >= 0:
            try:
                data.decode("utf-8", errors)
            except UnicodeDecodeError as exc:
                raise ValueError(f"invalid UTF-8 at byte {exc.start}") from None
            data = data.decode("utf-8", "replace").encode("utf-8")
            n = len(data)
            p = <const unsigned char*>PyBytes_AS_STRING(data)
        self.enter()
        try:
            with nogil:
                self.scan(p, n)
        finally:
            self.busy = False

    cdef enter(self):
        if self.busy:
            raise RuntimeError("a WordCounter is in use by another thread")
        self.busy = True

    def update(self, WordCounter other):
        """Add `other`'s counts to this counter."""
        cdef size_t e
        self.flush()
        other.flush()
        if other is self:
            for e in range(self.words.counts.size()):
                self.words.counts[e] *= 2
            self.total_ *= 2
            return
        self.enter()
        try:
            other.enter()
        except RuntimeError:
            self.busy = False
            raise
        try:
            with nogil:
                for e in range(other.words.counts.size()):
                    self.add(&other.words.arena[other.words.offs[e]], other.words.offs[e + 1] - other.words.offs[e],
                             other.words.counts[e])
        finally:
            self.busy = other.busy = False
        self.total_ += other.total_

    def add_arrays(self, bytes blob, const int64_t[::1] offsets, const int64_t[::1] counts, int64_t total=0):
        """Add a table in the form `to_arrays` returns (how tables travel between processes)."""
        cdef Py_ssize_t i, n = counts.shape[0]
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(blob)
        if offsets.shape[0] != n + 1 or (n and (offsets[0] != 0 or offsets[n] != len(blob))):
            raise ValueError("offsets must run from 0 to len(blob), one more than counts")
        for i in range(n):
            if offsets[i + 1] < offsets[i]:
                raise ValueError("offsets must not decrease")
        self.enter()
        try:
            with nogil:
                for i in range(n):
                    self.add(p + offsets[i], offsets[i + 1] - offsets[i], counts[i])
        finally:
            self.busy = False
        self.total_ += total

    def to_arrays(self):
        """(blob, offsets int64 (n+1), counts int64 (n)): the words sorted by their UTF-8 bytes."""
        self.flush()
        cdef size_t n = self.words.counts.size(), e, k, pos = 0, size
        cdef vector[uint32_t] order
        order.resize(n)
        for e in range(n):
            order[e] = e
        blob = PyBytes_FromStringAndSize(NULL, self.words.arena.size())
        cdef unsigned char* out = <unsigned char*>PyBytes_AS_STRING(blob)
        offsets = np.empty(n + 1, dtype=np.int64)
        counts = np.empty(n, dtype=np.int64)
        cdef int64_t[::1] ov = offsets
        cdef int64_t[::1] cv = counts
        with nogil:
            if n:
                tokkit_sort_words(order.data(), n, self.words.arena.data(), self.words.offs.data())
            ov[0] = 0
            for k in range(n):
                e = order[k]
                size = self.words.offs[e + 1] - self.words.offs[e]
                memcpy(out + pos, &self.words.arena[self.words.offs[e]], size)
                pos += size
                ov[k + 1] = pos
                cv[k] = self.words.counts[e]
        return blob, offsets, counts
