"""The general compiled encode path: any supported normalizer, pre-tokenizer and model, composed.

The fast paths of encode.pyx cover BERT WordPiece, char BPE and byte-level BPE. Every other
tokenizer (Unigram, SentencePiece BPE, WordLevel, NFC or Precompiled normalizers, Metaspace...)
runs here: the loops over characters are C++ (pipeline_*.hpp). `PipelineEncoder.build` takes each
component's description of itself (the `native()` methods of tokkit.tokenizer's components: dicts
of the fields of pipeline_build.hpp's structs) and makes the steps; which lanes run is decided by
tokkit/tokenizer/plan.py. Patterns that need a regex engine (a Split or Replace regex other than the
ones compiled in) call back into Python through the `finder` a description carries.

>>> enc = PipelineEncoder.build(3, [], [{"kind": PreKind.P_WHITESPACE_SPLIT}],
...     {"kind": ModelKind.M_WORDLEVEL, "unk_id": 0, "tokens": token_blob(["[UNK]", "a", "b"])}, [])
>>> enc.encode("a b c")
[1, 2, 0]
"""
from cpython.unicode cimport PyUnicode_FromKindAndData
from itertools import repeat
from libc.stdint cimport int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.utility cimport pair
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np
import regex

from tokkit._native.pipeline_tables import pipeline_tables
from tokkit._native.rows import rows_to_lists
from tokkit._native.grow cimport grow_push, throw_bad_alloc
from tokkit._native.rows cimport Rows
from tokkit._native.text cimport (FAMILY_CL100K, FAMILY_GPT2, FAMILY_O200K, FAMILY_QWEN2, TextView, bert_normalize,
                                  pattern_tokenizers_classes, text_at, text_view)
from tokkit.errors import OutOfMemory, TokkitError

