// The GPT-2 pattern's character classes over UTF-8 bytes, and its block classifiers.
//
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// The scan itself is written once, over either text, in pattern_scan.hpp (gpt2_piece_end); this
// header gives it the UTF-8 the encoder keys its piece cache on. ASCII bytes are classed through a
// 256-entry table in which every byte >= 0x80 carries NEEDS_DECODE; only those decode a
// code point and read the full per-code-point class table. The input must be UTF-8 as tokkit writes
// it (lone surrogates in their 3-byte form are fine): the decoder trusts lead bytes.
//
// Runs (a word's letters, a number's digits, a stretch of spaces) are measured in blocks: a block's
// bytes are classed all at once and the first byte outside the class is found with a count of
// trailing zeros, so a run costs no branch per byte. Three ways to class a block, picked at run time
// (Gpt2Classes::mode): SSE2 over 16 bytes (x86-64 always has it), SWAR over 8 bytes held in a 64-bit
// word (any little-endian machine), or the byte table one byte at a time (any machine). The first
// two hard-code the ASCII classes, so init() checks them against the table and uses them only when
// they agree: [A-Za-z] letters, [0-9] digits, [\t\n\v\f\r ] spaces, every other ASCII byte "other".
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "utf8.hpp"  // and TOKKIT_HAVE_SSE2
#if defined(_MSC_VER)
#include <intrin.h>
#endif

namespace tokkit {

enum : uint8_t { GPT2_L = 1, GPT2_N = 2, GPT2_S = 4, NEEDS_DECODE = 0x80 };
enum : int { SCAN_BYTES = 0, SCAN_SWAR = 1, SCAN_SSE2 = 2 };

inline bool little_endian() {
    const uint16_t one = 1;
    uint8_t first;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

// The class a byte has under the block classifiers' fixed ASCII rules (for init()'s check).
inline uint8_t fixed_ascii_class(int c) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return GPT2_L;
    if (c >= '0' && c <= '9') return GPT2_N;
    if (c == ' ' || (c >= 9 && c <= 13)) return GPT2_S;
    return 0;
}

inline int count_trailing_zeros(uint64_t x) {  // x != 0
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#elif defined(_MSC_VER) && defined(_M_X64)
    unsigned long i;
    _BitScanForward64(&i, x);
    return (int)i;
#else
    int n = 0;
    while (!(x & 1)) {
        x >>= 1;
        ++n;
    }
    return n;
#endif
}

// The fastest way to class bytes this machine allows; the block classifiers only where the table's
// ASCII classes are the fixed ones they hard-code (`fixed`).
inline int best_scan_mode(bool fixed) {
    int best = SCAN_BYTES;
    if (fixed && little_endian()) best = SCAN_SWAR;
#ifdef TOKKIT_HAVE_SSE2
    if (fixed) best = SCAN_SSE2;
#endif
    return best;
}

// `wanted` if it is at most `best` and this machine runs it, else `best`.
inline int allowed_scan_mode(int wanted, int best) {
    return wanted >= 0 && wanted <= best && !(wanted == SCAN_SWAR && !little_endian()) ? wanted : best;
}

struct Gpt2Classes {
    uint8_t byte[256];        // class of an ASCII byte; NEEDS_DECODE for bytes >= 0x80
    const uint8_t* code;      // class of every code point (low three bits), 0x110000 entries
    int mode;                 // SCAN_SSE2, SCAN_SWAR or SCAN_BYTES
    int best;                 // the fastest mode this machine and table allow

    void init(const uint8_t* per_code_point) {
        code = per_code_point;
        bool fixed = true;
        for (int c = 0; c < 256; ++c) {
            byte[c] = c < 0x80 ? (per_code_point[c] & 7) : NEEDS_DECODE;
            if (c < 0x80 && byte[c] != fixed_ascii_class(c)) fixed = false;
        }
        mode = best = best_scan_mode(fixed);
    }

