"""The compiled encode path: special tokens, BERT or GPT-2 pre-tokenisation, WordPiece / BPE.

All per-character and per-word work runs without the GIL; the tables are read-only after
`Encoder.build`, so one Encoder serves any number of threads. tokkit/tokenizer/plan.py decides
which pipelines it runs.

>>> from tokkit.tokenizer import Tokenizer
>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "un", "##aff"], merges=None,
...                              special_tokens=["[UNK]"])
>>> tok._encoder.encode_full("Unaff x")
([1, 2, 0], [0, 2, 6], [2, 5, 7], [0, 0, 1])
"""
cimport cython
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libcpp cimport bool
from libcpp.atomic cimport atomic
from libcpp.vector cimport vector
from libc.stdlib cimport free, realloc
from libc.string cimport memchr, memcmp, memcpy
from tokkit._native.text cimport (TextView, text_view, text_view_of, str_length, text_at, utf8_encode, ascii_only,
                                  utf8_skip,
                                  Piece, BertOptions,
                                  bert_pieces, bert_norm_pieces, gpt2_tokenizers_classes,
                                  bert_ascii_actions, BERT_WORD, BERT_DROP, BERT_SPLIT, BERT_PUNCT,
                                  Gpt2Classes, gpt2_piece_ends, utf8_from_str, PatternClasses, pattern_piece_ends,
                                  pattern_piece_ends_units, pattern_tokenizers_classes, FAMILY_GPT2)
from tokkit._native.short_keys cimport PieceEntry, PieceKey, PieceTable, hash_words, key_words
from tokkit._native.encode_tables cimport (AddedPasses, AddedSpan, BytesKey, StrMap, PairMap, Tok,
                                          bpe_merge_nothrow, bytes_key, wordpiece_two_nothrow)
from tokkit._native.grow cimport cut_to, grow_append, grow_assign, grow_push, grow_reserve, grow_resize
from tokkit._native.rows cimport Rows

import numpy as np

from tokkit._native import regex_limit
from tokkit._native.byte_symbols import bytes_to_unicode, code_point_runs, symbol_bytes
from tokkit._native.pipeline_tables import pipeline_tables
from tokkit._native.rows import rows_to_lists
from tokkit.errors import OutOfMemory, TokkitError

cdef extern from "Python.h":
    ctypedef struct PyListObject:
        PyObject** ob_item
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except NULL

cdef enum:
    # Longer pieces are merged every time. A word of a script written without spaces (a CJK
    # sentence) is one long piece: merging it costs far more than finding it again.
    CACHE_PIECE_BYTES = 4096
    PIECE_TABLE_SLOTS = 524288  # a thread's piece table grows to at most this many 32-byte slots
    PIECE_BATCH = 32        # pieces scanned (and their piece-table slots prefetched) before lookups
    JOIN_ON_THREADS = 1 << 18  # ids of a batch whose join is shared by the threads

cdef enum:
    WORDPIECE = 0
    CHARBPE = 1
    BYTELEVEL = 2

KIND_CODES = {"wordpiece": WORDPIECE, "bpe": CHARBPE, "bytelevel": BYTELEVEL}


cdef enum:  # tokkit._native.pipeline_tables.nfc_table's bits above the combining class
    NFC_ALWAYS = 0x100
    NFC_SECOND = 0x200
    NFC_FIRST = 0x400

cdef inline void reserve_ids(Rows out, Py_ssize_t chars) noexcept nogil:
    # Room for the ids of `chars` more characters (about one per 3), at least doubling: growing the
    # buffer step by step maps new memory each time, which stalls the other threads' page faults.
    # Only a guess: without the memory for it the ids grow as they come, until they truly cannot.
    cdef size_t need = out.ids.size() + chars // 3 + 16
    if need > out.ids.capacity() and not grow_reserve(out.ids, max(need, 2 * out.ids.capacity())):
        grow_reserve(out.ids, need)


cdef TextView NO_TEXT  # stands for "read the code points from a buffer instead"
NO_TEXT.data = NULL
NO_TEXT.kind = 4
NO_TEXT.length = 0

cdef inline bint table_emit(Scratch s, Rows out, uint64_t k0, uint64_t k1, Py_ssize_t n, uint64_t h,
                            int32_t word) noexcept nogil:
    """Push the ids of a piece from the thread's piece table; False if it is not there."""
    cdef const PieceEntry* e = s.pieces_seen.find(k0, k1, n, h)
    cdef const int32_t* ids
    cdef int k
    if e == NULL:
        return False
    ids = s.pieces_seen.ids_of(e)
    for k in range(e.count):
        out.push(ids[k], 0, 0, word)
    return True


cdef inline bint table_text(Scratch s, Rows out, TextView t, const Py_UCS4* cps, Py_ssize_t a, Py_ssize_t b,
                            int32_t word) noexcept nogil:
    """Push the ids of an ASCII piece (code points a:b of cps, or of t when cps is NULL) from the
    piece table, its key built in registers from the code points; False if not there. Pieces of
    other characters are looked up by their UTF-8 in bpe_piece() and wordpiece()."""
    cdef Py_ssize_t n = b - a, i
    cdef uint64_t w0 = 0, w1 = 0, c
    if n > SHORT_BYTES or out.with_offsets:
        return False
    for i in range(n):
        c = cps[a + i] if cps != NULL else text_at(t, a + i)
        if c >= 0x80:
            return False
        if i < 8:
            w0 |= c << (8 * i)
        else:
            w1 |= c << (8 * (i - 8))
    # an ASCII piece's UTF-8 is its code points: the key key_words() gives for the same bytes
    return table_emit(s, out, w0, w1, n, hash_words(w0, w1, n), word)


ctypedef fused unit_t:
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t ascii_words_kernel(Encoder e, const unit_t* u, Py_ssize_t i, Py_ssize_t b, Py_ssize_t length,
                                         int32_t* word, Scratch s, Rows out) noexcept nogil:
    """The ids of the ASCII words of u[i:b] that bert_words.hpp's kernel takes (u holds `length` bytes);
    returns where it stopped."""
    cdef bool oom = False
    i = e.bert_words.run(u, i, b, length, s.pieces_seen, out.ids, s.toks, word, &oom)
    if oom:
        out.oom = True
    return i


cdef int32_t bert_ascii_words(Encoder e, const unit_t* u, TextView t, Py_ssize_t a, Py_ssize_t b, int32_t word,
                              Scratch s, Rows out) noexcept nogil:
    """BERT normalization, pre-tokenization and the ids of each word, for ids (and word numbers)
    only, over code units a:b of t (u is t's data).

    ASCII goes through the per-character actions (bert_ascii_actions); a word's key for the piece
    table is built in registers as its characters go by. A stretch holding non-ASCII characters, from
    the start of its word to the next ASCII split character, goes through the general path
    (bert_segment): no ASCII split character combines with what is around it, so cutting there
    gives the same pieces.

    For WordPiece ids alone, whole words go through bert_words.hpp's kernel at each word boundary;
    it hands back the words it does not take (the per-character loop below does them).
    """
    cdef Py_ssize_t i = a, ws = a, j, n = 0
    cdef uint64_t w0 = 0, w1 = 0
    cdef uint32_t c
    cdef uint8_t act
    cdef bint fused = e.kind == WORDPIECE and not out.with_words and e.bert_words.usable()
    while i < b:
        if fused and n == 0:
            j = ascii_words_kernel(e, u, i, b, t.length, &word, s, out)
            if out.oom or j >= b:
                return word
            if j > i:  # all before j is done: a word starts there
                i = ws = j
        c = u[i]
        if c >= 128:
            j = i + 1
            while j < b and not (u[j] < 128 and e.bert_act[u[j]] == BERT_SPLIT):
                j += 1
            word = e.bert_segment(t, ws, j, word, s, out)
            if out.oom:
                return word
            i = j
            ws = j
            n = 0
            w0 = w1 = 0
            continue
        act = e.bert_act[c]
        if act == BERT_WORD:
            if n < 8:
                w0 |= <uint64_t>e.bert_out[c] << (8 * n)
            elif n < 16:
                w1 |= <uint64_t>e.bert_out[c] << (8 * (n - 8))
            n += 1
            i += 1
            continue
        if act == BERT_DROP:
            i += 1
            continue
        if n:
            e.ascii_word(u, t.kind, ws, i, n, w0, w1, word, s, out)
            word += 1
        if act == BERT_PUNCT:
            e.ascii_word(u, t.kind, i, i + 1, 1, e.bert_out[c], 0, word, s, out)
            word += 1
        if out.oom:  # the call fails: no use going on
            return word
        i += 1
        ws = i
        n = 0
        w0 = w1 = 0
    if n:
        e.ascii_word(u, t.kind, ws, b, n, w0, w1, word, s, out)
        word += 1
    return word