cdef extern from "pipeline_build.hpp" namespace "tokkit::pipe" nogil:
    # the compiled kinds of step, with the values pipeline_text.hpp, pipeline_split.hpp,
    # pipeline_model.hpp and pipeline_build.hpp give them
    cpdef enum NormKind:
        N_NFD, N_NFKD, N_NFC, N_NFKC, N_LOWER, N_STRIP, N_STRIP_ACCENTS, N_REPLACE, N_PREPEND, N_PRECOMPILED
        N_BERT, N_PYTHON, N_NMT
    cpdef enum PreKind:
        P_METASPACE, P_SPLIT_STRING, P_SPLIT_PYTHON, P_BYTELEVEL, P_WHITESPACE
        P_WHITESPACE_SPLIT, P_PUNCTUATION, P_DIGITS, P_BERT, P_SPLIT_FAMILY, P_SPLIT_SCAN
    cpdef enum ScanKind:
        SCAN_DIGITS3, SCAN_KANA_HAN, SCAN_DEEPSEEK
    cpdef enum Behavior:
        B_REMOVED, B_ISOLATED, B_MERGED_PREVIOUS, B_MERGED_NEXT, B_CONTIGUOUS
    cpdef enum ModelKind:
        M_UNIGRAM, M_BPE, M_WORDPIECE, M_WORDLEVEL
    cpdef enum PrependScheme:
        PS_ALWAYS, PS_FIRST, PS_NEVER

    cdef struct NormDesc:
        int kind
        vector[uint32_t] pattern, content
        cbool strip_left, strip_right, collapse_spaces, clean_text, handle_chinese_chars, strip_accents, lowercase
        int charsmap, python
    cdef struct PreDesc:
        int kind
        uint32_t replacement
        int prepend_scheme
        cbool split
        vector[uint32_t] pattern
        int behavior
        cbool invert, add_prefix_space, use_regex, individual_digits
        int python, family, scan
    cdef struct ModelDesc:
        int kind
        int32_t unk_id
        cbool byte_fallback, fuse_unk, ignore_merges
        string prefix, suffix
        uint64_t max_input_chars
        vector[double] scores
        double unk_score
        vector[int32_t] byte_ids
        cbool cut_at_metaspace
    cdef struct AddedDesc:
        vector[uint32_t] content
        int32_t id
        cbool single_word, lstrip, rstrip, normalized, special
    cdef struct TableDesc:
        const uint16_t *lower1
        const uint16_t *nfd1
        const uint16_t *nfkd1
        const uint16_t *flags1
        const uint16_t *flags2
        const uint16_t *ccc1
        const uint16_t *grapheme1
        const uint16_t *grapheme2
        const uint32_t *lower2
        const uint32_t *nfd2
        const uint32_t *nfkd2
        const uint32_t *pool
        const uint32_t *compose_values
        const uint8_t *ccc2
        const uint64_t *compose_keys
        size_t compositions

    cdef cppclass Pipeline:
        cbool split_specials, cut_before, fast_lane, utf8_ids
    cdef cppclass Scratch:
        cbool unknown
    void add_norm(Pipeline& P, const NormDesc& d) except +
    void add_pre(Pipeline& P, const PreDesc& d) except +
    void add_added(Pipeline& P, const AddedDesc& d) except +
    void set_model(Pipeline& P, const ModelDesc& d) except +
    int add_charsmap(Pipeline& P, const uint32_t* units, size_t n, const char* pool, size_t npool) except +
    void model_token(Pipeline& P, const char* p, size_t n, int32_t id) except +
    void finish_model(Pipeline& P) except +
    void model_merge(Pipeline& P, int32_t a, int32_t b, int32_t rank, int32_t merged) except +
    void set_tables(Pipeline& P, const TableDesc& t)
    void set_callbacks(Pipeline& P, void* regex_fn)
    void set_bert_normalizer(Pipeline& P, void* fn)
    void set_pattern_classes(Pipeline& P, const uint8_t* per_code_point)
    void set_punct_symbol(Pipeline& P, const uint8_t* table, size_t end)
    void set_utf8_ids(Pipeline& P, cbool on) except +
    cbool inspect(const Pipeline& P, const uint32_t* c, size_t n, cbool pre, Scratch& s, vector[uint32_t]& chars,
                  vector[int32_t]& starts, vector[int32_t]& ends, vector[int32_t]& piece_ends, void* pyctx) except +
    cbool encode_ids(const Pipeline& P, const void* data, int kind, size_t n, Scratch& s, vector[int32_t]& ids,
                     void* pyctx) except +
    cbool encode_one(const Pipeline& P, const uint32_t* c, size_t n, Scratch& s, vector[int32_t]& ids,
                     vector[int32_t]& starts, vector[int32_t]& ends, vector[int32_t]& words,
                     cbool with_offsets, cbool with_words, void* pyctx) except +

# The scanners compiled for a Split pattern (tokkit.tokenizer.pre_tokenizers.SCANNERS names the
# patterns), by name: their family codes in text.pxd
SCANNER_FAMILIES = {"gpt2": FAMILY_GPT2, "cl100k": FAMILY_CL100K, "qwen2": FAMILY_QWEN2, "o200k": FAMILY_O200K}

# What a description leaves out is the struct field's default (the steps' own defaults in the headers)
NORM_DEFAULTS = dict(pattern=[], content=[], strip_left=False, strip_right=False, collapse_spaces=False,
                     clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False,
                     charsmap=-1, python=-1)
PRE_DEFAULTS = dict(replacement=0x2581, prepend_scheme=PS_ALWAYS, split=True, pattern=[], behavior=B_ISOLATED,
                    invert=False, add_prefix_space=False, use_regex=True, individual_digits=False, python=-1,
                    family=0, scan=0)
MODEL_DEFAULTS = dict(unk_id=-1, byte_fallback=False, fuse_unk=False, ignore_merges=False, prefix=b"", suffix=b"",
                      max_input_chars=100, scores=[], unk_score=0.0, byte_ids=[-1] * 256, cut_at_metaspace=False)


