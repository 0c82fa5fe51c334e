# The C-level contract of tokkit's text kernels, for other .pyx modules:
#
#     from tokkit._text cimport TextView, text_view, text_at, Piece, BertOptions, bert_pieces, gpt2_pieces
#
# Everything here is thread-safe: the Unicode tables are built once at import and only read after,
# so `bert_pieces` / `gpt2_pieces` may run inside `with nogil:` on several threads at once.
# Both functions APPEND to their output vectors (clear them yourself between texts if you want).
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

cdef inline Py_UCS4 text_at(TextView v, Py_ssize_t i) noexcept nogil:
    if v.kind == 1:
        return (<const unsigned char*>v.data)[i]
    if v.kind == 2:
        return (<const unsigned short*>v.data)[i]
    return (<const Py_UCS4*>v.data)[i]

# Write code point c as UTF-8 into out (room for 4 bytes); returns the number of bytes written.
# Lone surrogates are written as their 3-byte form (like Python's "surrogatepass").
cdef inline int utf8_put(Py_UCS4 ch, unsigned char* out) noexcept nogil:
    cdef unsigned int c = ch
    if c < 0x80:
        out[0] = <unsigned char>c
        return 1
    if c < 0x800:
        out[0] = <unsigned char>(0xC0 | (c >> 6))
        out[1] = <unsigned char>(0x80 | (c & 0x3F))
        return 2
    if c < 0x10000:
        out[0] = <unsigned char>(0xE0 | (c >> 12))
        out[1] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
        out[2] = <unsigned char>(0x80 | (c & 0x3F))
        return 3
    out[0] = <unsigned char>(0xF0 | (c >> 18))
    out[1] = <unsigned char>(0x80 | ((c >> 12) & 0x3F))
    out[2] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
    out[3] = <unsigned char>(0x80 | (c & 0x3F))
    return 4

# BertNormalizer + BertPreTokenizer over text[0:text.length].
# Appends the normalized code points to `norm`, and for each of them its original span
# (orig_start[k], orig_end[k]: code-point offsets into text; an inserted or expanded character gets
# the span of the character it came from) and appends one Piece per pre-token.
# Piece.start/end follow tokenizers: start = orig_start of the piece's first normalized character,
# end = orig_end of its last, so a removed character is covered only when it lies inside the piece.
cdef void bert_pieces(TextView text, const BertOptions* opts, vector[Py_UCS4]& norm,
                      vector[Py_ssize_t]& orig_start, vector[Py_ssize_t]& orig_end,
                      vector[Piece]& pieces) noexcept nogil

# Pieces of the GPT-2 pattern over text[begin:end] (as regex.findall on that slice; the pattern's
# look-ahead does not see past `end`). Appends them with norm_start/norm_end equal to start/end.
cdef void gpt2_pieces(TextView text, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& pieces) noexcept nogil
