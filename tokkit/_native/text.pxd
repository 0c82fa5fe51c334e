# The C-level contract of tokkit's text kernels, for other .pyx modules:
#
#     from tokkit._native.text cimport TextView, text_view, text_at, Piece, BertOptions, bert_pieces, gpt2_pieces
#
# Everything here is thread-safe: the Unicode tables are built once at import and only read after,
# so `bert_pieces` / `gpt2_pieces` may run inside `with nogil:` on several threads at once.
# Both functions APPEND to their output vectors (clear them yourself between texts if you want).
from cpython.object cimport PyObject
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

cdef struct Piece:
    Py_ssize_t norm_start, norm_end   # range in the normalized code-point buffer (absolute index in `norm`)
    Py_ssize_t start, end             # code-point offsets into the original text, as tokenizers reports them

cdef struct BertOptions:
    bint clean_text, handle_chinese_chars, strip_accents, lowercase   # strip_accents already resolved (None -> lowercase)

# A str's code points without copying (PEP 393 kind 1/2/4). Valid while the str is alive; usable without the GIL.
cdef struct TextView:
    const void* data
    int kind
    Py_ssize_t length

cdef TextView text_view(str s) except *

cdef extern from "Python.h":
    const void* str_data "PyUnicode_DATA"(PyObject* s) nogil
    int str_kind "PyUnicode_KIND"(PyObject* s) nogil
    Py_ssize_t str_length "PyUnicode_GET_LENGTH"(PyObject* s) nogil

# The view of a str reached through a borrowed pointer, taken without the GIL: the str must be an
# exact, ready str that something else keeps alive (tokkit._native.text_api.text_lengths checks a
# batch's texts and makes each one ready).
cdef inline TextView text_view_of(PyObject* s) noexcept nogil:
    cdef TextView v
    v.data = str_data(s)
    v.kind = str_kind(s)
    v.length = str_length(s)
    return v

cdef inline Py_UCS4 text_at(TextView v, Py_ssize_t i) noexcept nogil:
    if v.kind == 1:
        return (<const unsigned char*>v.data)[i]
    if v.kind == 2:
        return (<const unsigned short*>v.data)[i]
    return (<const Py_UCS4*>v.data)[i]

# UTF-8 (utf8.hpp, the one home of reading and writing it): utf8_encode writes code point c into out
# (room for 4 bytes) and returns the bytes written, lone surrogates in their 3-byte form (Python's
# "surrogatepass"); utf8_check gives -1 for valid UTF-8 (Python's strict decoder) or the offset of the
# first invalid sequence; utf8_decode writes valid UTF-8's code points into out (cleared first).
cdef extern from "utf8.hpp" namespace "tokkit" nogil:
    int utf8_encode(Py_UCS4 c, unsigned char* out)
    bint ascii_only(const unsigned char* p, size_t n)
    Py_ssize_t utf8_check(const unsigned char* p, size_t n)
    void utf8_decode(const unsigned char* p, size_t n, vector[uint32_t]& out)
    size_t utf8_skip(const unsigned char* p, size_t i, size_t n, size_t chars)
    size_t utf8_from_str(const void* data, int kind, size_t n, uint8_t* out)

# BertNormalizer + BertPreTokenizer over text[0:text.length].
# Appends the normalized code points to `norm`, and for each of them its original span
# (orig_start[k], orig_end[k]: code-point offsets into text; an inserted or expanded character gets
# the span of the character it came from, marks reordered by strip_accents' NFD follow tokenizers'
# positional alignments) and appends one Piece per pre-token. False when memory ran out: the outputs
# are then cut short anywhere and must not be read (the same for the scanners below).
# Piece.start/end follow tokenizers: start = orig_start of the piece's first normalized character,
# end = orig_end of its last, so a removed character is covered only when it lies inside the piece.
cdef bint bert_pieces(TextView text, const BertOptions* opts, vector[Py_UCS4]& norm,
                      vector[Py_ssize_t]& orig_start, vector[Py_ssize_t]& orig_end,
                      vector[Piece]& pieces) noexcept nogil

# BertNormalizer alone over c[0:n] (no pre-tokenizer): appends the normalized chars to `out` and,
# for each, the index of the char of c it comes from to `source` (bert_pieces' spans). The general
# path (pipeline_text.hpp) runs its BertNormalizer through this one.
cdef void bert_normalize(const uint32_t* c, size_t n, int clean_text, int handle_chinese_chars, int strip_accents,
                         int lowercase, vector[Py_UCS4]& out, vector[Py_ssize_t]& source) noexcept nogil

