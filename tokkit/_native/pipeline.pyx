"""The general compiled encode path: any supported normalizer, pre-tokenizer and model, composed.

The fast paths of encode.pyx cover BERT WordPiece, char BPE and byte-level BPE. Every other
tokenizer.json (Unigram, SentencePiece BPE, WordLevel, NFC or Precompiled normalizers, Metaspace...)
runs here: the loops over characters are C++ (pipeline_*.hpp), Python only builds the steps from
the components' JSON objects. Patterns that need a regex engine (a Split or Replace regex other
than the ones compiled in) call back into the `regex` package under its time limit.

>>> enc = PipelineEncoder.build(["<unk>", "\u2581a", "\u2581b", "a"], {"type": "Metaspace", "replacement": "\u2581",
...                             "prepend_scheme": "always", "split": True}, None,
...                             {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
...                              "vocab": [["<unk>", 0.0], ["\u2581a", -1.0], ["\u2581b", -2.0], ["a", -3.0]]}, [])
>>> enc.encode("a b")
[1, 2]
"""
from cpython.unicode cimport PyUnicode_FromKindAndData
from libc.stdint cimport int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.utility cimport pair
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np
import regex

from tokkit._native import regex_limit
from tokkit._native.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, QWEN2_PATTERN
from tokkit._native.pipeline_tables import pipeline_tables
from tokkit._native.rows import rows_to_lists
from tokkit._native.rows cimport Rows
from tokkit._native.text cimport (FAMILY_CL100K, FAMILY_O200K, FAMILY_QWEN2, Piece, TextView, gpt2_pieces_tokenizers,
                                  pattern_tokenizers_classes, text_at, text_view)
from tokkit.errors import TokkitError

cdef extern from "pipeline_build.hpp" namespace "tokkit::pipe" nogil:
    cdef cppclass Model:
        int kind
        int32_t unk_id
        cbool byte_fallback, fuse_unk, ignore_merges
        int32_t byte_ids[256]
        vector[double] scores
        double unk_score
        size_t max_input_chars
        string prefix, suffix
    cdef cppclass Pipeline:
        Model model
        cbool split_specials, cut_before, fast_lane
        uint32_t cut_char
    cdef cppclass Scratch:
        cbool unknown
    void add_norm(Pipeline& P, int kind, const uint32_t* pat, size_t npat, const uint32_t* content, size_t nc,
                  cbool left, cbool right, cbool collapse, int charsmap, int python)
    void add_bert_norm(Pipeline& P, cbool clean, cbool chinese, cbool strip, cbool lower)
    void add_pre(Pipeline& P, int kind, uint32_t replacement, int scheme, cbool split, const uint32_t* pat,
                 size_t npat, int behavior, cbool invert, cbool add_prefix_space, cbool use_regex, cbool individual,
                 int python, int family)
    int add_charsmap(Pipeline& P, const uint32_t* units, size_t n, const char* pool, size_t npool)
    void add_added(Pipeline& P, const uint32_t* c, size_t n, int32_t id, cbool single_word, cbool lstrip,
                   cbool rstrip, cbool normalized, cbool special)
    void model_token(Pipeline& P, const char* p, size_t n, int32_t id, cbool prefixes)
    void model_merge(Pipeline& P, int32_t a, int32_t b, int32_t rank, int32_t merged)
    void set_tables(Pipeline& P, const uint16_t* lower1, const uint32_t* lower2, const uint16_t* nfd1,
                    const uint32_t* nfd2, const uint16_t* nfkd1, const uint32_t* nfkd2, const uint32_t* pool,
                    const uint16_t* flags1, const uint16_t* flags2, const uint16_t* ccc1, const uint8_t* ccc2,
                    const uint64_t* ckeys, const uint32_t* cvals, size_t ncomp, const uint16_t* g1,
                    const uint16_t* g2)
    void set_callbacks(Pipeline& P, void* gpt2_fn, void* regex_fn)
    void set_pattern_classes(Pipeline& P, const uint8_t* per_code_point)
    cbool inspect(const Pipeline& P, const uint32_t* c, size_t n, cbool pre, Scratch& s, vector[uint32_t]& chars,
                  vector[int32_t]& starts, vector[int32_t]& ends, vector[int32_t]& piece_ends, void* pyctx)
    cbool fast_lane_ok(const Pipeline& P)
    cbool encode_ids(const Pipeline& P, const void* data, int kind, size_t n, Scratch& s, vector[int32_t]& ids,
                     void* pyctx)
    cbool encode_one(const Pipeline& P, const uint32_t* c, size_t n, Scratch& s, vector[int32_t]& ids,
                     vector[int32_t]& starts, vector[int32_t]& ends, vector[int32_t]& words,
                     cbool with_offsets, cbool with_words, void* pyctx)

