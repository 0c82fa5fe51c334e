// Compiled pre-tokenization scanners for the byte-level pattern families of today's tokenizers
// (tokkit/_native/patterns.py spells the patterns):
//
//   cl100k (GPT-4, Llama 3):
//     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
//     |\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2: the same with \p{N} (one digit a piece) for \p{N}{1,3}
//   o200k (GPT-4o), with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] and
//   C = (?i:'s|'t|'re|'ve|'m|'ll|'d):
//     [^\r\n\p{L}\p{N}]?U*W+C?|[^\r\n\p{L}\p{N}]?U+W*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*
//     |\s*[\r\n]+|\s+(?!\S)|\s+
//
// Each scanner gives the pieces regex.findall / tokenizers' Split give, one piece at a time, by
// deciding from a character or two which alternative matches and then measuring runs. What the
// backtracking of each alternative comes to:
//   - \s*[\r\n]+ ends after the last \r or \n of the run of white space at the start (if it holds one);
//   - \s+(?!\S) takes the whole run at the end of the text, else all of it but its last character
//     (a run of one character is \s+);
//   - U*W+: U* takes the whole run of U characters, then W+ the run of W characters after it; if
//     none follows, U* gives back up to the last character of its run that is also W (Lm, Lo, M are
//     in both), and W+ is that one character. U+W* is the run of U characters when U*W+ fails.
//   - the optional prefix is tried first with the prefix, then without: a mark (in U, W and the
//     prefix class) before upper-case letters ("\u0301ABC") is a piece of its own.
//   - (?i:...) folds U+017F (long s) to s: the only character outside ASCII that the contractions
//     match in either engine (dev/gen_unicode_tables.py checks).
//
// The classes come from one table per code point (PatternClasses::init), bits PAT_*; tokkit's is
// built by tokkit/_native/unicode_tables.py pattern_classes() from the classes tokenizers' regex
// engine (Oniguruma) has. Over UTF-8, ASCII bytes are classed through PatternClasses::byte and runs of
// ASCII letters, digits, white space and punctuation are measured 16 bytes at a time with SSE2 (or 8
// with SWAR, or one by one) with the block classifiers of gpt2_utf8.hpp; with SSE2, stretches of
// ASCII give many pieces at once from 64 bytes classed together (pattern_block_starts below).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gpt2_utf8.hpp"

namespace tokkit {

enum : int { FAMILY_GPT2 = 0, FAMILY_CL100K = 1, FAMILY_QWEN2 = 2, FAMILY_O200K = 3 };

// Bits of the per-code-point table. L, N and S are the GPT-2 classes' bits (GPT2_L, GPT2_N, GPT2_S),
// so the same table serves Gpt2Classes. Keep equal to unicode_tables.py's PAT_*.
enum : uint8_t {
    PAT_L = 1,        // \p{L}
    PAT_N = 2,        // \p{N}
    PAT_S = 4,        // \s
    PAT_UPPER = 8,    // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    PAT_LOWER = 16,   // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
    PAT_FOLD_S = 32,  // (?i:s) matches it: s, S, U+017F
    PAT_NL = 64,      // \r or \n
};
enum : uint8_t { PAT_LNS = PAT_L | PAT_N | PAT_S, PAT_CASED = PAT_UPPER | PAT_LOWER };

// The ASCII sets the block classifiers measure runs of.
enum : int { SET_LETTER = 0, SET_DIGIT = 1, SET_SPACE = 2, SET_OTHER = 3, SET_LOWER = 4, SET_UPPER = 5 };

struct PatternClasses {
    const uint8_t* code;  // class bits of every code point, 0x110000 entries
    uint8_t byte[128];    // class bits of the ASCII characters (code[c] for c < 128)
    int mode;             // SCAN_SSE2, SCAN_SWAR or SCAN_BYTES: how runs of ASCII are measured
    int best;             // the fastest mode this machine and table allow

    // The block classifiers hard-code ASCII's classes: they are used only when the table agrees
    // (the GPT-2 classes of gpt2_utf8.hpp's fixed_ascii_class, [A-Z] upper and [a-z] lower).
    void init(const uint8_t* per_code_point) {
        code = per_code_point;
        bool fixed = true;
        for (int c = 0; c < 128; ++c) {
            byte[c] = per_code_point[c];
            const bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
            if ((byte[c] & PAT_LNS) != fixed_ascii_class(c) || ((byte[c] & PAT_UPPER) != 0) != upper ||
                ((byte[c] & PAT_LOWER) != 0) != lower)
                fixed = false;
        }
        mode = best = best_scan_mode(fixed);
    }