# What BERT normalization and pre-tokenization do with each ASCII character, for scanners that skip
# the general path on ASCII text: act[c] is BERT_WORD (out[c], lowercased if asked, joins the word),
# BERT_DROP (clean_text deletes it: it neither joins nor ends a word), BERT_SPLIT (ends the word) or
# BERT_PUNCT (ends the word and is a piece of its own, out[c]). ASCII characters never combine with
# their neighbours, so these are exact.
cdef enum:
    BERT_WORD = 0
    BERT_DROP = 1
    BERT_SPLIT = 2
    BERT_PUNCT = 3
cdef void bert_ascii_actions(const BertOptions* o, uint8_t* act, uint8_t* out) noexcept nogil

# The same pieces without the per-character spans (cheaper; Piece.start/end are still filled).
cdef bint bert_norm_pieces(TextView text, const BertOptions* opts, vector[Py_UCS4]& norm,
                           vector[Piece]& pieces) noexcept nogil

# Pieces of the GPT-2 pattern over text[begin:end] (as regex.findall on that slice; the pattern's
# look-ahead does not see past `end`). Appends them with norm_start/norm_end equal to start/end.
cdef bint gpt2_pieces(TextView text, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& pieces) noexcept nogil

# The same scanner with \p{L} / \p{N} / \s as tokenizers' own regex engine (Oniguruma) defines them:
# its Unicode is older, so ~17,000 recent letters and ~340 digits (e.g. U+323B0) are "other" there.
# tiktoken's engine has exactly these classes too (tested). Use this one to match tokenizers'
# ByteLevel pre-tokenizer and tiktoken exactly; gpt2_pieces matches the `regex` package.
cdef bint gpt2_pieces_tokenizers(TextView text, Py_ssize_t begin, Py_ssize_t end,
                                 vector[Piece]& pieces) noexcept nogil

# The per-code-point class tables gpt2_pieces_tokenizers and gpt2_pieces read (GPT-2 classes in the
# low three bits, 0x110000 entries), for the scanner over UTF-8 bytes below.
cdef const uint8_t* gpt2_tokenizers_classes() noexcept nogil
cdef const uint8_t* gpt2_regex_classes() noexcept nogil

# The GPT-2 pattern's classes over UTF-8 bytes (gpt2_utf8.hpp); gpt2_piece_ends (pattern_scan.hpp, below)
# finds the same pieces as gpt2_pieces*, many at a time in blocks. Gpt2Classes.init() takes one of the
# tables above.
cdef extern from "gpt2_utf8.hpp" namespace "tokkit" nogil:
    cdef cppclass Gpt2Classes:
        int mode
        void init(const uint8_t* per_code_point)
        int set_mode(int wanted)


# The class table of the cl100k / qwen2 / o200k scanners (pattern_scan.hpp's PAT_* bits per code point,
# 0x110000 entries), as tokenizers' regex engine defines the classes; PatternClasses.init() takes it.
cdef const uint8_t* pattern_tokenizers_classes() noexcept nogil

# Scanners for the byte-level pattern families (pattern_scan.hpp): the ends of up to `limit` pieces
# of p[a:end) (UTF-8) or u[a:end) (a str's code points), as tokenizers' Split with the family's
# pattern gives them. Usage:
#     from tokkit._native.text cimport (PatternClasses, pattern_piece_ends, pattern_piece_ends_units,
#                                       pattern_tokenizers_classes, FAMILY_CL100K, FAMILY_QWEN2, FAMILY_O200K)
#     cdef PatternClasses cls
#     cls.init(pattern_tokenizers_classes())
cdef extern from "pattern_scan.hpp" namespace "tokkit" nogil:
    enum:
        FAMILY_GPT2
        FAMILY_CL100K
        FAMILY_QWEN2
        FAMILY_O200K
    cdef cppclass PatternClasses:
        int mode
        void init(const uint8_t* per_code_point)
        int set_mode(int wanted)
    size_t gpt2_piece_ends(const Gpt2Classes& cls, const uint8_t* p, size_t a, size_t end, size_t n,
                           size_t* ends, size_t room)
    size_t pattern_piece_ends(const PatternClasses& cls, int family, const uint8_t* p, size_t a, size_t end,
                              size_t* ends, int limit)
    size_t pattern_piece_ends_units[Unit](const PatternClasses& cls, int family, const Unit* u, size_t a,
                                          size_t end, size_t* ends, int limit)