# pipeline_text.hpp / pipeline_split.hpp / pipeline_model.hpp enums
cdef enum:
    N_NFD, N_NFKD, N_NFC, N_NFKC, N_LOWER, N_STRIP, N_STRIP_ACCENTS, N_REPLACE, N_PREPEND, N_PRECOMPILED, N_BERT, N_PYTHON, \
        N_NMT
cdef enum:
    P_METASPACE, P_SPLIT_STRING, P_SPLIT_GPT2, P_SPLIT_PYTHON, P_BYTELEVEL, P_WHITESPACE, P_WHITESPACE_SPLIT, \
        P_PUNCTUATION, P_DIGITS, P_BERT, P_SPLIT_FAMILY
cdef enum:
    M_UNIGRAM, M_BPE, M_WORDPIECE, M_WORDLEVEL

BEHAVIORS = {"Removed": 0, "Isolated": 1, "MergedWithPrevious": 2, "MergedWithNext": 3, "Contiguous": 4}
SCHEMES = {"always": 0, "first": 1, "never": 2}
SIMPLE_NORMS = {"NFD": N_NFD, "NFKD": N_NFKD, "NFC": N_NFC, "NFKC": N_NFKC, "Lowercase": N_LOWER,
                "StripAccents": N_STRIP_ACCENTS, "Nmt": N_NMT}
# Split patterns with a compiled scanner of their own (pattern_scan.hpp), by their text
FAMILIES = {CL100K_PATTERN: FAMILY_CL100K, QWEN2_PATTERN: FAMILY_QWEN2, O200K_PATTERN: FAMILY_O200K}
SIMPLE_PRES = {"Whitespace": P_WHITESPACE, "WhitespaceSplit": P_WHITESPACE_SPLIT, "BertPreTokenizer": P_BERT}
UNK_PENALTY = 10.0  # an unknown char scores this far below the lowest piece (as tokenizers' Unigram)


cdef void gpt2_scan(const uint32_t* c, size_t n, vector[pair[size_t, size_t]]& out) noexcept nogil:
    """The GPT-2 pattern's pieces of c[0:n] (tokenizers' classes)."""
    cdef TextView t
    cdef vector[Piece] pieces
    cdef size_t k
    t.data = c
    t.kind = 4
    t.length = n
    gpt2_pieces_tokenizers(t, 0, n, pieces)
    for k in range(pieces.size()):
        out.push_back(pair[size_t, size_t](pieces[k].start, pieces[k].end))


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


