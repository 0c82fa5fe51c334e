# The compiled encoder's C-level layout (its kernels and Encoder.build are in encode.pyx).
cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp cimport bool
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector
from tokkit._native.text cimport TextView, Piece, BertOptions, Gpt2Classes, PatternClasses
from tokkit._native.encode_tables cimport (AddedPasses, AddedSpan, AddedTokens, FlagMap, StrMap, PairMap, Tok,
                                          TokenMemo, TokenTable)
from tokkit._native.rows cimport Rows
from tokkit._native.short_keys cimport PieceEntry, PieceKey, PieceTable

cdef extern from "bert_words.hpp" namespace "tokkit" nogil:
    cdef cppclass BertWords:  # BERT's ASCII words -> WordPiece ids through the piece table, in one pass
        void init(const uint8_t* act, const uint8_t* out, const TokenTable& first, const TokenTable& cont, int32_t unk,
                  int32_t max_chars)
        bool usable()
        int set_mode(int mode)
        size_t run[Unit](const Unit* p, size_t i, size_t end, size_t readable, PieceTable& table, vector[int32_t]& ids,
                         vector[Tok]& toks, int32_t* words, bool* oom)

cdef enum:
    SHORT_BYTES = 16    # longest piece (UTF-8 bytes) the piece table holds


@cython.final
cdef class Scratch:
    # Buffers one thread reuses from text to text (never shared between threads).
    cdef vector[Py_UCS4] norm
    cdef vector[Py_ssize_t] ostart, oend
    cdef vector[Piece] pieces
    cdef vector[char] buf
    cdef vector[int32_t] cpos, bpos
    cdef vector[Tok] toks                # a piece's symbols or tokens, (id, start, end) within it
    cdef TokenMemo cache                 # merged BPE pieces, or WordPiece words split into tokens
    cdef PieceTable pieces_seen          # UTF-8 piece (or BERT word) of up to 16 bytes -> ids (id-only outputs)
    cdef uint8_t* utf8                   # a text's UTF-8 (byte-level id-only path), utf8_cap bytes
    cdef size_t utf8_cap


