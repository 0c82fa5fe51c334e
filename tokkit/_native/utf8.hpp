// UTF-8 in one place: a lead byte's width, one code point read or written, checking, and a str's
// code units written as UTF-8. Every compiled module reads and writes UTF-8 through these.
//
// tokkit writes lone surrogates in their 3-byte form (as Python's "surrogatepass"), and the readers
// here accept them back: they trust lead bytes, so they read UTF-8 tokkit wrote or utf8_check passed.
//
//     uint8_t b[4];
//     int n = utf8_encode(U'é', b);            // 2: C3 A9
//     size_t i = 0;
//     char32_t c = utf8_next(b, n, i);         // U'é', i == 2
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
// (TOKKIT_NO_SIMD builds the portable code only, to test it on x86-64.)
#if (defined(__SSE2__) || defined(_M_X64)) && !defined(TOKKIT_NO_SIMD)
#include <emmintrin.h>
#define TOKKIT_HAVE_SSE2 1
#endif

namespace tokkit {

// The length of the sequence a lead byte starts.
inline size_t utf8_width(uint8_t lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }

// Writes `c` to `out` (room for 4 bytes) and returns the bytes written.
inline int utf8_encode(char32_t c, uint8_t* out) {
    if (c < 0x80) { out[0] = (uint8_t)c; return 1; }
    if (c < 0x800) { out[0] = 0xC0 | (c >> 6); out[1] = 0x80 | (c & 0x3F); return 2; }
    if (c < 0x10000) {
        out[0] = 0xE0 | (c >> 12); out[1] = 0x80 | ((c >> 6) & 0x3F); out[2] = 0x80 | (c & 0x3F);
        return 3;
    }
    out[0] = 0xF0 | (c >> 18); out[1] = 0x80 | ((c >> 12) & 0x3F);
    out[2] = 0x80 | ((c >> 6) & 0x3F); out[3] = 0x80 | (c & 0x3F);
    return 4;
}

// The code point of the whole sequence at p[i], whose lead byte is >= 0x80 (the scanners' hot
// path: ASCII never gets here); *next receives the index after it.
inline uint32_t utf8_decode_at(const uint8_t* p, size_t i, size_t* next) {
    const uint32_t c = p[i];
    if (c < 0xE0) {
        *next = i + 2;
        return ((c & 0x1Fu) << 6) | (p[i + 1] & 0x3Fu);
    }
    if (c < 0xF0) {
        *next = i + 3;
        return ((c & 0x0Fu) << 12) | ((p[i + 1] & 0x3Fu) << 6) | (p[i + 2] & 0x3Fu);
    }
    *next = i + 4;
    return ((c & 0x07u) << 18) | ((p[i + 1] & 0x3Fu) << 12) | ((p[i + 2] & 0x3Fu) << 6) | (p[i + 3] & 0x3Fu);
}

// The code point at p[i] of p[0:n]; moves i past it. A sequence cut short by n gives the bits it has.
inline char32_t utf8_next(const uint8_t* p, size_t n, size_t& i) {
    const uint8_t b = p[i];
    if (b < 0x80) { i++; return b; }
    size_t w = utf8_width(b);
    if (i + w <= n) return utf8_decode_at(p, i, &i);
    w = n - i;  // never for text tokkit wrote
    char32_t c = b & (0xFF >> (w + 1));
    for (size_t k = 1; k < w; k++) c = (c << 6) | (p[i + k] & 0x3F);
    i += w;
    return c;
}

// The start of the char that ends at p[i - 1] (i > 0).
inline size_t utf8_back(const uint8_t* p, size_t i) {
    do i--; while (i > 0 && (p[i] & 0xC0) == 0x80);
    return i;
}

// The code points of p[0:n] (UTF-8 tokkit wrote or utf8_check passed) into out, cleared first.
inline void utf8_decode(const uint8_t* p, size_t n, std::vector<uint32_t>& out) {
    out.clear();
    for (size_t i = 0; i < n;) out.push_back(utf8_next(p, n, i));
}

// The byte where the char `chars` chars after the one starting at p[i] starts (p[0:n]); 8 bytes at
// a time while a word holds no more chars than are left to skip.
inline size_t utf8_skip(const uint8_t* p, size_t i, size_t n, size_t chars) {
    uint64_t w;
    while (chars >= 8 && i + 8 <= n) {
        memcpy(&w, p + i, 8);
        w = (w & ~(w << 1) & 0x8080808080808080ULL) >> 7;  // 1 in each byte 10xxxxxx (it continues a char)
        const uint64_t leads = 8 - ((w * 0x0101010101010101ULL) >> 56);
        if (leads > chars) break;
        chars -= leads;
        i += 8;
    }
    while (i < n && (p[i] & 0xC0) == 0x80) i++;  // the rest of a char the words cut
    for (; chars > 0 && i < n; chars--) {
        i++;
        while (i < n && (p[i] & 0xC0) == 0x80) i++;
    }
    return i;
}

// Appends c's UTF-8, or a string's, to out.
inline void put_utf8(char32_t c, std::vector<uint8_t>& out) {
    uint8_t u[4];
    out.insert(out.end(), u, u + utf8_encode(c, u));
}

inline void put_utf8(const std::u32string& s, std::vector<uint8_t>& out) {
    for (char32_t c : s) put_utf8(c, out);
}

// Whether p[0:n] is all ASCII (8 bytes at a time).
inline bool ascii_only(const uint8_t* p, size_t n) {
    uint64_t acc = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        acc |= w;
    }
    for (; i < n; i++) acc |= p[i];
    return (acc & 0x8080808080808080ULL) == 0;
}