    // Use `wanted` if this machine and table allow it, else the best mode they do; returns the mode.
    int set_mode(int wanted) { return mode = allowed_scan_mode(wanted, best); }
};

// ---- ASCII blocks: bit i set when byte i is ASCII and in the set

inline uint64_t swar_case(uint64_t w, char lo) {  // bit 7 of the bytes of w in [lo, lo + 25]
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    const uint64_t low = w & ~highs;
    auto at_least = [&](uint64_t x, uint8_t v) { return (x + ones * (uint8_t)(0x80 - v)) & highs; };
    return at_least(low, (uint8_t)lo) & ~at_least(low, (uint8_t)(lo + 26)) & ~w & highs;
}

template <int Set>
inline uint64_t swar_set(uint64_t w) {
    if (Set == SET_LOWER) return swar_case(w, 'a');
    if (Set == SET_UPPER) return swar_case(w, 'A');
    return swar_in_class(w, Set == SET_LETTER ? GPT2_L : Set == SET_DIGIT ? GPT2_N : Set == SET_SPACE ? GPT2_S : 0);
}

#ifdef TOKKIT_HAVE_SSE2
template <int Set>
inline uint32_t sse2_set(const uint8_t* p) {
    if (Set == SET_LOWER || Set == SET_UPPER) {
        const __m128i v = _mm_loadu_si128((const __m128i*)p);
        const __m128i x = _mm_sub_epi8(v, _mm_set1_epi8(Set == SET_LOWER ? 'a' : 'A'));
        return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(25)), x));
    }
    return sse2_in_class(p, Set == SET_LETTER ? GPT2_L : Set == SET_DIGIT ? GPT2_N : Set == SET_SPACE ? GPT2_S : 0);
}
#endif

// ---- Reading characters

// The text as UTF-8 bytes.
struct Utf8Text {
    static constexpr bool utf8 = true;
    const PatternClasses& cls;
    const uint8_t* p;

    // Class bits of the character at i; *next receives the index after it.
    inline uint8_t at(size_t i, size_t* next) const {
        const uint8_t c = p[i];
        if (c < 0x80) {
            *next = i + 1;
            return cls.byte[c];
        }
        const uint32_t cp = utf8_decode_at(p, i, next);
        return cp < 0x110000 ? cls.code[cp] : 0;
    }
    // The unit at i, for comparing with ASCII characters (UTF-8's other bytes are >= 0x80).
    inline uint32_t unit(size_t i) const { return p[i]; }
    inline const uint8_t* units() const { return p; }
    // Where the last character before e (> 0) starts.
    inline size_t last_start(size_t e) const { return utf8_back(p, e); }
    // End of the run of characters from j whose class bits & mask equal want (ASCII bytes of `Set`
    // are exactly those); `end` at the latest.
    template <int Set>
    inline size_t run(size_t j, size_t end, uint8_t mask, uint8_t want) const {
        while (j < end) {
            const uint8_t c = p[j];
            if (c >= 0x80) {  // one non-ASCII character, classed through the full table
                size_t after;
                const uint32_t cp = utf8_decode_at(p, j, &after);
                if (((cp < 0x110000 ? cls.code[cp] : 0) & mask) != want) return j;
                j = after;
                continue;
            }
            if ((cls.byte[c] & mask) != want) return j;
#ifdef TOKKIT_HAVE_SSE2
            if (cls.mode == SCAN_SSE2 && j + 16 <= end) {
                const uint32_t stop = ~sse2_set<Set>(p + j) & 0xFFFFu;
                j += stop ? count_trailing_zeros(stop) : 16;
                continue;  // a non-ASCII byte there is looked at above
            }
#endif
            if (cls.mode == SCAN_SWAR && j + 8 <= end) {
                uint64_t w;
                std::memcpy(&w, p + j, 8);
                const uint64_t stop = ~swar_set<Set>(w) & 0x8080808080808080ULL;
                j += stop ? count_trailing_zeros(stop) >> 3 : 8;
                continue;
            }
            ++j;
        }
        return end;
    }
};