cdef cbool regex_scan(void* ctx, int index, const uint32_t* c, size_t n,
                      vector[pair[size_t, size_t]]& out) noexcept with gil:
    """Matches of Python pattern `index` in c[0:n]; on an exception, keep it for the caller and stop."""
    cdef ScratchBox box = <ScratchBox>ctx
    try:
        text = PyUnicode_FromKindAndData(4, c, n)
        out.clear()
        for start, end in box.patterns[index](text):
            out.push_back(pair[size_t, size_t](start, end))
        return True
    except BaseException as exc:
        box.error = exc
        return False


def token_blob(vocab) -> tuple:
    """A vocabulary by id (None at an unused id) as the compiled models take it, built in C loops:
    all the tokens' UTF-8 in one bytes object, and an int32 array of each one's length in characters
    (-1: no token at that id), which _set_tokens walks the UTF-8 by.

    >>> token_blob(["a", None, "\u00e9t\u00e9"])
    (b'a\\xc3\\xa9t\\xc3\\xa9', array([ 1, -1,  3], dtype=int32))
    """
    holes = None in vocab
    texts = ["" if t is None else t for t in vocab] if holes else vocab
    chars = np.fromiter(map(len, texts), np.int32, len(texts))
    if holes:
        chars[[i for i, t in enumerate(vocab) if t is None]] = -1
    return "".join(texts).encode("utf-8", "surrogatepass"), chars


cdef class ScratchBox:
    """One thread's buffers (a C++ Scratch with its memo of pieces) and the error a callback raised."""
    cdef Scratch* s
    cdef object error
    cdef list patterns
    cdef vector[uint32_t] cps

    def __cinit__(self):
        self.s = new Scratch()

    def __dealloc__(self):
        del self.s