@cython.final
cdef class Encoder:
    cdef int kind                       # WORDPIECE, CHARBPE or BYTELEVEL
    cdef BertOptions opts
    cdef uint8_t bert_act[128]          # what BERT normalization does with each ASCII character ...
    cdef uint8_t bert_out[128]          # ... and the character it keeps (text.pxd, bert_ascii_actions)
    cdef BertWords bert_words           # the WordPiece id-only path's ASCII words (bert_words.hpp)
    cdef StrMap vocab, cont             # token bytes -> id; WordPiece continuations without their prefix
    cdef PairMap merges
    cdef int32_t unk_id, max_chars, max_token_chars
    cdef Py_ssize_t max_token_bytes        # UTF-8 bytes of the longest token (an upper bound on any piece that is one)
    cdef int32_t byte_ids[256]
    cdef vector[char] direct, suffix    # direct[id]: BPE of the token's own bytes gives back that token
    cdef AddedTokens added              # added tokens, found in one pass (added_tokens.hpp)
    cdef bint split_specials            # split_special_tokens: special tokens are ordinary text
    cdef bint utf8_ids                  # the planner's route for ids without offsets: the text's UTF-8
    cdef FlagMap flags                  # whitespace and word chars for the added tokens' flags ...
    cdef object flag_tables             # ... in these arrays (tokkit._native.pipeline_tables), kept alive
    cdef Gpt2Classes classes            # GPT-2 classes for the UTF-8 scanner
    cdef PatternClasses pattern_classes # the classes of the other families' scanners (pattern_scan.hpp)
    cdef int family                     # the byte-level pattern's scanner family (FAMILY_GPT2 and others)
    cdef size_t piece_table_slots       # the most slots a thread's piece table grows to
    cdef object pattern                 # compiled custom pattern (byte-level), or None
    cdef tuple ints                     # ints[i] is i: list building reuses these objects
    cdef list pool                      # idle Scratch objects, each with a warm piece cache

    cdef bint next_added(self, TextView t, AddedPasses& cur, AddedSpan* m) noexcept nogil
    cdef bint reads_utf8(self) noexcept nogil
    cdef void encode_text(self, TextView t, Scratch s, Rows out) noexcept nogil
    cdef void encode_str_utf8(self, TextView t, Scratch s, Rows out) noexcept nogil
    cdef void encode_ids(self, TextView t, Scratch s, Rows out) noexcept nogil
    cdef bint utf8_of_one(self, str text, Scratch s, Rows out)
    cdef utf8_numpy(self, const uint8_t* p, Py_ssize_t n)
    cdef void utf8_row(self, const uint8_t* p, Py_ssize_t n, Scratch s, Rows out)
    cdef void encode_utf8(self, const uint8_t* p, Py_ssize_t n, Scratch s, Rows out) noexcept nogil
    cdef Py_ssize_t stage_pieces(self, const uint8_t* p, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n,
                                 Scratch s, size_t* ends, PieceKey* keys) noexcept nogil
    cdef void pieces_utf8(self, const uint8_t* p, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n, Scratch s,
                          Rows out) noexcept nogil
    cdef void piece_miss(self, const uint8_t* p, Py_ssize_t a, Py_ssize_t e, PieceKey key, Scratch s,
                         Rows out) noexcept nogil
    cdef int32_t family_segment(self, TextView t, Py_ssize_t a, Py_ssize_t b, int32_t word, Scratch s,
                                Rows out) noexcept nogil
    cdef int32_t encode_segment(self, TextView t, Py_ssize_t a, Py_ssize_t b, int32_t word, Scratch s,
                                Rows out) noexcept nogil
    cdef int32_t bert_segment(self, TextView t, Py_ssize_t a, Py_ssize_t b, int32_t word, Scratch s,
                              Rows out) noexcept nogil
    cdef void ascii_word(self, const void* u, int kind, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n, uint64_t w0,
                         uint64_t w1, int32_t word, Scratch s, Rows out) noexcept nogil
    cdef bint fill_utf8(self, Scratch s, TextView t, const Py_UCS4* cps, Py_ssize_t a, Py_ssize_t b) noexcept nogil
    cdef bint fill_cpos(self, Scratch s) noexcept nogil
    cdef void wordpiece(self, Scratch s, Rows out, Py_ssize_t na, Py_ssize_t nb, int32_t word,
                        Py_ssize_t base) noexcept nogil
    cdef void wp_word(self, Scratch s, Rows out, Py_ssize_t na, Py_ssize_t nb, int32_t word,
                      Py_ssize_t base) noexcept nogil
    cdef void push_norm(self, Scratch s, Rows out, int32_t idx, Py_ssize_t a, Py_ssize_t b, int32_t word,
                        Py_ssize_t base) noexcept nogil
    cdef void model_via_table(self, Scratch s, Rows out, Py_ssize_t a, Py_ssize_t b, int32_t word,
                              Py_ssize_t base) noexcept nogil
    cdef void run_model(self, Scratch s, Rows out, Py_ssize_t a, Py_ssize_t b, int32_t word,
                        Py_ssize_t base) noexcept nogil
    cdef void bpe_piece(self, Scratch s, Rows out, TextView t, const Py_UCS4* cps, Py_ssize_t a, Py_ssize_t b,
                        int32_t word, Py_ssize_t base) noexcept nogil
    cdef void bpe_bytes(self, Scratch s, Rows out, Py_ssize_t a, Py_ssize_t b, int32_t word,
                        Py_ssize_t base) noexcept nogil
    cdef void emit(self, Scratch s, Rows out, int32_t idx, Py_ssize_t sb, Py_ssize_t eb, Py_ssize_t a,
                          Py_ssize_t b, int32_t word, Py_ssize_t base, bint charbpe) noexcept nogil
    cdef bint symbolize(self, Scratch s, Py_ssize_t nb) noexcept nogil
    cdef void encode_pieces(self, TextView t, Scratch s, Rows out) noexcept nogil
    cdef prepare_regex(self, str text, TextView t, Scratch s)
    cdef Scratch take_scratch(self)
    cdef Rows run_many(self, list texts, Py_ssize_t a, Py_ssize_t b, bint with_offsets, bint with_words=*)
    cdef Rows run_with(self, Scratch s, list texts, Py_ssize_t a, Py_ssize_t b, bint with_offsets,
                       bint with_words)
    cdef void compute_direct(self, bytes blob, const int64_t[::1] bounds, const uint8_t[::1] ok, bint ignore_merges)