// The text as code points: a str's PEP 393 data (Unit = uint8_t, uint16_t or uint32_t).
template <class Unit>
struct UnitText {
    static constexpr bool utf8 = false;
    const PatternClasses& cls;
    const Unit* u;

    inline uint8_t at(size_t i, size_t* next) const {
        *next = i + 1;
        const uint32_t c = u[i];
        return c < 0x110000 ? cls.code[c] : 0;
    }
    inline uint32_t unit(size_t i) const { return u[i]; }
    inline const Unit* units() const { return u; }
    inline size_t last_start(size_t e) const { return e - 1; }
    template <int Set>
    inline size_t run(size_t j, size_t end, uint8_t mask, uint8_t want) const {
        while (j < end) {
            const uint32_t c = u[j];
            if (((c < 0x110000 ? cls.code[c] : 0) & mask) != want) return j;
            ++j;
        }
        return end;
    }
};

// ---- Pieces shared by the families

// The ASCII letter the character at i matches case-insensitively ('a'..'z'), or 0 (U+017F is 's').
template <class Text>
inline uint32_t folded_letter(const Text& t, size_t i, size_t* next) {
    const uint32_t c = t.unit(i);
    if (c < 0x80) {
        *next = i + 1;
        const uint32_t f = c | 0x20;
        return f >= 'a' && f <= 'z' ? f : 0;
    }
    return (t.at(i, next) & PAT_FOLD_S) ? 's' : 0;
}

// End of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i (an apostrophe), or 0.
template <class Text>
inline size_t contraction_end(const Text& t, size_t i, size_t end) {
    if (i + 1 >= end) return 0;
    size_t j, k;
    const uint32_t d = folded_letter(t, i + 1, &j);
    if (d == 's' || d == 't' || d == 'm' || d == 'd') return j;
    if (j >= end || !(d == 'r' || d == 'v' || d == 'l')) return 0;
    const uint32_t e = folded_letter(t, j, &k);
    return e == (d == 'l' ? 'l' : 'e') ? k : 0;
}

// [\r\n]* (o200k: [\r\n/]*) from j.
template <class Text, bool Slash>
inline size_t newlines_end(const Text& t, size_t j, size_t end) {
    while (j < end) {
        const uint32_t c = t.unit(j);
        if (!(c == '\n' || c == '\r' || (Slash && c == '/'))) break;
        ++j;
    }
    return j;
}

// \s*[\r\n]+|\s+(?!\S)|\s+ at i, whose character is white space; j is the index after it.
template <class Text>
inline size_t space_end(const Text& t, size_t i, size_t j, size_t end) {
    const size_t e = t.template run<SET_SPACE>(j, end, PAT_S, PAT_S);
    for (size_t q = e; q > i; --q) {  // \s*[\r\n]+: up to the run's last newline
        const uint32_t c = t.unit(q - 1);
        if (c == '\n' || c == '\r') return q;
    }
    if (e == end) return e;
    const size_t last = t.last_start(e);  // \s+(?!\S) leaves the last one to what follows
    return last > i ? last : e;
}

// Up to `more` further characters of \p{N} from j (\p{N}{1,3} once the first is read).
template <class Text>
inline size_t digits_end(const Text& t, size_t j, size_t end, int more) {
    for (; more > 0 && j < end; --more) {
        size_t n;
        if (!(t.at(j, &n) & PAT_N)) break;
        j = n;
    }
    return j;
}

// ---- cl100k and qwen2

template <class Text, bool OneDigit>
inline size_t cl100k_piece_end(const Text& t, size_t i, size_t end) {
    size_t j;
    const uint8_t k = t.at(i, &j);
    if (k & PAT_L) return t.template run<SET_LETTER>(j, end, PAT_L, PAT_L);
    const uint32_t c = t.unit(i);
    if (c == '\'') {
        const size_t e = contraction_end(t, i, end);
        if (e) return e;
    }
    if (k & PAT_N) return OneDigit ? j : digits_end(t, j, end, 2);
    uint8_t next = PAT_S;  // class of the second character (white space past the end: no effect)
    size_t j2 = j;
    if (j < end) {
        next = t.at(j, &j2);
        if ((next & PAT_L) && !(k & PAT_NL)) return t.template run<SET_LETTER>(j2, end, PAT_L, PAT_L);
    }
    if (!(k & PAT_S)) return newlines_end<Text, false>(t, t.template run<SET_OTHER>(j, end, PAT_LNS, 0), end);
    if (c == ' ' && !(next & PAT_LNS))
        return newlines_end<Text, false>(t, t.template run<SET_OTHER>(j2, end, PAT_LNS, 0), end);
    return space_end(t, i, j, end);
}