def bert_words_mode(Encoder e, int mode) -> int:
    """Find the ends of WordPiece's ASCII words 16 bytes at a time (1, where SSE2 and the tables allow it)
    or one byte at a time (0); returns the mode in use. Both give the same ids: tests run each.

    >>> from tokkit.tokenizer import Tokenizer
    >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "ab", "##c"], merges=None,
    ...                              special_tokens=["[UNK]"])
    >>> [(bert_words_mode(tok._encoder, m), tok.encode("abc AB")) for m in (0, 1)]
    [(0, [1, 2, 1]), (1, [1, 2, 1])]
    """
    return e.bert_words.set_mode(mode)


def texts_nfc_may_change(list texts, Py_ssize_t a, Py_ssize_t b, const uint16_t[::1] table) -> list:
    """The k in a:b whose texts[k] NFC may change (table: tokkit._native.pipeline_tables.nfc_table).

    A text is left alone when no char is replaced outright, combining marks are in canonical order,
    and nothing that composes onto a starter follows a starter something composes onto (a
    conservative test: such a pair need not compose). A latin-1 str never changes, so it is not read.
    """
    cdef list out = []
    cdef TextView t
    cdef Py_ssize_t k
    if table.shape[0] < 0x110000:
        raise ValueError("table must have one entry per code point")
    for k in range(a, b):
        t = text_view(texts[k])
        if t.kind != 1 and nfc_may_change(t, &table[0]):
            out.append(k)
    return out


def nfc_windows(str text, const uint16_t[::1] table) -> list:
    """The (start, end) stretches of `text` NFC may change, each from a char nothing can join to the
    next such char: NFC acts on each alone, so normalizing only these and keeping the rest gives
    the text's NFC. Empty when texts_nfc_may_change passes the text.

    >>> from tokkit._native.pipeline_tables import nfc_table
    >>> nfc_windows("x e\u0301 y \u212b.", nfc_table())
    [(1, 4), (6, 8)]
    """
    cdef TextView t = text_view(text)
    cdef vector[Py_ssize_t] bounds
    if table.shape[0] < 0x110000:
        raise ValueError("table must have one entry per code point")
    if t.kind == 1:
        return []
    cdef bint ok
    with nogil:
        if t.kind == 2:
            ok = nfc_window_scan(<const uint16_t*>t.data, t.length, &table[0], bounds)
        else:
            ok = nfc_window_scan(<const uint32_t*>t.data, t.length, &table[0], bounds)
    if not ok:
        raise OutOfMemory.encoding(1)
    return [(bounds[k], bounds[k + 1]) for k in range(0, <Py_ssize_t>bounds.size(), 2)]


cdef bint nfc_window_scan(const unit_t* u, Py_ssize_t n, const uint16_t* table,
                          vector[Py_ssize_t]& bounds) noexcept nogil:
    """nfc_windows' stretches as start, end pairs in `bounds` (touching ones joined); False when
    memory ran out."""
    cdef Py_ssize_t i = 0, j, k, last_free = 0, open_at = -1
    cdef uint16_t v, ccc, prev_ccc = 0
    cdef bint after_first = False
    while i < n:
        if u[i] < 0x80:  # an ASCII run: no ASCII char is changed or joined, only the state moves on
            j = i + 1
            while j < n and u[j] < 0x80:
                j += 1
            if open_at >= 0:
                k = i
                while k < j and table[u[k]] != 0:
                    k += 1
                if k < j:
                    if not (grow_push(bounds, open_at) and grow_push(bounds, k)):
                        return False
                    open_at = -1
            k = j - 1
            while k >= i and table[u[k]] != 0:
                k -= 1
            if k >= i:
                last_free = k
            after_first = (table[u[j - 1]] & NFC_FIRST) != 0
            prev_ccc = 0
            i = j
            continue
        v = table[u[i]]
        i += 1
        if v == 0:  # nothing joins this char to what comes before it: a window may end here
            if open_at >= 0:
                if not (grow_push(bounds, open_at) and grow_push(bounds, i - 1)):
                    return False
                open_at = -1
            last_free = i - 1
            after_first = False
            prev_ccc = 0
            continue
        ccc = v & 0xFF
        if open_at < 0 and (v & NFC_ALWAYS or (ccc and prev_ccc > ccc) or (v & NFC_SECOND and after_first)):
            open_at = last_free
            if bounds.size() and bounds.back() == open_at:  # touching the window before: one window
                bounds.pop_back()
                open_at = bounds.back()
                bounds.pop_back()
        if not ccc:
            after_first = (v & NFC_FIRST) != 0
        prev_ccc = ccc
    return open_at < 0 or (grow_push(bounds, open_at) and grow_push(bounds, n))


cdef bint nfc_may_change(TextView t, const uint16_t* table) noexcept nogil:
    if t.kind == 2:
        return nfc_scan(<const uint16_t*>t.data, t.length, table)
    return nfc_scan(<const uint32_t*>t.data, t.length, table)


cdef bint nfc_scan(const unit_t* u, Py_ssize_t n, const uint16_t* table) noexcept nogil:
    cdef Py_ssize_t i = 0
    cdef uint16_t v, ccc, prev_ccc = 0
    cdef bint after_first = False
    while i < n:
        if u[i] < 0x80:  # an ASCII run changes nothing; only its last char matters to what follows
            while i < n and u[i] < 0x80:
                i += 1
            after_first = (table[u[i - 1]] & NFC_FIRST) != 0
            prev_ccc = 0
            continue
        v = table[u[i]]
        i += 1
        if v == 0:  # a starter nothing composes onto (most chars)
            after_first = False
            prev_ccc = 0
            continue
        ccc = v & 0xFF
        if v & NFC_ALWAYS or (ccc and prev_ccc > ccc) or (v & NFC_SECOND and after_first):
            return True
        if not ccc:
            after_first = (v & NFC_FIRST) != 0
        prev_ccc = ccc
    return False


cdef add_runs(StrMap m, bytes blob, const int64_t[::1] bounds, const uint8_t[::1] ok):
    """Token k's bytes blob[bounds[k]:bounds[k + 1]] -> k, for each k where ok[k] (the first of two
    equal keys keeps its id): a vocabulary added in one C loop."""
    cdef const uint8_t* p = <const uint8_t*><const char*>blob
    cdef Py_ssize_t k
    for k in range(ok.shape[0]):
        if ok[k]:
            m.table.add(p + bounds[k], bounds[k + 1] - bounds[k], <int32_t>k, False)


cdef add_pairs(PairMap m, const int32_t[::1] left, const int32_t[::1] right, const int32_t[::1] merged):
    """Merge k, (left[k], right[k]) -> (k, merged[k]), for each k in rank order (the first of two
    equal pairs keeps its rank, as PairMap's constructor has it): the merges added in one C loop."""
    cdef Py_ssize_t k
    if not (left.shape[0] == right.shape[0] == merged.shape[0]):
        raise ValueError("the merges' left, right and merged ids differ in length")
    for k in range(left.shape[0]):
        m.table.add(left[k], right[k], <int32_t>k, merged[k])


def prefix_table(tokens) -> StrMap:
    """UTF-8 of each token -> its id (the first of two equal tokens keeps it), each proper prefix
    (by character) marked as starting a longer token (vocab_tables.hpp's TokenTable)."""
    cdef StrMap m = StrMap([], [])
    cdef bytes key
    for token, idx in tokens:
        key = token.encode("utf-8", "surrogatepass")
        m.table.add(<const uint8_t*><const char*>key, len(key), idx, True)
    return m