    // Use `wanted` if this machine and table allow it, else the best mode they do; returns the mode.
    int set_mode(int wanted) { return mode = allowed_scan_mode(wanted, best); }

    // Class of the character at p[i]; *next receives the index after it.
    inline uint8_t at(const uint8_t* p, size_t i, size_t* next) const {
        uint8_t c = p[i];
        uint8_t k = byte[c];
        if (k != NEEDS_DECODE) {
            *next = i + 1;
            return k;
        }
        const uint32_t cp = utf8_decode_at(p, i, next);
        return cp < 0x110000 ? (code[cp] & 7) : 0;
    }
};

// Bytes (bit 7 of each) of the 8 in w that are ASCII and in class k (a single class bit or 0).
inline uint64_t swar_in_class(uint64_t w, uint8_t k) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    const uint64_t ascii = ~w & highs;
    const uint64_t low = w & ~highs;  // bit 7 cleared: adding below 0x80 cannot carry into the next byte
    auto at_least = [&](uint64_t x, uint8_t lo) { return (x + ones * (uint8_t)(0x80 - lo)) & highs; };
    uint64_t in;
    if (k == GPT2_L) {
        uint64_t x = low | (ones * 0x20);
        in = at_least(x, 'a') & ~at_least(x, 'z' + 1);
    } else if (k == GPT2_N) {
        in = at_least(low, '0') & ~at_least(low, '9' + 1);
    } else {
        uint64_t space = (at_least(low, ' ') & ~at_least(low, ' ' + 1)) | (at_least(low, 9) & ~at_least(low, 14));
        if (k == GPT2_S) {
            in = space;
        } else {
            uint64_t x = low | (ones * 0x20);
            uint64_t letter = at_least(x, 'a') & ~at_least(x, 'z' + 1);
            uint64_t digit = at_least(low, '0') & ~at_least(low, '9' + 1);
            in = ~(space | letter | digit) & highs;
        }
    }
    return in & ascii;
}

#ifdef TOKKIT_HAVE_SSE2
// Bits (one per byte) of the 16 at p that are ASCII and in class k.
inline uint32_t sse2_in_class(const uint8_t* p, uint8_t k) {
    const __m128i v = _mm_loadu_si128((const __m128i*)p);
    auto at_most = [](__m128i x, int hi) { return _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8((char)hi)), x); };
    const __m128i lower = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
    const __m128i digit = at_most(_mm_sub_epi8(v, _mm_set1_epi8('0')), 9);
    const __m128i letter = at_most(lower, 25);
    __m128i in;
    if (k == GPT2_L) {
        in = letter;
    } else if (k == GPT2_N) {
        in = digit;
    } else {
        __m128i space = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                     at_most(_mm_sub_epi8(v, _mm_set1_epi8(9)), 4));
        if (k == GPT2_S) {
            in = space;
        } else {  // other: ASCII and none of the three (the sign bit marks non-ASCII)
            __m128i none = _mm_or_si128(_mm_or_si128(space, letter), _mm_or_si128(digit, _mm_cmplt_epi8(v, _mm_setzero_si128())));
            in = _mm_xor_si128(none, _mm_set1_epi8((char)0xFF));
        }
    }
    return (uint32_t)_mm_movemask_epi8(in);
}
#endif