// ---- o200k

struct CasedEnds {
    size_t lower;  // end of U*W+ (0: no match)
    size_t upper;  // end of U+W* where U*W+ does not match (0: no match)
};

// U*W+ and U+W* from s (see the top of the file).
template <class Text>
inline CasedEnds cased_ends(const Text& t, size_t s, size_t end) {
    size_t u = s, last_lower = 0;  // end of the U run; end of its last W character
    while (u < end) {
        size_t n;
        const uint8_t k = t.at(u, &n);
        if (!(k & PAT_UPPER)) {
            if (k & PAT_LOWER) return {t.template run<SET_LOWER>(n, end, PAT_LOWER, PAT_LOWER), 0};
            break;
        }
        if (k & PAT_LOWER) last_lower = n;
        u = t.template run<SET_UPPER>(n, end, PAT_UPPER | PAT_LOWER, PAT_UPPER);  // ASCII capitals at once
    }
    if (last_lower) return {last_lower, 0};
    return {0, u > s ? u : 0};
}

template <class Text>
inline size_t with_contraction(const Text& t, size_t e, size_t end) {
    if (e < end && t.unit(e) == '\'') {
        const size_t c = contraction_end(t, e, end);
        if (c) return c;
    }
    return e;
}

template <class Text>
inline size_t o200k_piece_end(const Text& t, size_t i, size_t end) {
    size_t j;
    const uint8_t k = t.at(i, &j);
    uint8_t next = PAT_S;
    size_t j2 = j;
    if (!(k & (PAT_L | PAT_N | PAT_NL)) && j < end) {  // with the [^\r\n\p{L}\p{N}] prefix first
        next = t.at(j, &j2);
        if (next & PAT_CASED) {
            const CasedEnds with = cased_ends(t, j, end);
            if (with.lower) return with_contraction(t, with.lower, end);
            if (!(k & PAT_CASED)) return with_contraction(t, with.upper, end);
            // a mark: U*W+ matches it alone, before U+W* with the prefix
        }
    }
    if (k & PAT_CASED) {
        const CasedEnds without = cased_ends(t, i, end);
        return with_contraction(t, without.lower ? without.lower : without.upper, end);
    }
    if (k & PAT_N) return digits_end(t, j, end, 2);
    if (!(k & PAT_S)) return newlines_end<Text, true>(t, t.template run<SET_OTHER>(j, end, PAT_LNS, 0), end);
    if (j < end && t.unit(i) == ' ' && !(next & PAT_LNS))
        return newlines_end<Text, true>(t, t.template run<SET_OTHER>(j2, end, PAT_LNS, 0), end);
    return space_end(t, i, j, end);
}

// ---- GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// One left-to-right pass: at each position the first alternative that matches wins, each + run is
// maximal, and the only backtrack (\s+(?!\S) giving back one character) moves by one character.

// End of the run from j of characters whose GPT-2 class (L, N, S bits) is k: the reader's run of
// the set whose block classifier measures it.
template <class Text>
inline size_t gpt2_run_end(const Text& t, size_t j, size_t end, uint8_t k) {
    switch (k) {
        case PAT_L: return t.template run<SET_LETTER>(j, end, PAT_LNS, PAT_L);
        case PAT_N: return t.template run<SET_DIGIT>(j, end, PAT_LNS, PAT_N);
        case PAT_S: return t.template run<SET_SPACE>(j, end, PAT_LNS, PAT_S);
        default: return t.template run<SET_OTHER>(j, end, PAT_LNS, k);
    }
}

// UTF-8 read through gpt2_utf8.hpp's classes, whose runs may read blocks up to p[n - 1] (past `end`).
struct Gpt2Bytes {
    static constexpr bool utf8 = true;
    const Gpt2Classes& cls;
    const uint8_t* p;
    size_t n;

    inline uint8_t at(size_t i, size_t* next) const { return cls.at(p, i, next); }
    inline uint32_t unit(size_t i) const { return p[i]; }
    inline const uint8_t* units() const { return p; }
    inline size_t last_start(size_t e) const { return utf8_back(p, e); }
};