// -1 when p[0:n] is valid UTF-8 as Python's strict decoder has it (no surrogates, overlongs or
// past U+10FFFF), else the offset of a byte inside (or at the start of) the first invalid sequence.
inline ptrdiff_t utf8_check(const uint8_t* p, size_t n) {
    size_t i = 0;
    uint64_t w;
    while (i < n) {
        if (i + 8 <= n) {
            memcpy(&w, p + i, 8);
            if ((w & 0x8080808080808080ULL) == 0) { i += 8; continue; }
        }
        const uint8_t c = p[i];
        if (c < 0x80) { i++; continue; }
        if (c < 0xC2 || c > 0xF4) return (ptrdiff_t)i;
        const size_t w8 = utf8_width(c);
        if (i + 1 >= n || (p[i + 1] & 0xC0) != 0x80) return (ptrdiff_t)i;
        const uint8_t c1 = p[i + 1];
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
            return (ptrdiff_t)i;
        for (size_t k = 2; k < w8; k++)
            if (i + k >= n || (p[i + k] & 0xC0) != 0x80) return (ptrdiff_t)i;
        i += w8;
    }
    return -1;
}

// ---- A str's code units (PEP 393 kind 1, 2 or 4) as UTF-8
#ifdef TOKKIT_HAVE_SSE2
// 16 code units at s: if all are ASCII, write them as 16 bytes at out and return true.
inline bool ascii16(const uint8_t* s, uint8_t* out) {
    const __m128i v = _mm_loadu_si128((const __m128i*)s);
    if (_mm_movemask_epi8(v)) return false;
    _mm_storeu_si128((__m128i*)out, v);
    return true;
}
inline bool ascii16(const uint16_t* s, uint8_t* out) {
    const __m128i a = _mm_loadu_si128((const __m128i*)s), b = _mm_loadu_si128((const __m128i*)(s + 8));
    const __m128i high = _mm_and_si128(_mm_or_si128(a, b), _mm_set1_epi16((short)0xFF80));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(high, _mm_setzero_si128())) != 0xFFFF) return false;
    _mm_storeu_si128((__m128i*)out, _mm_packus_epi16(a, b));
    return true;
}
inline bool ascii16(const uint32_t* s, uint8_t* out) {
    const __m128i a = _mm_loadu_si128((const __m128i*)s), b = _mm_loadu_si128((const __m128i*)(s + 4));
    const __m128i c = _mm_loadu_si128((const __m128i*)(s + 8)), d = _mm_loadu_si128((const __m128i*)(s + 12));
    const __m128i any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
    const __m128i high = _mm_and_si128(any, _mm_set1_epi32((int)0xFFFFFF80));
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(high, _mm_setzero_si128())) != 0xFFFF) return false;
    // values below 0x80: the saturating packs keep them as they are
    _mm_storeu_si128((__m128i*)out, _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
    return true;
}
#endif

// UTF-8 of n code units into out, which has room for n * (1-byte units ? 2 : 2-byte ? 3 : 4) bytes;
// returns the bytes written. Runs of ASCII go 16 units at a time (8 without SSE2).
template <typename T>
inline size_t utf8_from_units(const T* s, size_t n, uint8_t* out) {
    size_t m = 0, i = 0;
    while (i < n) {
#ifdef TOKKIT_HAVE_SSE2
        if (i + 16 <= n && ascii16(s + i, out + m)) {
            m += 16;
            i += 16;
            continue;
        }
#endif
        if (i + 8 <= n) {
            uint32_t any = 0;
            for (int k = 0; k < 8; ++k) any |= s[i + k];
            if (any < 0x80) {
                for (int k = 0; k < 8; ++k) out[m + k] = (uint8_t)s[i + k];
                m += 8;
                i += 8;
                continue;
            }
        }
        m += (size_t)utf8_encode((char32_t)s[i++], out + m);
    }
    return m;
}

inline size_t utf8_from_str(const void* data, int kind, size_t n, uint8_t* out) {
    if (kind == 1) return utf8_from_units((const uint8_t*)data, n, out);
    if (kind == 2) return utf8_from_units((const uint16_t*)data, n, out);
    return utf8_from_units((const uint32_t*)data, n, out);
}

}  // namespace tokkit