cdef add_added_tokens(Encoder e, added):
    """Each added token (tokkit.tokenizer.spec.AddedToken, a `normalized` one in its normalized form)
    into e.added, with its flags; a flag that reads the chars around a token asks the general path's
    class table (added_tokens.hpp's CharClass)."""
    cdef const uint32_t[::1] cps
    cdef uint32_t none = 0
    for a in added:
        cps = np.frombuffer(a.content.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        e.added.add(&cps[0] if cps.shape[0] else &none, cps.shape[0], a.id, a.single_word, a.lstrip, a.rstrip,
                    a.normalized, a.special)
    if e.added.reads_neighbours():
        e.flag_tables = pipeline_tables()["flags"]
        e.flags.stage1 = <const uint16_t*>(<size_t>e.flag_tables[0].ctypes.data)
        e.flags.stage2 = <const uint16_t*>(<size_t>e.flag_tables[1].ctypes.data)


cdef class Scratch:
    """Buffers one thread reuses from text to text."""

    def __cinit__(self):
        self.utf8 = NULL
        self.utf8_cap = 0

    def __dealloc__(self):
        free(self.utf8)

cdef class Encoder:
    """Read-only tables plus the nogil kernels; see _encode.pxd for the layout."""

    # ----------------------------------------------------------------------------- added tokens
    cdef bint next_added(self, TextView t, AddedPasses& cur, AddedSpan* m) noexcept nogil:
        """The next added token in t from the cursor on, raw tokens and normalized ones in the text
        (added_tokens.hpp's next_both); False when there is none."""
        if t.kind == 1:
            return self.added.next_in_units[uint8_t](<const uint8_t*>t.data, t.length, self.split_specials,
                                                     self.flags, cur, m)
        if t.kind == 2:
            return self.added.next_in_units[uint16_t](<const uint16_t*>t.data, t.length, self.split_specials,
                                                      self.flags, cur, m)
        return self.added.next_in_units[uint32_t](<const uint32_t*>t.data, t.length, self.split_specials,
                                                  self.flags, cur, m)

    cdef bint reads_utf8(self) noexcept nogil:
        """Whether ids without offsets read the text's UTF-8: the planner's route (FastForm.utf8_ids)."""
        return self.utf8_ids

    cdef void encode_text(self, TextView t, Scratch s, Rows out) noexcept nogil:
        cdef Py_ssize_t seg = 0
        cdef int32_t word = 0
        cdef AddedPasses cur
        cdef AddedSpan m
        if self.added.size():
            while self.next_added(t, cur, &m):
                word = self.encode_segment(t, seg, m.a, word, s, out)
                if out.oom:
                    return
                out.push(self.added.id_of(m), m.a, m.b, word)
                word += 1
                seg = m.b
        self.encode_segment(t, seg, t.length, word, s, out)

    # ----------------------------------------------------------------------------- byte-level over UTF-8
    # The id-only byte-level path (encode, encode_batch, the numpy APIs) reads the text's UTF-8 once:
    # added tokens are found in the UTF-8 itself (added_tokens.hpp), the GPT-2 scanner steps over
    # bytes, and a piece's piece-table key is two loads from the text itself.
    cdef void encode_str_utf8(self, TextView t, Scratch s, Rows out) noexcept nogil:
        """encode_text() for byte-level ids only: an ASCII str is read in place, others as UTF-8
        written into the thread's buffer (lone surrogates in their 3-byte form, as fill_utf8 does)."""
        cdef size_t need, n
        cdef uint8_t* grown
        if t.kind == 1 and ascii_only(<const unsigned char*>t.data, t.length):
            self.encode_utf8(<const uint8_t*>t.data, t.length, s, out)
            return
        need = <size_t>t.length * (2 if t.kind == 1 else (3 if t.kind == 2 else 4))
        if need > s.utf8_cap:
            grown = <uint8_t*>realloc(s.utf8, need)
            if grown == NULL:  # no room for a copy: the code-point path needs none
                self.encode_text(t, s, out)
                return
            s.utf8 = grown
            s.utf8_cap = need
        n = utf8_from_str(t.data, t.kind, t.length, s.utf8)
        self.encode_utf8(s.utf8, n, s, out)
        if s.utf8_cap > (64 << 20):  # a huge text does not keep its buffer in the pool
            free(s.utf8)
            s.utf8 = NULL
            s.utf8_cap = 0

    cdef void encode_utf8(self, const uint8_t* p, Py_ssize_t n, Scratch s, Rows out) noexcept nogil:
        cdef Py_ssize_t seg = 0
        cdef AddedPasses cur
        cdef AddedSpan m
        if self.added.size():  # (reads_utf8: no token reads the chars around it)
            while self.added.next_in_utf8(p, n, self.split_specials, cur, &m):
                self.pieces_utf8(p, seg, m.a, n, s, out)
                if out.oom or not grow_push(out.ids, self.added.id_of(m)):
                    out.oom = True
                    return
                seg = m.b
        self.pieces_utf8(p, seg, n, n, s, out)

    cdef Py_ssize_t stage_pieces(self, const uint8_t* p, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n,
                                 Scratch s, size_t* ends, PieceKey* keys) noexcept nogil:
        """Scan up to PIECE_BATCH pieces of p[a:b] and stage their lookups (keys, prefetches); how many."""
        cdef Py_ssize_t count
        if a >= b:
            return 0
        if self.family == FAMILY_GPT2:
            count = gpt2_piece_ends(self.classes, p, a, b, n, ends, PIECE_BATCH)
        else:
            count = pattern_piece_ends(self.pattern_classes, self.family, p, a, b, ends, PIECE_BATCH)
        s.pieces_seen.stage(p, a, n, ends, count, keys)
        return count

    cdef void pieces_utf8(self, const uint8_t* p, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n, Scratch s,
                          Rows out) noexcept nogil:
        """Ids of the GPT-2 pieces of p[a:b] (p holds n bytes): the piece table first, else BPE.

        Pieces go in batches, one batch ahead: while a batch is looked up, the next one has been
        scanned, keyed and its table slots prefetched, so a lookup's cache miss has a whole batch
        of scanning to arrive in instead of stalling. The table writes a batch's ids into a buffer
        on the stack (three a piece, whatever its count: no branch on how many ids a piece has),
        appended to the output at once.
        """
        cdef size_t ends[2 * PIECE_BATCH]
        cdef PieceKey keys[2 * PIECE_BATCH]
        cdef int32_t ids[3 * PIECE_BATCH]
        cdef int32_t* w
        cdef Py_ssize_t q, count, start, cur, nxt = 0, staged
        staged = self.stage_pieces(p, a, b, n, s, ends, keys)
        while staged:
            cur, count, start = nxt, staged, a
            a = ends[cur + count - 1]
            nxt = PIECE_BATCH - cur
            staged = self.stage_pieces(p, a, b, n, s, ends + nxt, keys + nxt)
            q = 0
            while q < count:
                w = ids
                q = s.pieces_seen.emit(ends + cur, start if q == 0 else ends[cur + q - 1], keys + cur, q, count, &w)
                if not grow_append(out.ids, <const int32_t*>ids, <const int32_t*>w):
                    out.oom = True
                if q < count and not out.oom:
                    self.piece_miss(p, start if q == 0 else ends[cur + q - 1], ends[cur + q], keys[cur + q], s, out)
                    q += 1
                if out.oom:
                    return

    cdef void piece_miss(self, const uint8_t* p, Py_ssize_t a, Py_ssize_t e, PieceKey key, Scratch s,
                         Rows out) noexcept nogil:
        """pieces_utf8() for the piece p[a:e] that the table did not serve: its ids from the table when it
        has more than three, else BPE, then remembered (pieces of up to 16 bytes)."""
        cdef const PieceEntry* hit = NULL
        cdef const int32_t* ids
        cdef Py_ssize_t k, mark, m = e - a
        cdef const Tok* merged
        cdef size_t count
        if m <= SHORT_BYTES:
            hit = s.pieces_seen.find(key.k0, key.k1, m, key.h)
        elif m <= CACHE_PIECE_BYTES:  # a long piece merged before: its ids from the memo, read in place
            merged = s.cache.find(<const uint8_t*>p + a, m, bytes_key(<const uint8_t*>p + a, m), &count)
            if merged != NULL:
                for k in range(<Py_ssize_t>count):
                    if not grow_push(out.ids, merged[k].id):
                        out.oom = True
                return
        if hit != NULL:
            ids = s.pieces_seen.ids_of(hit)
            if not grow_append(out.ids, ids, ids + hit.count):
                out.oom = True
            return
        if not grow_assign(s.buf, <const char*>p + a, <const char*>p + e):
            out.oom = True
            return
        mark = out.ids.size()
        self.bpe_bytes(s, out, 0, 0, 0, 0)
        if m <= SHORT_BYTES and not out.oom:
            s.pieces_seen.insert(key.k0, key.k1, m, key.h, out.ids.data() + mark, out.ids.size() - mark)

    # ----------------------------------------------------------------------------- segments
    cdef int32_t encode_segment(self, TextView t, Py_ssize_t a, Py_ssize_t b, int32_t word, Scratch s,
                                Rows out) noexcept nogil:
        cdef TextView sub
        if b <= a:
            return word
        s.pieces.clear()
        if self.kind == BYTELEVEL:
            return self.family_segment(t, a, b, word, s, out)
        if not out.with_offsets:
            if t.kind == 1:
                return bert_ascii_words(self, <const uint8_t*>t.data, t, a, b, word, s, out)
            if t.kind == 2:
                return bert_ascii_words(self, <const uint16_t*>t.data, t, a, b, word, s, out)
            return bert_ascii_words(self, <const uint32_t*>t.data, t, a, b, word, s, out)
        return self.bert_segment(t, a, b, word, s, out)

    cdef int32_t family_segment(self, TextView t, Py_ssize_t a, Py_ssize_t b, int32_t word, Scratch s,
                                Rows out) noexcept nogil:
        """encode_segment() for a byte-level pattern (pattern_scan.hpp's scanner of its family, GPT-2's too,
        over the str's code units)."""
        cdef size_t ends[PIECE_BATCH]
        cdef Py_ssize_t count, q, prev
        while a < b:
            if t.kind == 1:
                count = pattern_piece_ends_units[uint8_t](self.pattern_classes, self.family, <const uint8_t*>t.data,
                                                          a, b, ends, PIECE_BATCH)
            elif t.kind == 2:
                count = pattern_piece_ends_units[uint16_t](self.pattern_classes, self.family,
                                                           <const uint16_t*>t.data, a, b, ends, PIECE_BATCH)
            else:
                count = pattern_piece_ends_units[uint32_t](self.pattern_classes, self.family,
                                                           <const uint32_t*>t.data, a, b, ends, PIECE_BATCH)
            prev = a
            for q in range(count):
                if not table_text(s, out, t, NULL, prev, ends[q], word):
                    self.bpe_piece(s, out, t, NULL, prev, ends[q], word, 0)
                word += 1
                prev = ends[q]
            if out.oom:
                return word
            a = ends[count - 1]
        return word

    cdef int32_t bert_segment(self, TextView t, Py_ssize_t a, Py_ssize_t b, int32_t word, Scratch s,
                              Rows out) noexcept nogil:
        """The general BERT path over code points a:b: normalize, pre-tokenize, then each piece."""
        cdef TextView sub
        cdef bint ok
        cdef Py_ssize_t k
        cdef Piece p
        if b <= a:
            return word
        s.pieces.clear()
        sub.data = (<const char*>t.data) + a * t.kind
        sub.kind = t.kind
        sub.length = b - a
        s.norm.clear()
        s.ostart.clear()
        s.oend.clear()
        if out.with_offsets:
            ok = bert_pieces(sub, &self.opts, s.norm, s.ostart, s.oend, s.pieces)
        else:
            ok = bert_norm_pieces(sub, &self.opts, s.norm, s.pieces)  # no per-character spans to track
        if not ok:
            out.oom = True
            return word
        for k in range(<Py_ssize_t>s.pieces.size()):
            p = s.pieces[k]
            if table_text(s, out, NO_TEXT, s.norm.data(), p.norm_start, p.norm_end, word):
                pass
            elif self.kind == WORDPIECE:
                self.wordpiece(s, out, p.norm_start, p.norm_end, word, a)
            else:
                self.bpe_piece(s, out, NO_TEXT, s.norm.data(), p.norm_start, p.norm_end, word, a)
            word += 1
            if out.oom:
                break
        return word

    cdef void ascii_word(self, const void* u, int kind, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n, uint64_t w0,
                         uint64_t w1, int32_t word, Scratch s, Rows out) noexcept nogil:
        """The ids of one word of ASCII code units a:b (n kept characters; w0, w1: the first 16 as
        its key): the piece table, else the word's normalized characters through WordPiece or BPE."""
        cdef Py_ssize_t i
        cdef uint32_t c
        if n <= SHORT_BYTES and table_emit(s, out, w0, w1, n, hash_words(w0, w1, n), word):
            return
        s.norm.clear()
        for i in range(a, b):
            c = (<const uint8_t*>u)[i] if kind == 1 else ((<const uint16_t*>u)[i] if kind == 2 else (<const uint32_t*>u)[i])
            if self.bert_act[c] != BERT_DROP and not grow_push(s.norm, <Py_UCS4>self.bert_out[c]):
                out.oom = True
                return
        if self.kind == WORDPIECE:
            self.wordpiece(s, out, 0, n, word, 0)
        else:
            self.bpe_piece(s, out, NO_TEXT, s.norm.data(), 0, n, word, 0)

    cdef bint fill_utf8(self, Scratch s, TextView t, const Py_UCS4* cps, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        """UTF-8 of code points a:b (of cps, or of t when cps is NULL) into s.buf; s.bpos[k] = byte
        offset of char k (plus the total at the end). False when memory ran out."""
        cdef Py_ssize_t i, n = b - a, m
        cdef Py_UCS4 c
        cdef unsigned char* out
        if not (grow_resize(s.buf, 4 * n + 16) and grow_resize(s.bpos, n + 1)):
            return False
        out = <unsigned char*>s.buf.data()
        m = 0
        for i in range(n):
            c = cps[a + i] if cps != NULL else text_at(t, a + i)
            s.bpos[i] = <int32_t>m
            if c < 0x80:
                out[m] = <unsigned char>c
                m += 1
            else:
                m += utf8_encode(c, out + m)
        s.bpos[n] = <int32_t>m
        cut_to(s.buf, m)
        return True

    cdef bint fill_cpos(self, Scratch s) noexcept nogil:
        """s.cpos[byte] = index of the char holding that byte (from s.bpos); False when memory ran out."""
        cdef Py_ssize_t k, j, n = <Py_ssize_t>s.bpos.size() - 1
        if not grow_resize(s.cpos, s.buf.size()):
            return False
        for k in range(n):
            for j in range(s.bpos[k], s.bpos[k + 1]):
                s.cpos[j] = <int32_t>k
        return True

    # ----------------------------------------------------------------------------- models
    cdef void wordpiece(self, Scratch s, Rows out, Py_ssize_t na, Py_ssize_t nb, int32_t word,
                        Py_ssize_t base) noexcept nogil:
        """Greedy longest-match-first over normalized chars na:nb; any failure -> one [UNK]."""
        if nb - na > self.max_chars:
            self.push_norm(s, out, self.unk_id, na, nb, word, base)
            return
        if not self.fill_utf8(s, NO_TEXT, s.norm.data(), na, nb):
            out.oom = True
            return
        self.model_via_table(s, out, na, nb, word, base)

    cdef void model_via_table(self, Scratch s, Rows out, Py_ssize_t a, Py_ssize_t b, int32_t word,
                              Py_ssize_t base) noexcept nogil:
        """The model (WordPiece's wp_word, else bpe_bytes) on the piece whose UTF-8 is in s.buf, through
        the thread's piece table: a piece seen before skips the vocabulary and the merges."""
        cdef uint64_t k0, k1, h
        cdef Py_ssize_t n = s.buf.size(), mark = out.ids.size()
        if out.with_offsets or n > SHORT_BYTES:  # the table holds ids only, of short pieces
            self.run_model(s, out, a, b, word, base)
            return
        key_words(<const uint8_t*>s.buf.data(), n, False, &k0, &k1)
        h = hash_words(k0, k1, n)
        if table_emit(s, out, k0, k1, n, h, word):
            return
        self.run_model(s, out, a, b, word, base)
        if not out.oom:  # (ids cut short are not remembered)
            s.pieces_seen.insert(k0, k1, n, h, out.ids.data() + mark, out.ids.size() - mark)

    cdef void run_model(self, Scratch s, Rows out, Py_ssize_t a, Py_ssize_t b, int32_t word,
                               Py_ssize_t base) noexcept nogil:
        if self.kind == WORDPIECE:
            self.wp_word(s, out, a, b, word, base)
        else:
            self.bpe_bytes(s, out, a, b, word, base)

    cdef void wp_word(self, Scratch s, Rows out, Py_ssize_t na, Py_ssize_t nb, int32_t word,
                      Py_ssize_t base) noexcept nogil:
        """wordpiece() for a word whose UTF-8 is in s.buf (s.bpos: its chars' byte offsets)."""
        cdef Py_ssize_t n = nb - na, k, nbytes = s.buf.size()
        cdef const uint8_t* p = <const uint8_t*>s.buf.data()
        cdef const Tok* hit
        cdef size_t count
        cdef BytesKey key
        cdef Tok unk
        cdef int found
        # A word's pieces depend on its bytes alone: common words are split once per thread and
        # then copied from the memo as (id, first char, end char) triples relative to the word.
        # (short words on id-only paths are kept in the piece table instead, by the caller)
        cdef bint cacheable = nbytes <= CACHE_PIECE_BYTES and (out.with_offsets or nbytes > SHORT_BYTES)
        if cacheable:
            key = bytes_key(p, nbytes)
            hit = s.cache.find(p, nbytes, key, &count)
            if hit != NULL:
                for k in range(<Py_ssize_t>count):
                    self.push_norm(s, out, hit[k].id, na + hit[k].start, na + hit[k].end, word, base)
                return
        s.toks.clear()
        found = wordpiece_two_nothrow(self.vocab.table, self.cont.table, p, s.bpos.data(), n, s.toks)
        if found == 0:
            unk.id, unk.start, unk.end = self.unk_id, 0, n
            found = 1 if grow_push(s.toks, unk) else -1
        if found < 0:
            out.oom = True
            return
        for k in range(<Py_ssize_t>s.toks.size()):
            self.push_norm(s, out, s.toks[k].id, na + s.toks[k].start, na + s.toks[k].end, word, base)
        if cacheable:
            s.cache.add(p, nbytes, key, s.toks.data(), s.toks.size())

    cdef void push_norm(self, Scratch s, Rows out, int32_t idx, Py_ssize_t a, Py_ssize_t b, int32_t word,
                        Py_ssize_t base) noexcept nogil:
        """A token covering normalized chars a:b; its offsets map back through the spans (if kept)."""
        if out.with_offsets:
            out.push(idx, s.ostart[a] + base, s.oend[b - 1] + base, word)
        else:
            out.push(idx, 0, 0, word)

    cdef void bpe_piece(self, Scratch s, Rows out, TextView t, const Py_UCS4* cps, Py_ssize_t a, Py_ssize_t b,
                        int32_t word, Py_ssize_t base) noexcept nogil:
        """BPE over one piece: code points a:b of the text (byte-level) or of s.norm (char BPE)."""
        if not self.fill_utf8(s, t, cps, a, b):
            out.oom = True
            return
        self.model_via_table(s, out, a, b, word, base)

    cdef void bpe_bytes(self, Scratch s, Rows out, Py_ssize_t a, Py_ssize_t b, int32_t word,
                        Py_ssize_t base) noexcept nogil:
        """bpe_piece() for a piece whose UTF-8 is in s.buf (s.bpos: its chars' byte offsets)."""
        cdef Py_ssize_t nb, k, j, w, slen = self.suffix.size()
        cdef int32_t idx
        cdef bint charbpe = self.kind == CHARBPE
        nb = s.buf.size()
        idx = -1
        if nb + slen <= self.max_token_bytes:  # a longer piece is no token: skip hashing it whole
            for k in range(slen):
                if not grow_push[char](s.buf, self.suffix[k]):
                    out.oom = True
                    return
            idx = self.vocab.table.get(<const uint8_t*>s.buf.data(), nb + slen)
            cut_to(s.buf, nb)
        if idx >= 0 and self.direct[idx]:
            if charbpe:
                self.push_norm(s, out, idx, a, b, word, base)
            else:
                out.push(idx, a, b, word)
            return
        if out.with_offsets and not self.fill_cpos(s):
            out.oom = True
            return
        # A per-thread memo of merged pieces: bounded, never shared, so it needs no lock.
        cdef const uint8_t* p = <const uint8_t*>s.buf.data()
        cdef BytesKey key
        cdef const Tok* hit
        cdef size_t count
        # (short pieces on id-only paths are kept in the piece table instead, by the caller)
        cdef bint cacheable = nb <= CACHE_PIECE_BYTES and (out.with_offsets or nb > SHORT_BYTES)
        if cacheable:
            key = bytes_key(p, nb)
            hit = s.cache.find(p, nb, key, &count)
            if hit != NULL and not out.with_offsets and not out.with_words:  # ids alone: no call per token
                for k in range(<Py_ssize_t>count):
                    if not grow_push(out.ids, hit[k].id):
                        out.oom = True
                return
            if hit != NULL:
                for k in range(<Py_ssize_t>count):
                    self.emit(s, out, hit[k].id, hit[k].start, hit[k].end, a, b, word, base, charbpe)
                return
        if not (self.symbolize(s, nb) and bpe_merge_nothrow(self.merges.table, s.toks)):
            out.oom = True
            return
        for k in range(<Py_ssize_t>s.toks.size()):
            self.emit(s, out, s.toks[k].id, s.toks[k].start, s.toks[k].end, a, b, word, base, charbpe)
        if cacheable:
            s.cache.add(<const uint8_t*>s.buf.data(), nb, key, s.toks.data(), s.toks.size())

    cdef void emit(self, Scratch s, Rows out, int32_t idx, Py_ssize_t sb, Py_ssize_t eb, Py_ssize_t a,
                          Py_ssize_t b, int32_t word, Py_ssize_t base, bint charbpe) noexcept nogil:
        # byte span sb:eb of the piece -> code points (a partly covered character counts whole)
        if not out.with_offsets:
            out.push(idx, 0, 0, word)
            return
        cdef Py_ssize_t cs = a + s.cpos[sb], ce = a + s.cpos[eb - 1] + 1
        if charbpe:
            out.push(idx, s.ostart[cs] + base, s.oend[ce - 1] + base, word)
        else:
            out.push(idx, cs, ce, word)

    cdef bint symbolize(self, Scratch s, Py_ssize_t nb) noexcept nogil:
        """Initial symbols of s.buf[0:nb]: one per byte (byte-level) or per char (+ suffix on the last);
        False when memory ran out."""
        cdef Py_ssize_t k = 0, j, slen = self.suffix.size()
        cdef int32_t idx
        cdef Tok t
        s.toks.clear()
        while k < nb:
            if self.kind == BYTELEVEL:
                j = k + 1
                idx = self.byte_ids[<uint8_t>s.buf[k]]
            else:
                j = k + 1
                while j < nb and (<uint8_t>s.buf[j] & 0xC0) == 0x80:
                    j += 1
                if j == nb:
                    for w in range(slen):
                        if not grow_push[char](s.buf, self.suffix[w]):
                            return False
                    idx = self.vocab.table.get(<const uint8_t*>s.buf.data() + k, j - k + slen)
                    cut_to(s.buf, nb)
                else:
                    idx = self.vocab.table.get(<const uint8_t*>s.buf.data() + k, j - k)
                if idx < 0:
                    idx = self.unk_id
            if idx >= 0:
                t.id, t.start, t.end = idx, k, j
                if not grow_push(s.toks, t):
                    return False
            k = j
        return True

    # ----------------------------------------------------------------------------- custom patterns
    cdef void encode_pieces(self, TextView t, Scratch s, Rows out) noexcept nogil:
        """Byte-level BPE over pieces Python prepared (norm_start < 0: an added token, id in norm_end)."""
        cdef Py_ssize_t k
        cdef Piece p
        for k in range(<Py_ssize_t>s.pieces.size()):
            p = s.pieces[k]
            if p.norm_start < 0:
                out.push(<int32_t>p.norm_end, p.start, p.end, <int32_t>k)
            else:
                self.bpe_piece(s, out, t, NULL, p.start, p.end, <int32_t>k, 0)
            if out.oom:
                return

    cdef prepare_regex(self, str text, TextView t, Scratch s):
        """Split like tokenizers' Split(pattern, "isolated"): matches and the gaps between them.

        Each search runs under a time limit (tokkit._native.regex_limit): a pattern that
        backtracks without end on this text is a TokkitError naming it.
        """
        cdef Py_ssize_t seg = 0, end
        cdef bint found = True
        cdef AddedPasses cur
        cdef AddedSpan added
        cdef Piece p
        s.pieces.clear()
        while found:
            found = self.added.size() and self.next_added(t, cur, &added)
            end = added.a if found else t.length
            pos = seg
            for m in regex_limit.finditer(self.pattern, text, seg, end):
                for a, b in ((pos, m.start()), (m.start(), m.end())):
                    if b > a:
                        p.start, p.end, p.norm_start, p.norm_end = a, b, a, b
                        s.pieces.push_back(p)
                pos = m.end()
            if end > pos:
                p.start, p.end, p.norm_start, p.norm_end = pos, end, pos, end
                s.pieces.push_back(p)
            if found:
                p.start, p.end, p.norm_start, p.norm_end = added.a, added.b, -1, self.added.id_of(added)
                s.pieces.push_back(p)
                seg = added.b

    # ----------------------------------------------------------------------------- Python API
    cdef Scratch take_scratch(self):
        """A Scratch no other thread holds: its piece cache stays warm from call to call."""
        # list.pop and list.append are atomic under the GIL, so threads never share one
        cdef Scratch s
        try:
            s = self.pool.pop()
        except IndexError:
            s = Scratch()
        s.pieces_seen.set_max_slots(self.piece_table_slots)
        return s

    cdef Rows run_many(self, list texts, Py_ssize_t a, Py_ssize_t b, bint with_offsets, bint with_words=False):
        """The Rows of texts[a:b]; memory that runs out is one OutOfMemory, and the thread's Scratch
        goes with the call's partial ids (its buffers may be huge), so the next call starts clean."""
        cdef Scratch s = self.take_scratch()
        cdef Rows out = None
        try:
            out = self.run_with(s, texts, a, b, with_offsets, with_words)
        except MemoryError:
            s = None
            raise OutOfMemory.encoding(b - a) from None
        finally:
            if s is not None and (out is None or not out.oom):
                self.pool.append(s)
        if out.oom:
            raise OutOfMemory.encoding(b - a)
        return out

    cdef Rows run_with(self, Scratch s, list texts, Py_ssize_t a, Py_ssize_t b, bint with_offsets,
                       bint with_words):
        cdef Rows out = Rows()
        cdef vector[TextView] views
        cdef TextView tv
        cdef Py_ssize_t k
        out.with_offsets = with_offsets
        out.with_words = with_words or with_offsets
        out.ptr.push_back(0)
        if self.pattern is not None:
            for k in range(a, b):
                tv = text_view(texts[k])
                self.prepare_regex(texts[k], tv, s)
                with nogil:
                    self.encode_pieces(tv, s, out)
                    out.ptr.push_back(out.ids.size())
                if out.oom:
                    break
            return out
        cdef Py_ssize_t chars = 0
        if b - a == 1 and self.reads_utf8() and not out.with_words and self.utf8_of_one(texts[a], s, out):
            return out
        for k in range(a, b):
            views.push_back(text_view(texts[k]))
            chars += views.back().length
        reserve_ids(out, chars)
        with nogil:
            for k in range(<Py_ssize_t>views.size()):
                if out.with_words:
                    self.encode_text(views[k], s, out)
                else:
                    self.encode_ids(views[k], s, out)
                if out.oom:
                    break
                out.ptr.push_back(out.ids.size())
        return out

    cdef bint utf8_of_one(self, str text, Scratch s, Rows out):
        """Byte-level ids of one text read from the UTF-8 that CPython keeps with a str (made on
        first use and cached in the str, so encoding the same str again reads it for free); False,
        with nothing done, for a str with lone surrogates (it has no UTF-8: encode_str_utf8 writes
        them in their 3-byte form)."""
        cdef const char* p
        cdef Py_ssize_t n
        try:
            p = PyUnicode_AsUTF8AndSize(text, &n)
        except UnicodeEncodeError:
            return False
        self.utf8_row(<const uint8_t*>p, n, s, out)
        return True

    cdef void utf8_row(self, const uint8_t* p, Py_ssize_t n, Scratch s, Rows out):
        """The byte-level ids of n bytes of UTF-8 as the next row of out, without the GIL."""
        reserve_ids(out, n)
        with nogil:
            self.encode_utf8(p, n, s, out)
            out.ptr.push_back(out.ids.size())

    cdef void encode_ids(self, TextView tv, Scratch s, Rows out) noexcept nogil:
        # one text, ids only: byte-level reads UTF-8 (reads_utf8), the other kinds the code points
        if self.reads_utf8():
            self.encode_str_utf8(tv, s, out)
        else:
            self.encode_text(tv, s, out)

    def flat_job(self, list texts, bounds):
        """A FlatJob encoding `texts` (checked by text_lengths) in the slices texts[bounds[i]:bounds[i + 1]],
        or None when a custom split pattern needs the GIL for every text (use encode_flat then)."""
        if self.pattern is not None:
            return None
        cdef FlatJob job = FlatJob.__new__(FlatJob)
        job.enc, job.texts, job.done = self, texts, []
        job.items = <PyObject**>(<PyListObject*>texts).ob_item
        for b in bounds:
            job.bounds.push_back(b)
        job.taken.store(0)
        return job

    def added_spans(self, str text) -> list:
        """The (start, end) code-point spans of the added tokens found in `text`, in order, with their
        flags applied (lstrip's and rstrip's white space inside): the text parts lie between them.

        >>> from tokkit.tokenizer.plan import FastForm
        >>> from tokkit.tokenizer.spec import AddedToken
        >>> form = FastForm("wordpiece", ["[UNK]", "a", "<m>"], (AddedToken(2, "<m>", lstrip=True),), "[UNK]")
        >>> Encoder.build(form).added_spans("a  <m>a<m>")
        [(1, 6), (7, 10)]
        """
        cdef TextView t = text_view(text)
        cdef AddedPasses cur
        cdef AddedSpan m
        out = []
        if self.added.size():
            while self.next_added(t, cur, &m):
                out.append((m.a, m.b))
        return out

    # Each entry point below is one OutOfMemory when memory runs out, in the kernels (run_many) or
    # while it makes the Python objects of the answer.
    def encode(self, str text) -> list:
        try:
            return rows_to_lists(self.run_many([text], 0, 1, False), self.ints)[0]
        except MemoryError:
            raise OutOfMemory.encoding(1) from None

    def encode_numpy(self, str text):
        """Ids of one text as a numpy uint32 array; the GIL is released while encoding."""
        try:
            return self.run_many([text], 0, 1, False).flat()[0]
        except MemoryError:
            raise OutOfMemory.encoding(1) from None

    def encode_numpy_spliced(self, str text, list windows, list news):
        """encode_numpy() of `text` with each text[a:b] of `windows` (sorted (a, b) code-point spans
        that do not overlap) replaced by the str news[k]; None for a text or new part with lone
        surrogates (no UTF-8 to read), or when the encoder reads code points (not reads_utf8). The
        text's UTF-8 is the one CPython keeps with the str: the replaced text is written as UTF-8
        straight from it, never made as a new str (NFC files change a few stretches of a text; a new
        str of the whole was copied and encoded again).

        >>> import tokkit
        >>> enc = tokkit.train(texts=["ab ax c"] * 5, algo="bytelevel", vocab_size=262)._encoder
        >>> enc.encode_numpy_spliced("ab c", [(1, 2)], ["x"]).tolist() == enc.encode_numpy("ax c").tolist()
        True
        """
        cdef const char* p
        cdef const char* q
        cdef Py_ssize_t n, m, i = 0, j, at = 0, k
        cdef vector[uint8_t] buf
        if not self.reads_utf8():
            return None
        try:
            p = PyUnicode_AsUTF8AndSize(text, &n)
            buf.reserve(n + 16)
            for k in range(len(windows)):
                a, b = windows[k]
                j = utf8_skip(<const unsigned char*>p, i, n, a - at)
                buf.insert(buf.end(), <const uint8_t*>p + i, <const uint8_t*>p + j)
                q = PyUnicode_AsUTF8AndSize(news[k], &m)
                buf.insert(buf.end(), <const uint8_t*>q, <const uint8_t*>q + m)
                i, at = utf8_skip(<const unsigned char*>p, j, n, b - a), b
            buf.insert(buf.end(), <const uint8_t*>p + i, <const uint8_t*>p + n)
        except UnicodeEncodeError:
            return None
        except MemoryError:
            raise OutOfMemory.encoding(1) from None
        return self.utf8_numpy(buf.data(), buf.size())

    cdef utf8_numpy(self, const uint8_t* p, Py_ssize_t n):
        """The ids of n bytes of UTF-8 as a numpy uint32 array."""
        cdef Scratch s = self.take_scratch()
        cdef Rows out = Rows()
        out.ptr.push_back(0)
        self.utf8_row(p, n, s, out)
        if out.oom:
            raise OutOfMemory.encoding(1)
        self.pool.append(s)
        return out.flat()[0]

    def encode_flat(self, list texts, Py_ssize_t a, Py_ssize_t b) -> tuple:
        """(uint32 ids, int64 row pointers) of texts[a:b]; no Python object per token."""
        try:
            return self.run_many(texts, a, b, False).flat()
        except MemoryError:
            raise OutOfMemory.encoding(b - a) from None

    def encode_full(self, str text) -> tuple:
        """(ids, starts, ends, word ids) of one text."""
        cdef Rows r
        try:
            r = self.run_many([text], 0, 1, True)
            return ([x for x in r.ids], [x for x in r.starts], [x for x in r.ends], [x for x in r.words])
        except MemoryError:
            raise OutOfMemory.encoding(1) from None

    def encode_many(self, list texts, Py_ssize_t a, Py_ssize_t b) -> list:
        """Ids of texts[a:b], one list each; the GIL is released while encoding."""
        try:
            return rows_to_lists(self.run_many(texts, a, b, False), self.ints)
        except MemoryError:
            raise OutOfMemory.encoding(b - a) from None

    def encode_rows(self, list texts, Py_ssize_t a, Py_ssize_t b, bint offsets=True) -> Rows:
        """Ids, word ids and (with `offsets`) offsets of texts[a:b] in flat arrays (see
        tokkit._native.rows.Rows). Without offsets the encoder tracks no per-character spans."""
        return self.run_many(texts, a, b, offsets, True)

    def scan_mode(self, int mode=-1) -> int:
        """The UTF-8 scanner's way of classing bytes: 2 SSE2 blocks, 1 SWAR words, 0 one byte at a time.
        `mode` >= 0 asks for that one (the best this machine and table allow is used if it cannot be);
        returns the mode in use. All give the same pieces; tests run each of them."""
        if mode >= 0:
            self.classes.set_mode(mode)
            self.pattern_classes.set_mode(mode)
        return self.classes.mode if self.family == FAMILY_GPT2 else self.pattern_classes.mode

    def limit_piece_tables(self, size_t slots):
        """Cap each thread's piece table at `slots` (rounded up to a power of two, at least 4,096):
        a table that would grow past it is cleared. The default, 2**19 slots, is 16 MB."""
        self.piece_table_slots = slots
        self.pool.clear()

    @staticmethod
    def build(form, bint split_special_tokens=False):
        """Compile a fast form (tokkit.tokenizer.plan.FastForm: the planner's reading of a pipeline this
        encoder runs) into read-only lookup tables.

        >>> from tokkit.tokenizer.plan import FastForm
        >>> from tokkit.tokenizer.spec import AddedToken
        >>> form = FastForm("wordpiece", ["[UNK]", "a"], (AddedToken(0, "[UNK]"),), "[UNK]")
        >>> Encoder.build(form).encode("a [UNK] b")
        [1, 0, 0]
        """
        cdef Encoder e = Encoder.__new__(Encoder)
        vocab = form.vocab
        runs = code_point_runs(vocab)
        wanted = set(bytes_to_unicode()) | ({form.unk_token} - {None})
        ids = {t: i for i, t in enumerate(vocab) if t in wanted}  # the ids build reads (the last of a repeat)
        e.kind = KIND_CODES[form.kind]
        norm = form.normalizer
        e.opts.clean_text = norm is not None and norm.clean_text
        e.opts.handle_chinese_chars = norm is not None and norm.handle_chinese_chars
        e.opts.strip_accents = norm is not None and norm.strips_accents
        e.opts.lowercase = norm is not None and norm.lowercase
        bert_ascii_actions(&e.opts, e.bert_act, e.bert_out)
        e.unk_id = ids[form.unk_token] if form.unk_token is not None else -1
        e.max_chars = form.max_input_chars_per_word
        e.max_token_chars = runs.max_chars()
        e.max_token_bytes = runs.max_utf8_bytes()
        e.pattern = form.pattern
        e.family = form.family
        e.pool = []
        e.piece_table_slots = PIECE_TABLE_SLOTS
        e.ints = tuple(range(len(vocab)))
        if e.kind != BYTELEVEL:
            tokens = [(i, t) for i, t in enumerate(vocab) if t is not None]  # an id may be unused
        if e.kind == WORDPIECE:
            p = form.prefix
            e.vocab = prefix_table([(t, i) for i, t in tokens])
            e.cont = prefix_table([(t[len(p):], i) for i, t in tokens if t.startswith(p) and len(t) > len(p)])
            e.bert_words.init(e.bert_act, e.bert_out, e.vocab.table, e.cont.table, e.unk_id, e.max_chars)
            e.merges = PairMap([], [])
        else:
            left, right, merged = form.merge_ids  # checked against the vocabulary when the model was read
            e.merges = PairMap([], [])
            add_pairs(e.merges, np.ascontiguousarray(left, dtype=np.int32), np.ascontiguousarray(right, dtype=np.int32),
                      np.ascontiguousarray(merged, dtype=np.int32))
            if e.kind == BYTELEVEL:
                # each token's bytes, all in one blob (a symbol is one byte, so runs.bounds bound them)
                blob, ok = symbol_bytes(runs)
                bounds = runs.bounds
                e.vocab = StrMap([], [])
                add_runs(e.vocab, blob, bounds, ok.view(np.uint8))
                for byte, sym in enumerate(bytes_to_unicode()):
                    e.byte_ids[byte] = ids.get(sym, -1)
            else:
                utf8 = [None if t is None else t.encode("utf-8", "surrogatepass") for t in vocab]
                e.vocab = StrMap([utf8[i] for i, _ in tokens], [i for i, _ in tokens])
                suffix = (form.suffix or "").encode()
                for ch in suffix:
                    e.suffix.push_back(ch)
                words = [u[: len(u) - len(suffix)] if u is not None and u.endswith(suffix) and len(u) > len(suffix)
                         else b"" for u in utf8]
                blob = b"".join(words)
                bounds = np.zeros(len(words) + 1, dtype=np.int64)
                np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words)), out=bounds[1:])
                ok = np.ones(len(words), dtype=np.uint8)
            e.compute_direct(blob, bounds, ok.view(np.uint8), form.ignore_merges)
        e.classes.init(gpt2_tokenizers_classes())
        e.pattern_classes.init(pattern_tokenizers_classes())
        e.split_specials = split_special_tokens
        add_added_tokens(e, form.added)
        e.utf8_ids = form.utf8_ids
        if e.utf8_ids and (e.kind != BYTELEVEL or e.added.reads_neighbours()):
            raise ValueError("the UTF-8 route runs byte-level ids only, and no added token that reads the chars "
                             "around it (the planner's utf8_route says which)")
        return e

    cdef void compute_direct(self, bytes blob, const int64_t[::1] bounds, const uint8_t[::1] ok,
                             bint ignore_merges):
        # A piece found whole in the vocabulary may be emitted as is only when BPE would build
        # exactly that token from its symbols; merges by rank do not always get there. With
        # `ignore_merges` (Llama 3) the model emits any piece found whole, whatever the merges say.
        # Token k's bytes are blob[bounds[k]:bounds[k + 1]], to be read only where ok[k].
        cdef Scratch s = Scratch()
        cdef const char* p = blob
        cdef Py_ssize_t k, n = bounds.shape[0] - 1
        cdef int64_t a, b
        self.direct.assign(n, 0)
        for k in range(n):
            a, b = bounds[k], bounds[k + 1]
            if not ok[k] or a == b:
                continue
            if ignore_merges:
                self.direct[k] = 1
                continue
            s.buf.assign(p + a, p + b)
            if not (self.symbolize(s, b - a) and bpe_merge_nothrow(self.merges.table, s.toks)):
                raise OutOfMemory(f"out of memory while building the compiled encoder ({n:,} tokens)")
            self.direct[k] = s.toks.size() == 1 and s.toks[0].id == k