// Its runs: gpt2_utf8.hpp's, one call whatever the class (blocks up to p[n - 1]).
inline size_t gpt2_run_end(const Gpt2Bytes& t, size_t j, size_t end, uint8_t k) {
    return run_end(t.cls, t.p, j, end, t.n, k);
}

// The GPT-2 class (L, N or S bit, or 0) of the character at i; *next receives the index after it.
template <class Text>
inline uint8_t gpt2_class(const Text& t, size_t i, size_t* next) { return t.at(i, next) & PAT_LNS; }
inline uint8_t gpt2_class(const Gpt2Bytes& t, size_t i, size_t* next) { return t.at(i, next); }  // its table's own

// End of the piece that starts at i (i < end), as regex.findall over the text up to `end` gives it.
template <class Text>
inline size_t gpt2_piece_end(const Text& t, size_t i, size_t end) {
    const uint32_t c = t.unit(i);
    if (c == '\'') {
        const size_t k = gpt2_contraction(t.units(), i, end);
        if (k) return i + k;
    }
    size_t j;
    uint8_t k = gpt2_class(t, i, &j);
    if (c == ' ' && j < end) {
        size_t after;
        const uint8_t next = gpt2_class(t, j, &after);
        if (next != PAT_S) {  // " ?" takes the space into the following letter/number/other run
            k = next;
            j = after;
        }
    }
    if (k != PAT_S) return gpt2_run_end(t, j, end, k);
    j = gpt2_run_end(t, j, end, PAT_S);
    if (j < end) {  // \s+(?!\S): a run of two or more characters leaves its last one for the next word
        const size_t last = t.last_start(j);
        if (last > i) j = last;
    }
    return j;
}

// Ends of the pieces that follow p[a] (a piece start, a < end) in p[a:end], at most `room` of them,
// into ends[]; returns how many (at least one). p holds n >= end bytes. Stretches of ASCII give many
// pieces at once (gpt2_utf8.hpp's block_starts).
inline size_t gpt2_piece_ends(const Gpt2Classes& cls, const uint8_t* p, size_t a, size_t end, size_t n,
                              size_t* ends, size_t room) {
    const Gpt2Bytes t{cls, p, n};
    size_t count = 0;
    while (a < end && count < room) {
        if (cls.mode != SCAN_BYTES && a + 64 <= n && a + 3 <= end) {
            uint64_t starts = gpt2_block_starts(cls, p, a, end);
            if (starts) {
                const size_t base = a;
                while (starts && count < room) {
                    a = base + count_trailing_zeros(starts);
                    starts &= starts - 1;
                    ends[count++] = a;
                }
                continue;
            }
        }
        a = gpt2_piece_end(t, a, end);
        ends[count++] = a;
    }
    return count;
}

// ---- Many pieces at once: 64 bytes of ASCII classed in one go (SSE2)
//
// As gpt2_utf8.hpp does for GPT-2: from a known piece start a, the starts of the next pieces in
// p[a:a+64] follow from the classes of the bytes (bit i: byte a+i; prev() moves a bit one byte later,
// next() one earlier). With L letters, D digits, S white space, NL \r \n, NS = S minus NL, B ' ',
// O the other ASCII bytes:
//   - a run of L, D, O or S starts a piece, except that a run of letters joins the character before
//     it when that is NS or a lone O starting a piece of its own ([^\r\n\p{L}\p{N}]?\p{L}+), a run
//     of O joins a ' ' before it ( ?[^\s\p{L}\p{N}]+), and newlines right after O join that piece
//     ([\r\n]*);
//   - digits start a piece every three from the start of their run (qwen2: every digit);
//   - in a run of white space, NS right after a newline starts a piece (\s*[\r\n]+ ended there), and
//     the last of two or more NS before a non-space does (\s+(?!\S) gave it back);
//   - o200k: an upper-case letter after a lower-case one starts a piece (U*W+ ended there);
//   - contractions: cl100k and qwen2 try them at an apostrophe that starts a piece, o200k at one
//     right after a letter (a piece's C? suffix); a match starts a piece after it and none inside.
// Bit i depends on bytes up to a+i+1, so bits 1..62 are usable, and only below the first byte
// >= 0x80 less 2. White space before a newline (\s*[\r\n]+ takes it: "x  \nb") and, for o200k, "/"
// after newlines that follow O ([\r\n/]*) are left to the piece-at-a-time scanner: the bits stop at
// the start of their run of white space, and likewise at a run of white space that reaches past the
// usable bits (its newlines decide its pieces). The last start found begins the next block.