def _u32(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


cdef inline const uint16_t* _p16(a):
    return <const uint16_t*>(<size_t>a.ctypes.data)


PUNCT_SYMBOL_END = 0x20000  # planes 0 and 1: the others hold no punctuation nor symbol
_punct_symbol = None


def punct_symbol_table():
    """uint8 per code point below PUNCT_SYMBOL_END, 1 for [\\p{P}\\p{S}]: the class scanners' (pipeline_scan.hpp),
    read off the regex module (as tokkit.tokenizer.onig_regex runs other patterns), built once.

    >>> t = punct_symbol_table()
    >>> int(t[ord("!")]), int(t[ord("+")]), int(t[ord("a")]), int(t[0x200B]), int(t[0x1F600])
    (1, 1, 0, 0, 1)
    """
    global _punct_symbol
    if _punct_symbol is None:  # threads racing here build equal tables
        cps = np.arange(PUNCT_SYMBOL_END, dtype=np.uint32)
        cps[0xD800:0xE000] = 0x20  # lone surrogates do not decode (and are neither)
        table = np.zeros(PUNCT_SYMBOL_END, dtype=np.uint8)
        for m in regex.finditer(r"[\p{P}\p{S}]+", cps.tobytes().decode("utf-32-le")):
            table[m.start():m.end()] = 1
        _punct_symbol = table
    return _punct_symbol


cdef inline const uint32_t* _p32(a):
    return <const uint32_t*>(<size_t>a.ctypes.data)


cdef class PipelineEncoder:
    """A Pipeline built from its components' descriptions; read-only after build, so threads share it."""
    cdef Pipeline* p
    cdef list pool          # idle ScratchBox objects
    cdef list patterns      # the finders of the patterns the callbacks run: text -> [(start, end)]
    cdef object tables      # the arrays the Pipeline points into (kept alive here)
    cdef list keep          # other arrays the Pipeline points into
    cdef tuple ints

    def __cinit__(self):
        self.p = new Pipeline()
        self.pool = []
        self.patterns = []
        self.keep = []

    def __dealloc__(self):
        del self.p

    @staticmethod
    def build(Py_ssize_t vocab_size, list normalizer, list pre_tokenizer, dict model, list added,
              bint split_special_tokens=False, bint fast_lane=False, bint utf8_ids=False):
        """A PipelineEncoder for the descriptions of a pipeline's parts (see pipeline_build.hpp's structs).

        `normalizer` and `pre_tokenizer`: their steps in order, each a dict of NormDesc or PreDesc
        fields (the rest take NORM_DEFAULTS, PRE_DEFAULTS), plus `finder` (text -> [(start, end)]) for
        a step that calls back into Python, or `charsmap_parts` ((uint32 trie units, bytes pool)) for a
        Precompiled map; `model`: ModelDesc fields plus `tokens` (token_blob's pair) and `merges`
        (int32 arrays of the left, right and merged ids by rank); `added`: AddedDesc dicts; `fast_lane`: whether ids without
        offsets go chunk by chunk through the memo (tokkit/tokenizer/plan.py decides where that is
        exact); `utf8_ids`: whether ids without offsets go through the normalizer and pre-tokenizer as
        UTF-8, without alignments (plan.utf8_lane decides where; a pipeline with a step the lane lacks
        is refused with ValueError, see the `utf8_ids` property).
        """
        try:
            return PipelineEncoder._build(vocab_size, normalizer, pre_tokenizer, model, added,
                                          split_special_tokens, fast_lane, utf8_ids)
        except MemoryError:
            raise OutOfMemory(f"out of memory while building the compiled encoder ({vocab_size:,} tokens, "
                              f"{len(added):,} added tokens)") from None

    @staticmethod
    def _build(Py_ssize_t vocab_size, list normalizer, list pre_tokenizer, dict model, list added,
               bint split_special_tokens, bint fast_lane, bint utf8_ids):
        cdef PipelineEncoder e = PipelineEncoder.__new__(PipelineEncoder)
        cdef AddedDesc token
        e.ints = tuple(range(vocab_size))
        e._set_tables()
        for step in normalizer:
            e._add_norm(step)
        for step in pre_tokenizer:
            e._add_pre(step)
        e._set_model(model)
        for desc in added:
            token = desc
            add_added(e.p[0], token)
        e.p.split_specials = split_special_tokens
        set_callbacks(e.p[0], <void*>regex_scan)
        set_bert_normalizer(e.p[0], <void*>bert_normalize)
        set_pattern_classes(e.p[0], pattern_tokenizers_classes())
        if any(step.get("kind") == P_SPLIT_SCAN for step in pre_tokenizer):
            table = punct_symbol_table()
            e.keep.append(table)
            set_punct_symbol(e.p[0], <const uint8_t*>(<size_t>table.ctypes.data), len(table))
        e.p.fast_lane = fast_lane
        set_utf8_ids(e.p[0], utf8_ids)
        return e

    cdef _set_tables(self):
        t = pipeline_tables()
        self.tables = t
        cdef TableDesc d
        d.lower1, d.lower2 = _p16(t["lower"][0]), _p32(t["lower"][1])
        d.nfd1, d.nfd2 = _p16(t["nfd"][0]), _p32(t["nfd"][1])
        d.nfkd1, d.nfkd2 = _p16(t["nfkd"][0]), _p32(t["nfkd"][1])
        d.pool = _p32(t["pool"])
        d.flags1, d.flags2 = _p16(t["flags"][0]), _p16(t["flags"][1])
        d.ccc1, d.ccc2 = _p16(t["ccc"][0]), <const uint8_t*>(<size_t>t["ccc"][1].ctypes.data)
        d.compose_keys = <const uint64_t*>(<size_t>t["compose_keys"].ctypes.data)
        d.compose_values, d.compositions = _p32(t["compose_values"]), len(t["compose_keys"])
        d.grapheme1, d.grapheme2 = _p16(t["grapheme"][0]), _p16(t["grapheme"][1])
        set_tables(self.p[0], d)

    # ------------------------------------------------------------------------------ building
    cdef int _callback(self, dict step) except -2:
        """The index of a step's Python finder, or -1 when it has none."""
        finder = step.pop("finder", None)
        if finder is None:
            return -1
        self.patterns.append(finder)
        return len(self.patterns) - 1

    cdef _add_norm(self, dict step):
        cdef NormDesc d
        step = {**NORM_DEFAULTS, **step}
        step["python"] = self._callback(step)
        parts = step.pop("charsmap_parts", None)
        if parts is not None:
            units = np.ascontiguousarray(parts[0], dtype=np.uint32)
            self.keep.append(units)
            step["charsmap"] = add_charsmap(self.p[0], _p32(units), len(units), parts[1], len(parts[1]))
        d = step
        add_norm(self.p[0], d)

    cdef _add_pre(self, dict step):
        cdef PreDesc d
        step = {**PRE_DEFAULTS, **step}
        step["python"] = self._callback(step)
        d = step
        add_pre(self.p[0], d)

    cdef _set_model(self, dict model):
        cdef ModelDesc d
        model = {**MODEL_DEFAULTS, **model}
        tokens, merges = model.pop("tokens"), model.pop("merges", None)
        d = model
        set_model(self.p[0], d)
        self._set_tokens(tokens[0], tokens[1])
        if merges is not None:
            self._set_merges(merges[0], merges[1], merges[2])
        finish_model(self.p[0])

    cdef _set_tokens(self, bytes blob, const int32_t[:] chars):
        """The model's tokens from token_blob's pair, in one C loop: each token's bytes run to the
        lead byte after its last character (surrogatepass writes a lone surrogate as one too)."""
        cdef const unsigned char* at = <const unsigned char*>(<const char*>blob)
        cdef const unsigned char* end = at + len(blob)
        cdef const unsigned char* q
        cdef Py_ssize_t i
        cdef int32_t n
        for i in range(chars.shape[0]):
            n, q = chars[i], at
            if n < 0:
                continue
            while n > 0 and q < end:
                q += 1
                while q < end and (q[0] & 0xC0) == 0x80:
                    q += 1
                n -= 1
            model_token(self.p[0], <const char*>at, q - at, <int32_t>i)
            at = q

    cdef _set_merges(self, const int32_t[:] lefts, const int32_t[:] rights, const int32_t[:] merged):
        """The merges by rank; a pair listed twice keeps its last rank (the table keeps a pair's first
        entry, so the ranks go in from the last)."""
        cdef Py_ssize_t r
        if not (lefts.shape[0] == rights.shape[0] == merged.shape[0]):
            raise ValueError("the merges' left, right and merged ids differ in length")
        for r in range(lefts.shape[0] - 1, -1, -1):
            model_merge(self.p[0], lefts[r], rights[r], <int32_t>r, merged[r])

    # ------------------------------------------------------------------------------ encoding
    cdef ScratchBox take(self):
        cdef ScratchBox box
        try:
            box = self.pool.pop()
        except IndexError:
            box = ScratchBox()
            box.patterns = self.patterns
        box.error = None
        box.s.unknown = False  # a call that failed half way may have left it set
        return box

    cdef Rows run(self, list texts, Py_ssize_t a, Py_ssize_t b, bint with_offsets, bint with_words):
        cdef Rows out = Rows()
        cdef ScratchBox box = self.take()
        cdef Py_ssize_t k, i
        cdef TextView tv
        cdef cbool ok
        cdef bint fast = self.p.fast_lane and not with_offsets and not with_words
        out.with_offsets = with_offsets
        out.with_words = with_words or with_offsets
        out.ptr.push_back(0)
        try:
            for k in range(a, b):
                tv = text_view(texts[k])
                if fast:
                    with nogil:
                        ok = encode_ids(self.p[0], tv.data, tv.kind, tv.length, box.s[0], out.ids, <void*>box)
                        out.ptr.push_back(out.ids.size())
                    if not ok:
                        raise box.error
                    continue
                with nogil:
                    box.cps.resize(tv.length)
                    for i in range(tv.length):
                        box.cps[i] = text_at(tv, i)
                    ok = encode_one(self.p[0], box.cps.data(), tv.length, box.s[0], out.ids, out.starts, out.ends,
                                    out.words, out.with_offsets, out.with_words, <void*>box)
                    out.ptr.push_back(out.ids.size())
                if not ok:
                    raise box.error
            if box.s.unknown:
                box.s.unknown = False
                raise TokkitError("the text holds a character the vocabulary cannot encode, and the model has "
                                  "no unknown token (tokenizers fails on it too)")
            return out
        except MemoryError:
            # the scratch's memos may be half-written: they go with the call's partial ids
            box = None
            raise OutOfMemory.encoding(b - a) from None
        finally:
            if box is not None:
                box.error = None
                self.pool.append(box)

    def encode(self, str text) -> list:
        return rows_to_lists(self.run([text], 0, 1, False, False), self.ints)[0]

    def encode_numpy(self, str text):
        return self.run([text], 0, 1, False, False).flat()[0]

    def encode_flat(self, list texts, Py_ssize_t a, Py_ssize_t b) -> tuple:
        return self.run(texts, a, b, False, False).flat()

    def encode_full(self, str text) -> tuple:
        cdef Rows r = self.run([text], 0, 1, True, True)
        return ([x for x in r.ids], [x for x in r.starts], [x for x in r.ends], [x for x in r.words])

    def encode_many(self, list texts, Py_ssize_t a, Py_ssize_t b) -> list:
        return rows_to_lists(self.run(texts, a, b, False, False), self.ints)

    def encode_rows(self, list texts, Py_ssize_t a, Py_ssize_t b, bint offsets=True) -> Rows:
        return self.run(texts, a, b, offsets, True)

    def flat_job(self, list texts, bounds):
        """None: the general path has no shared job (encode_flat runs slice by slice)."""
        return None

    @property
    def fast_lane(self) -> bool:
        """Whether ids without offsets go through the memo of chunks between spaces (see pipeline.hpp)."""
        return self.p.fast_lane

    @property
    def utf8_ids(self) -> bool:
        """Whether ids without offsets (with word numbers or not) skip the alignments: normalized and
        pre-tokenized as UTF-8 (pipeline_utf8.hpp, pipeline_ids.hpp), as the build was told
        (tokkit/tokenizer/plan.py's utf8_lane: off where a step needs code points throughout, such as
        a Python pattern in the normalizer, BertNormalizer, an added token matched on the normalized text).

        >>> enc = PipelineEncoder.build(2, [], [{"kind": PreKind.P_WHITESPACE_SPLIT}],
        ...     {"kind": ModelKind.M_WORDLEVEL, "unk_id": 0, "tokens": token_blob(["[UNK]", "a"])}, [], utf8_ids=True)
        >>> enc.utf8_ids, enc.encode(" a  b") == enc.encode_full(" a  b")[0]
        (True, True)
        """
        return self.p.utf8_ids

    @property
    def cuts_at_metaspace(self) -> bool:
        """Whether the model sees pieces cut before each U+2581 (its description's cut_at_metaspace)."""
        return self.p.cut_before

    def inspect(self, str text, bint pre_tokenize=True) -> list:
        """The normalized text (one piece) or its pre-tokenized pieces, each as (string, [(start, end) per
        char]): what the compiled normalizer and pre-tokenizer make of `text`, for tests against the twins."""
        cdef ScratchBox box = self.take()
        cdef vector[uint32_t] chars
        cdef vector[int32_t] starts, ends, piece_ends
        cps = _u32(text)
        try:
            if not inspect(self.p[0], <const uint32_t*>(<size_t>cps.ctypes.data), len(cps), pre_tokenize, box.s[0],
                           chars, starts, ends, piece_ends, <void*>box):
                raise box.error
        finally:
            self.pool.append(box)
        out, a = [], 0
        for b in piece_ends:
            out.append(("".join(map(chr, chars[a:b])), list(zip(starts[a:b], ends[a:b]))))
            a = b
        return out

    def clear_memos(self):
        """Drop every thread's memo of pieces and chunks: their memory comes back, and the next calls
        start cold (what a first pass over new text costs)."""
        self.pool = []