@cython.final
cdef class FlatJob:
    """One batch's ids, encoded by however many threads call work() at once, joined by result().

    Each thread takes the next slice through an atomic counter and encodes it without the GIL into
    its own Rows, so a thread enters Python once per call, not once per slice: with a slice per
    Python call, a thread that finished a slice waited for the GIL while the other thread held it
    to start or close its own.

    >>> from tokkit.tokenizer import Tokenizer
    >>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a", "##b"], merges=None,
    ...                              special_tokens=["[UNK]"])
    >>> job = tok._encoder.flat_job(["ab a", "", "b"], [0, 1, 3])
    >>> job.work()
    >>> [a.tolist() for a in job.result()]
    [[1, 2, 1, 0], [0, 3, 3, 4]]
    """
    cdef Encoder enc
    cdef list texts                # the batch (exact, ready str), kept alive by this job
    cdef PyObject** items          # texts' items, read without the GIL
    cdef vector[Py_ssize_t] bounds
    cdef atomic[Py_ssize_t] taken  # the next slice to encode (past the end once a thread ran out of memory)
    cdef list done                 # (Rows, slice numbers) of each call of work() that has finished
    cdef object answer             # (ids, offsets) once planned
    cdef vector[int32_t*] ids_of   # a slice's ids and its texts' ends, in the Rows that holds it
    cdef vector[int64_t*] ptr_of
    cdef vector[int64_t] base      # where a slice's ids start in the answer (base[n]: all of them)
    cdef uint32_t* dst_ids
    cdef int64_t* dst_off
    cdef atomic[Py_ssize_t] copied # the next slice to copy

    def work(self, Py_ssize_t max_slices=-1) -> None:
        """Encode slices until none is left (or `max_slices` of them, when not negative).

        Memory that runs out is one OutOfMemory; the other threads take no further slice, and this
        thread's Scratch and ids are dropped (result() is not to be called then)."""
        cdef Scratch s = self.enc.take_scratch()
        cdef Rows out = Rows()
        cdef vector[Py_ssize_t] mine
        cdef Py_ssize_t i, k, chars, n = <Py_ssize_t>self.bounds.size() - 1
        try:
            out.ptr.push_back(0)
            with nogil:
                while max_slices != 0 and not out.oom:
                    i = self.taken.fetch_add(1)
                    if i >= n:
                        break
                    mine.push_back(i)
                    chars = 0
                    for k in range(self.bounds[i], self.bounds[i + 1]):
                        chars += str_length(self.items[k])
                    reserve_ids(out, chars)
                    for k in range(self.bounds[i], self.bounds[i + 1]):
                        self.enc.encode_ids(text_view_of(self.items[k]), s, out)
                        if out.oom:
                            break
                        out.ptr.push_back(out.ids.size())
                    max_slices -= 1
        except MemoryError:
            out.oom = True
        if out.oom:
            self.taken.store(n)  # the call fails: the other threads take no further slice
            raise OutOfMemory.encoding(self.bounds.back())
        self.enc.pool.append(s)
        self.done.append((out, [x for x in mine]))

    def plan_join(self) -> bool:
        """Ready the joined (ids, offsets) once every work() call has returned; True when the slices'
        ids are to be copied into them by join_work() on the threads that encoded them (a big
        batch: one thread copying them all was a serial tail after the parallel encoding), False
        when the answer is ready (one thread took every slice in order, or the copy was small
        enough to do here)."""
        try:
            if not self.plan():
                return False
        except MemoryError:
            raise OutOfMemory.encoding(self.bounds.back()) from None
        if self.base.back() >= JOIN_ON_THREADS:
            return True
        self.join_work()
        return False

    def join_work(self) -> None:
        """Copy slices into the planned answer until none is left; any number of threads at once."""
        cdef Py_ssize_t i, n_slices = <Py_ssize_t>self.bounds.size() - 1
        with nogil:
            while True:
                i = self.copied.fetch_add(1)
                if i >= n_slices:
                    break
                self.copy_slice(i)

    def result(self) -> tuple:
        """(uint32 ids, int64 offsets) of the whole batch, once every work() call has returned (and
        join_work() has, where plan_join() asked for it)."""
        if self.answer is None and self.plan_join():
            self.join_work()
        return self.answer

    cdef bint plan(self):
        """The answer's arrays and where each slice goes in them; False when no copy is needed."""
        cdef Py_ssize_t n_slices = <Py_ssize_t>self.bounds.size() - 1
        if len(self.done) == 1 and self.done[0][1] == list(range(n_slices)):
            self.answer = (<Rows>self.done[0][0]).flat()   # one thread took every slice in order: no copy
            return False
        self.ids_of.resize(n_slices)
        self.ptr_of.resize(n_slices)
        self.base.resize(n_slices + 1)
        cdef Rows r
        cdef Py_ssize_t i, at
        for r, mine in self.done:
            at = 0
            for i in mine:
                self.ids_of[i], self.ptr_of[i] = r.ids.data(), r.ptr.data() + at
                at += self.bounds[i + 1] - self.bounds[i]
        self.base[0] = 0
        for i in range(n_slices):
            self.base[i + 1] = self.base[i] + self.ptr_of[i][self.bounds[i + 1] - self.bounds[i]] - self.ptr_of[i][0]
        ids = np.empty(self.base[n_slices], dtype=np.uint32)
        offsets = np.empty(self.bounds[n_slices] + 1, dtype=np.int64)
        offsets[0] = 0
        self.answer = (ids, offsets)
        cdef uint32_t[::1] id_view = ids
        cdef int64_t[::1] off_view = offsets
        self.dst_ids = &id_view[0] if id_view.shape[0] else NULL
        self.dst_off = &off_view[0]
        self.copied.store(0)
        return True

    cdef void copy_slice(self, Py_ssize_t i) noexcept nogil:
        """Slice i's ids and its texts' offsets into the answer, at the place plan() found for them."""
        cdef int64_t lo = self.ptr_of[i][0], base = self.base[i]
        cdef Py_ssize_t k, first = self.bounds[i]
        if self.base[i + 1] > base:
            memcpy(self.dst_ids + base, self.ids_of[i] + lo, (self.base[i + 1] - base) * sizeof(int32_t))
        for k in range(first, self.bounds[i + 1]):
            self.dst_off[k + 1] = base + self.ptr_of[i][k - first + 1] - lo