struct PatternBlock {
    uint64_t letter, upper, digit, space, nl, blank, apos, slash, high;
};

#ifdef TOKKIT_HAVE_SSE2
inline PatternBlock sse2_pattern_block(const uint8_t* p) {
    PatternBlock c = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    auto at_most = [](__m128i x, int hi) { return _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8((char)hi)), x); };
    auto equal = [](__m128i x, char v) { return _mm_cmpeq_epi8(x, _mm_set1_epi8(v)); };
    for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128((const __m128i*)(p + 16 * k));
        const int shift = 16 * k;
        auto bits = [&](__m128i m) { return (uint64_t)(uint32_t)_mm_movemask_epi8(m) << shift; };
        const __m128i upper = at_most(_mm_sub_epi8(v, _mm_set1_epi8('A')), 25);
        const __m128i lower = at_most(_mm_sub_epi8(v, _mm_set1_epi8('a')), 25);
        c.letter |= bits(_mm_or_si128(upper, lower));
        c.upper |= bits(upper);
        c.digit |= bits(at_most(_mm_sub_epi8(v, _mm_set1_epi8('0')), 9));
        const __m128i blank = equal(v, ' ');
        c.blank |= bits(blank);
        c.space |= bits(_mm_or_si128(blank, at_most(_mm_sub_epi8(v, _mm_set1_epi8(9)), 4)));
        c.nl |= bits(_mm_or_si128(equal(v, '\n'), equal(v, '\r')));
        c.apos |= bits(equal(v, '\''));
        c.slash |= bits(equal(v, '/'));
        c.high |= bits(v);
    }
    return c;
}
#endif

// Length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at q[0] (an apostrophe; q[1] is ASCII, q[2] readable), or 0.
// x | 0x20 is a lower-case letter only for that letter and its capital.
inline size_t ascii_contraction(const uint8_t* q) {
    const uint8_t d = q[1] | 0x20, e = q[2] | 0x20;
    if (d == 's' || d == 't' || d == 'm' || d == 'd') return 2;
    if (((d == 'r' || d == 'v') && e == 'e') || (d == 'l' && e == 'l')) return 3;
    return 0;
}

inline int highest_bit(uint64_t x) {  // x != 0
    int n = 63;
    while (!(x >> n)) --n;
    return n;
}

// Digits' piece starts: the start of each run, then every third digit of it (every digit if One).
template <bool One>
inline uint64_t digit_starts(uint64_t d) {
    if (One) return d;
    uint64_t g = d & ~(d << 1);
    const uint64_t third = d & (d << 1) & (d << 2);  // the digit and the two before it are digits
    for (uint64_t add = (g << 3) & third; add & ~g; add = (g << 3) & third) g |= add;
    return g;
}

// The piece starts in p[a+1 : a+64) as bits 1..62 (see above), or 0 when the block gives none;
// p[a:a+64] is readable (a + 64 <= end) and p[a] starts a piece.
template <int Family>
inline uint64_t pattern_block_starts(const PatternBlock& c, const uint8_t* p, size_t a) {
    auto prev = [](uint64_t x) { return x << 1; };
    auto next = [](uint64_t x) { return x >> 1; };
    const uint64_t L = c.letter, D = c.digit, S = c.space, NL = c.nl, NS = S & ~NL;
    const uint64_t O = ~(L | D | S | c.high);
    const int limit0 = c.high ? count_trailing_zeros(c.high) - 2 : 62;
    if (limit0 < 1) return 0;
    int limit = limit0;
    const uint64_t Ss = S & ~prev(S);
    uint64_t trouble = (NS & next(NL)) | (S & (uint64_t(1) << (limit + 1)));
    if (Family == FAMILY_O200K) trouble |= next(c.slash & prev(NL));
    if (limit >= 1 && trouble) {
        const int m = count_trailing_zeros(trouble);
        if (m <= limit + 1) {  // stop at the start of that run of white space
            const int run = highest_bit(Ss & ((uint64_t(2) << m) - 1));
            if (run < limit) limit = run;
        }
    }
    if (limit < 1) return 0;
    const uint64_t Os = O & ~prev(O) & ~prev(c.blank);  // runs of O (a ' ' before one joins it)
    const uint64_t lone = Os & ~next(O);                // a lone O: it joins a run of letters after it
    uint64_t starts = (L & ~prev(L) & ~prev(NS) & ~prev(lone)) | Os | (Ss & ~(NL & prev(O))) | (NS & prev(NL)) |
                      (NS & prev(NS) & ~next(S)) | digit_starts<Family == FAMILY_QWEN2>(D) | 1;
    if (Family == FAMILY_O200K) starts |= c.upper & prev(L & ~c.upper);
    uint64_t candidates = c.apos & (Family == FAMILY_O200K ? prev(L) : starts);
    size_t after = 0;  // o200k: where the last contraction ended (the letters it took are no piece)
    while (candidates) {
        const int i = count_trailing_zeros(candidates);
        candidates &= candidates - 1;
        if (i > limit) break;
        if (Family == FAMILY_O200K && (size_t)i == after) continue;
        const size_t k = ascii_contraction(p + a + i);
        if (!k) continue;
        const uint64_t inside = ((uint64_t(1) << k) - 1) << i;  // bits i .. i+k-1
        starts &= Family == FAMILY_O200K ? ~inside : ~(inside & ~(uint64_t(1) << i));
        if (i + k < 64) starts |= uint64_t(1) << (i + k);
        after = i + k;
    }
    return starts & ((uint64_t(2) << limit) - 2);
}