cdef class PipelineEncoder:
    """A Pipeline built from tokenizer.json parts; read-only after build, so threads share it."""
    cdef Pipeline* p
    cdef list pool          # idle ScratchBox objects
    cdef list patterns      # the finders of the patterns the callbacks run: text -> [(start, end)]
    cdef object finder      # pattern object -> finder (see build)
    cdef object charsmap    # precompiled_charsmap (base64) -> (trie units, pool) (see build)
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
    def build(list vocab, pre_tokenizer, normalizer, dict model, list added, bint split_special_tokens=False,
              normalize_added=None, ranks=None, finder=None, charsmap=None):
        """A PipelineEncoder for `vocab` (tokens by id) and the JSON objects of the other parts.

        `added`: (content, id, single_word, lstrip, rstrip, normalized, special) tuples;
        `normalize_added`: a function giving a normalized token's matched form; `ranks`: a BPE's
        (left id, right id) -> (rank, merged id), as tokkit.tokenizer.models.BPE.ranks gives it;
        `finder`: {"Regex": source} -> a function giving the (start, end) matches of a text, for the
        Split and Replace patterns the compiled code does not cover; `charsmap`: a Precompiled
        normalizer's base64 blob -> (uint32 trie units, bytes pool), checked.
        """
        cdef PipelineEncoder e = PipelineEncoder.__new__(PipelineEncoder)
        e.ints = tuple(range(len(vocab)))
        e.finder = finder
        e.charsmap = charsmap
        e._set_tables()
        e._normalizer(normalizer)
        e._pre_tokenizer(pre_tokenizer)
        e._model(vocab, model, ranks)
        for content, idx, single, lstrip, rstrip, normalized, special in added:
            if normalized and normalize_added is not None:
                content = normalize_added(content)
            u = _u32(content)
            add_added(e.p[0], <const uint32_t*>(<size_t>u.ctypes.data), len(u), idx, single, lstrip, rstrip,
                      normalized, special)
        e.p.split_specials = split_special_tokens
        set_callbacks(e.p[0], <void*>gpt2_scan, <void*>regex_scan)
        set_pattern_classes(e.p[0], pattern_tokenizers_classes())
        e.p.fast_lane = fast_lane_ok(e.p[0])
        return e

    cdef _set_tables(self):
        t = pipeline_tables()
        self.tables = t
        cdef const uint16_t* ptr16[8]
        arrays = [t["lower"][0], t["nfd"][0], t["nfkd"][0], t["flags"][0], t["flags"][1], t["ccc"][0],
                  t["grapheme"][0], t["grapheme"][1]]
        for k, a in enumerate(arrays):
            ptr16[k] = <const uint16_t*>(<size_t>a.ctypes.data)
        set_tables(self.p[0], ptr16[0], <const uint32_t*>(<size_t>t["lower"][1].ctypes.data),
                   ptr16[1], <const uint32_t*>(<size_t>t["nfd"][1].ctypes.data),
                   ptr16[2], <const uint32_t*>(<size_t>t["nfkd"][1].ctypes.data),
                   <const uint32_t*>(<size_t>t["pool"].ctypes.data), ptr16[3], ptr16[4], ptr16[5],
                   <const uint8_t*>(<size_t>t["ccc"][1].ctypes.data),
                   <const uint64_t*>(<size_t>t["compose_keys"].ctypes.data),
                   <const uint32_t*>(<size_t>t["compose_values"].ctypes.data), len(t["compose_keys"]),
                   ptr16[6], ptr16[7])

    # ------------------------------------------------------------------------------ building
    cdef _normalizer(self, obj):
        if obj is None:
            return
        kind = obj["type"]
        if kind == "Sequence":
            for part in obj["normalizers"]:
                self._normalizer(part)
            return
        empty = np.zeros(1, dtype=np.uint32)
        pat, content = empty[:0], empty[:0]
        left = right = collapse = False
        charsmap = python = -1
        if kind in SIMPLE_NORMS:
            code = SIMPLE_NORMS[kind]
        elif kind == "Strip":
            code, left, right = N_STRIP, obj.get("strip_left", True), obj.get("strip_right", True)
        elif kind == "Prepend":
            code, content = N_PREPEND, _u32(obj["prepend"])
        elif kind == "Replace":
            code, content = N_REPLACE, _u32(obj["content"])
            pattern = obj["pattern"]
            if "String" in pattern:
                pat = _u32(pattern["String"])
            elif pattern["Regex"] == " {2,}":
                collapse = True
            else:
                code, python = N_PYTHON, self._pattern(pattern)
        elif kind == "Precompiled":
            if self.charsmap is None:
                raise TokkitError("a Precompiled normalizer needs build(charsmap=...), the parser of its blob")
            units, pool = self.charsmap(obj["precompiled_charsmap"])
            units = np.ascontiguousarray(units, dtype=np.uint32)
            self.keep.append(units)
            charsmap = add_charsmap(self.p[0], <const uint32_t*>(<size_t>units.ctypes.data), len(units), pool,
                                    len(pool))
            code = N_PRECOMPILED
        elif kind == "BertNormalizer":
            lower = obj.get("lowercase", True)
            strip = obj.get("strip_accents")
            add_bert_norm(self.p[0], obj.get("clean_text", True), obj.get("handle_chinese_chars", True),
                          lower if strip is None else strip, lower)
            return
        else:
            raise TokkitError(f"normalizer type {kind!r} is not supported")
        self.keep += [pat, content]
        add_norm(self.p[0], code, <const uint32_t*>(<size_t>pat.ctypes.data), len(pat),
                 <const uint32_t*>(<size_t>content.ctypes.data), len(content), left, right, collapse, charsmap, python)

    cdef int _pattern(self, dict pattern) except -1:
        """Index of a finder for a {"Regex": ...} pattern: the `finder` given to build, else the
        `regex` package's matches (non-empty ones) under regex_limit's time limit."""
        if self.finder is not None:
            self.patterns.append(self.finder(pattern))
            return len(self.patterns) - 1
        try:
            compiled = regex.compile(pattern["Regex"])
        except (regex.error, RecursionError, OverflowError) as exc:
            raise TokkitError(f"pattern {pattern['Regex']!r} is not a valid regex ({exc})") from None
        self.patterns.append(lambda text: [m.span() for m in regex_limit.finditer(compiled, text, 0, len(text))
                                           if m.end() > m.start()])
        return len(self.patterns) - 1

    cdef _pre_tokenizer(self, obj):
        if obj is None:
            return
        kind = obj["type"]
        if kind == "Sequence":
            for part in obj["pretokenizers"]:
                self._pre_tokenizer(part)
            return
        empty = np.zeros(0, dtype=np.uint32)
        pat = empty
        replacement, scheme, split, behavior, invert = 0x2581, 0, True, 1, False
        add_prefix, use_regex, individual, python, family = False, True, False, -1, 0
        if kind in SIMPLE_PRES:
            code = SIMPLE_PRES[kind]
        elif kind == "Metaspace":
            code, replacement = P_METASPACE, ord(obj["replacement"])
            scheme, split = SCHEMES[obj.get("prepend_scheme", "always")], obj.get("split", True)
        elif kind == "Split":
            behavior, invert = BEHAVIORS[obj["behavior"]], obj.get("invert", False)
            pattern = obj["pattern"]
            if "String" in pattern:
                code, pat = P_SPLIT_STRING, _u32(pattern["String"])
            elif pattern["Regex"] == GPT2_PATTERN:
                code = P_SPLIT_GPT2
            elif pattern["Regex"] in FAMILIES:
                code, family = P_SPLIT_FAMILY, FAMILIES[pattern["Regex"]]
            else:
                code, python = P_SPLIT_PYTHON, self._pattern(pattern)
        elif kind == "ByteLevel":
            code, add_prefix, use_regex = P_BYTELEVEL, obj.get("add_prefix_space", True), obj.get("use_regex", True)
        elif kind == "CharDelimiterSplit":
            code, pat, behavior = P_SPLIT_STRING, _u32(obj["delimiter"]), BEHAVIORS["Removed"]
        elif kind == "Punctuation":
            code, behavior = P_PUNCTUATION, BEHAVIORS[obj.get("behavior", "Isolated")]
        elif kind == "Digits":
            code, individual = P_DIGITS, obj.get("individual_digits", False)
        else:
            raise TokkitError(f"pre-tokenizer type {kind!r} is not supported")
        self.keep.append(pat)
        add_pre(self.p[0], code, replacement, scheme, split, <const uint32_t*>(<size_t>pat.ctypes.data), len(pat),
                behavior, invert, add_prefix, use_regex, individual, python, family)

    cdef _model(self, list vocab, dict model, ranks):
        kind = model["type"]
        cdef Model* m = &self.p.model
        m.kind = {"Unigram": M_UNIGRAM, "BPE": M_BPE, "WordPiece": M_WORDPIECE, "WordLevel": M_WORDLEVEL}[kind]
        ids = {}
        for i, tok in enumerate(vocab):
            if tok is not None:
                ids.setdefault(tok, i)
        for i in range(256):
            m.byte_ids[i] = ids.get(f"<0x{i:02X}>", -1)
        if kind == "Unigram":
            pieces = model["vocab"]
            for i, (tok, score) in enumerate(pieces):
                m.scores.push_back(score)
            for i in range(len(pieces), len(vocab)):
                m.scores.push_back(0.0)
            m.unk_score = min(score for _, score in pieces) - UNK_PENALTY if pieces else -UNK_PENALTY
            unk = model.get("unk_id")
            m.unk_id = -1 if unk is None else unk
            m.byte_fallback = model.get("byte_fallback", False)
            for i, (tok, _) in enumerate(pieces):
                u = tok.encode("utf-8", "surrogatepass")
                model_token(self.p[0], u, len(u), i, True)
            self._cut_when_safe(pieces and [t for t, _ in pieces], False)
            return
        # the model's own tokens only: an added token placed past them is found by the added-token
        # matching, never produced by the model
        for tok, i in model["vocab"].items():
            u = tok.encode("utf-8", "surrogatepass")
            model_token(self.p[0], u, len(u), i, False)
        unk = model.get("unk_token")
        m.unk_id = ids.get(unk, -1) if unk is not None else -1
        if kind == "WordPiece":
            self._prefix(model.get("continuing_subword_prefix", "##"), None)
            m.max_input_chars = model.get("max_input_chars_per_word", 100)
        elif kind == "BPE":
            self._prefix(model.get("continuing_subword_prefix"), model.get("end_of_word_suffix"))
            m.byte_fallback = model.get("byte_fallback", False)
            m.fuse_unk = model.get("fuse_unk", False)
            m.ignore_merges = model.get("ignore_merges", False)
            if ranks is None:
                ranks = {(ids[a], ids[b]): (rank, ids[a + b]) for rank, (a, b) in enumerate(
                    (m.split(" ", 1) if isinstance(m, str) else m) for m in model.get("merges") or ())}
            for (a, b), (rank, merged) in ranks.items():
                model_merge(self.p[0], a, b, rank, merged)
            if not (m.ignore_merges or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix")):
                self._cut_when_safe(vocab, m.byte_fallback)

    cdef _prefix(self, prefix, suffix):
        self.p.model.prefix = (prefix or "").encode("utf-8", "surrogatepass")
        self.p.model.suffix = (suffix or "").encode("utf-8", "surrogatepass")

    cdef _cut_when_safe(self, tokens, bint byte_fallback):
        """Cut pieces before each U+2581 when no token holds one past its first char and the char
        itself is a token: no piece of the model can then cross such a place (nor join unknowns
        across it), so the memo sees words instead of whole lines (a Metaspace without split, or
        a Replace(" ", "\u2581") with no pre-tokenizer)."""
        if not tokens or "\u2581" not in tokens:
            return
        if any("\u2581" in t[1:] for t in tokens):
            return
        self.p.cut_before = True
        self.p.cut_char = 0x2581

    # ------------------------------------------------------------------------------ encoding
    cdef ScratchBox take(self):
        cdef ScratchBox box
        try:
            box = self.pool.pop()
        except IndexError:
            box = ScratchBox()
            box.patterns = self.patterns
        box.error = None
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
        finally:
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

    @property
    def fast_lane(self) -> bool:
        """Whether ids without offsets go through the memo of chunks between spaces (see pipeline.hpp)."""
        return self.p.fast_lane

    @property
    def cuts_at_metaspace(self) -> bool:
        """Whether the model sees pieces cut before each U+2581 (see _cut_when_safe)."""
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