// End of the run of class-k characters that starts at p[j] (j <= end): the first character at or
// after j outside class k, or `end`. p holds n bytes (end <= n): blocks may read past `end`, never
// past n.
inline size_t run_end(const Gpt2Classes& cls, const uint8_t* p, size_t j, size_t end, size_t n, uint8_t k) {
    while (j < end) {
        uint8_t b = cls.byte[p[j]];
        if (b == NEEDS_DECODE) {  // one non-ASCII character, classed through the full table
            size_t after;
            if (cls.at(p, j, &after) != k) return j;
            j = after;
            continue;
        }
        if (b != k) return j;
#ifdef TOKKIT_HAVE_SSE2
        if (cls.mode == SCAN_SSE2 && j + 16 <= n) {
            uint32_t stop = ~sse2_in_class(p + j, k) & 0xFFFFu;
            if (!stop) {
                j += 16;
                continue;
            }
            j += count_trailing_zeros(stop);
            continue;  // a non-ASCII byte there is looked at above
        }
#endif
        if (cls.mode == SCAN_SWAR && j + 8 <= n) {
            uint64_t w;
            std::memcpy(&w, p + j, 8);
            uint64_t stop = ~swar_in_class(w, k) & 0x8080808080808080ULL;
            if (!stop) {
                j += 8;
                continue;
            }
            j += count_trailing_zeros(stop) >> 3;
            continue;
        }
        ++j;
    }
    return end;
}

// Length of 's 't 're 've 'm 'll 'd at u[i] (an apostrophe), or 0: case-sensitive, unlike cl100k's.
// Over UTF-8 or a str's code units: what follows an ASCII apostrophe compares as characters in both.
template <class Unit>
inline size_t gpt2_contraction(const Unit* u, size_t i, size_t end) {
    if (i + 1 >= end) return 0;
    const uint32_t d = u[i + 1];
    if (d == 's' || d == 't' || d == 'm' || d == 'd') return 2;
    if (i + 2 >= end) return 0;
    const uint32_t e = u[i + 2];
    return ((d == 'r' || d == 'v') && e == 'e') || (d == 'l' && e == 'l') ? 3 : 0;
}

// ---- Many pieces at once: 64 bytes of ASCII classed in one go
//
// From a known piece start a, the starts of the next pieces inside p[a:a+64] follow from the classes
// of the bytes alone (bit i stands for byte a+i; prev() moves a bit one byte later, next() one
// earlier):
//   change   = a byte whose class (letter, digit, space, other) differs from the byte before;
//   attached = a byte right after a ' ' that is not itself a space: " ?" glued that space to it;
//   giveback = the last space of a run of two or more that a non-space follows: \s+(?!\S) left it;
//   starts   = (change & ~attached) | giveback | a;
// then a contraction ('s 't 're 've 'm 'll 'd) at a start holds the 1 or 2 letters after it and
// starts a piece after them. Bit i depends on bytes up to a+i+1 (contractions: up to a+i), so only
// bits 1 to 62 are used, and only below the first non-ASCII byte and the end of the text: the last
// start found begins the next block. Blocks that would give no piece go to gpt2_piece_end.

struct BlockClasses {
    uint64_t letter, digit, space, blank, apos, high;  // blank: ' '; high: bytes >= 0x80
};

inline uint64_t bytes_mask_from_highs(uint64_t x) {  // bit 7 of each byte -> 8 bits, byte 0 lowest
    return (((x & 0x8080808080808080ULL) >> 7) * 0x0102040810204080ULL) >> 56;
}

inline BlockClasses swar_block(const uint8_t* p) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    BlockClasses c = {0, 0, 0, 0, 0, 0};
    for (int w = 0; w < 8; ++w) {
        uint64_t x;
        std::memcpy(&x, p + 8 * w, 8);
        const uint64_t ascii = ~x & highs, low = x & ~highs;
        auto at_least = [&](uint64_t v, uint8_t lo) { return (v + ones * (uint8_t)(0x80 - lo)) & highs; };
        auto equal = [&](uint8_t v) { return at_least(low, v) & ~at_least(low, v + 1) & ascii; };
        const uint64_t folded = low | (ones * 0x20);
        const int shift = 8 * w;
        c.letter |= bytes_mask_from_highs(at_least(folded, 'a') & ~at_least(folded, 'z' + 1) & ascii) << shift;
        c.digit |= bytes_mask_from_highs(at_least(low, '0') & ~at_least(low, '9' + 1) & ascii) << shift;
        const uint64_t blank = equal(' ');
        c.blank |= bytes_mask_from_highs(blank) << shift;
        c.space |= bytes_mask_from_highs(blank | (at_least(low, 9) & ~at_least(low, 14) & ascii)) << shift;
        c.apos |= bytes_mask_from_highs(equal('\'')) << shift;
        c.high |= bytes_mask_from_highs(x & highs) << shift;
    }
    return c;
}