// ---- Entry points

template <class Text, int Family>
inline size_t family_piece_ends(const Text& t, size_t a, size_t end, size_t* ends, int limit) {
    size_t count = 0;
    while (a < end && count < (size_t)limit) {
#ifdef TOKKIT_HAVE_SSE2
        if constexpr (Text::utf8) {
            if (t.cls.mode == SCAN_SSE2 && a + 64 <= end) {
                uint64_t starts = pattern_block_starts<Family>(sse2_pattern_block(t.p + a), t.p, a);
                if (starts) {
                    const size_t base = a;
                    while (starts && count < (size_t)limit) {
                        a = base + count_trailing_zeros(starts);
                        starts &= starts - 1;
                        ends[count++] = a;
                    }
                    continue;
                }
            }
        }
#endif
        if (Family == FAMILY_O200K)
            a = o200k_piece_end(t, a, end);
        else
            a = cl100k_piece_end<Text, Family == FAMILY_QWEN2>(t, a, end);
        ends[count++] = a;
    }
    return count;
}

template <class Text>
inline size_t gpt2_family_ends(const Text& t, size_t a, size_t end, size_t* ends, int limit) {
    int count = 0;
    for (; a < end && count < limit; count++) ends[count] = a = gpt2_piece_end(t, a, end);
    return (size_t)count;
}

template <class Text>
inline size_t text_piece_ends(const Text& t, int family, size_t a, size_t end, size_t* ends, int limit) {
    switch (family) {
        case FAMILY_CL100K:
            return family_piece_ends<Text, FAMILY_CL100K>(t, a, end, ends, limit);
        case FAMILY_QWEN2:
            return family_piece_ends<Text, FAMILY_QWEN2>(t, a, end, ends, limit);
        case FAMILY_O200K:
            return family_piece_ends<Text, FAMILY_O200K>(t, a, end, ends, limit);
        case FAMILY_GPT2:
            return gpt2_family_ends(t, a, end, ends, limit);
        default:
            return 0;
    }
}

// UTF-8: the ends of up to `limit` (>= 1) consecutive pieces of p[a:end), a < end; returns how many
// were found (>= 1; 0 for unknown families). `end` is the end of the text for the
// pattern (\s+(?!\S) sees nothing past it); nothing past p[end - 1] is read. The UTF-8 must be as
// tokkit writes it (lone surrogates in their 3-byte form are "other" characters): lead bytes are
// trusted.
inline size_t pattern_piece_ends(const PatternClasses& cls, int family, const uint8_t* p, size_t a, size_t end,
                                 size_t* ends, int limit) {
    return text_piece_ends(Utf8Text{cls, p}, family, a, end, ends, limit);
}

// Code points (a str's PEP 393 data): the same over u[a:end).
template <class Unit>
inline size_t pattern_piece_ends_units(const PatternClasses& cls, int family, const Unit* u, size_t a, size_t end,
                                       size_t* ends, int limit) {
    return text_piece_ends(UnitText<Unit>{cls, u}, family, a, end, ends, limit);
}

}  // namespace tokkit