#ifdef TOKKIT_HAVE_SSE2
inline BlockClasses sse2_block(const uint8_t* p) {
    BlockClasses c = {0, 0, 0, 0, 0, 0};
    auto at_most = [](__m128i x, int hi) { return _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8((char)hi)), x); };
    for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128((const __m128i*)(p + 16 * k));
        const int shift = 16 * k;
        auto bits = [&](__m128i m) { return (uint64_t)(uint32_t)_mm_movemask_epi8(m) << shift; };
        c.letter |= bits(at_most(_mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a')), 25));
        c.digit |= bits(at_most(_mm_sub_epi8(v, _mm_set1_epi8('0')), 9));
        const __m128i blank = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
        c.blank |= bits(blank);
        c.space |= bits(_mm_or_si128(blank, at_most(_mm_sub_epi8(v, _mm_set1_epi8(9)), 4)));
        c.apos |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\'')));
        c.high |= bits(v);
    }
    return c;
}
#endif

// The piece starts in p[a+1 : a+limit+1) as bits 1..limit (see above); p[a] is a piece start,
// p[a:a+64] is readable and ASCII up to a+limit+1, and a+limit+2 <= end.
inline uint64_t block_starts(const BlockClasses& c, const uint8_t* p, size_t a, size_t end, int limit) {
    const uint64_t other = ~(c.letter | c.digit | c.space | c.high);
    auto prev = [](uint64_t x) { return x << 1; };
    auto next = [](uint64_t x) { return x >> 1; };
    const uint64_t change = (c.letter & ~prev(c.letter)) | (c.digit & ~prev(c.digit)) | (other & ~prev(other)) |
                            (c.space & ~prev(c.space));
    const uint64_t attached = prev(c.blank) & ~c.space;
    const uint64_t giveback = c.space & prev(c.space) & ~next(c.space);
    uint64_t starts = (change & ~attached) | giveback | 1;
    uint64_t contractions = c.apos & starts;
    while (contractions) {
        const int i = count_trailing_zeros(contractions);
        contractions &= contractions - 1;
        const size_t k = gpt2_contraction(p, a + i, end < a + 64 ? end : a + 64);
        if (k) {
            starts &= ~(((uint64_t(1) << (k - 1)) - 1) << (i + 1));  // no start inside it
            if (i + k < 64) starts |= uint64_t(1) << (i + k);
        }
    }
    const uint64_t usable = limit >= 63 ? ~uint64_t(1) : ((uint64_t(1) << (limit + 1)) - 2);
    return starts & usable;
}

// The piece starts that follow p[a] (a piece start) in the block p[a:a+64] (readable; a + 3 <= end),
// as bits (bit i: p[a+i]); 0 when the block gives none (a non-ASCII byte or the end comes too soon).
inline uint64_t gpt2_block_starts(const Gpt2Classes& cls, const uint8_t* p, size_t a, size_t end) {
    BlockClasses c;
#ifdef TOKKIT_HAVE_SSE2
    if (cls.mode == SCAN_SSE2)
        c = sse2_block(p + a);
    else
#endif
        c = swar_block(p + a);
    int limit = 62;
    if (c.high) limit = count_trailing_zeros(c.high) - 2;  // bits up to the first non-ASCII byte - 2
    if ((size_t)limit + 2 > end - a) limit = (int)(end - a) - 2;
    return limit >= 1 ? block_starts(c, p, a, end, limit) : 0;
}

}  // namespace tokkit
