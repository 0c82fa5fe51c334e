// The general encode path for ids only, part 1: normalizer steps over UTF-8, without alignments.
//
// When the caller asks for ids alone, no span of the original text is ever read, so a text can go
// through the normalizer as plain UTF-8: each step below writes the same chars as its twin in
// pipeline_text.hpp, but as bytes, with no (char, change) edits and no per-char spans. ASCII, most
// of any text, is copied or looked up a byte at a time.
//
// One thing about the spans is still needed: whether the first char of the text comes from offset 0
// of the original (Metaspace's "first" scheme reads it; see Origin). Each step says how it moves it.
#pragma once
#include "pipeline_text.hpp"

namespace tokkit {
namespace pipe {

// Whether the first char of a text under normalization has an original span starting at 0 (what
// tokenizers' offsets_original().0 == 0 tests). UNSURE: a step removed chars before it, so only the
// spans could tell (Metaspace "first" then leaves the text to the path with alignments).
enum Origin : uint8_t { AT_ZERO, PAST_ZERO, UNSURE };

// The origin once chars before the first kept one were removed (it then takes a later char's span).
inline Origin dropped_lead(Origin o) { return o == PAST_ZERO ? PAST_ZERO : UNSURE; }

// The code point at p[i] (UTF-8 as utf8_encode writes it, lone surrogates too); moves i past it.
inline char32_t utf8_next(const uint8_t* p, size_t n, size_t& i) {
    const uint8_t b = p[i];
    if (b < 0x80) { i++; return b; }
    size_t w = b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    if (i + w > n) w = n - i;  // never for text this path wrote
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

inline void put_utf8(char32_t c, std::vector<uint8_t>& out) {
    uint8_t u[4];
    out.insert(out.end(), u, u + utf8_encode(c, u));
}

inline void put_utf8(const std::u32string& s, std::vector<uint8_t>& out) {
    for (char32_t c : s) put_utf8(c, out);
}

inline bool all_ascii(const uint8_t* p, size_t n) {
    uint8_t any = 0;
    for (size_t i = 0; i < n; i++) any |= p[i];
    return any < 0x80;
}

// One thread's buffers for the UTF-8 path.
struct Utf8Scratch {
    std::vector<uint8_t> x, y;   // the text between normalizer steps
    std::vector<uint8_t> tmp;    // a piece under a pre-tokenizer that changes it
    std::vector<char32_t> cps;   // a text's code points ...
    std::vector<uint32_t> at;    // ... and the byte each starts at, then the text's end
    Text text;                   // the Unicode forms' input (chars only)
    NormScratch ns;
};

// Decodes p[0:n] into s.cps and s.at.
inline void decode(const uint8_t* p, size_t n, Utf8Scratch& s) {
    s.cps.clear();
    s.at.clear();
    for (size_t i = 0; i < n;) {
        s.at.push_back((uint32_t)i);
        s.cps.push_back(utf8_next(p, n, i));
    }
    s.at.push_back((uint32_t)n);
}

// The steps normalize_utf8 writes. Which texts take the UTF-8 lane is tokkit/tokenizer/plan.py's
// choice (utf8_lane, an allow-list of these kinds); set_utf8_ids refuses a plan that names any other.
inline bool utf8_covers(const NormStep& st) {
    switch (st.kind) {
    case N_NFD: case N_NFKD: case N_NFC: case N_NFKC: case N_LOWER: case N_STRIP: case N_STRIP_ACCENTS:
    case N_REPLACE: case N_PREPEND: case N_PRECOMPILED: case N_NMT:
        return true;
    default:
        return false;
    }
}

// One grapheme cluster of `chars` chars (starting at bytes at[0], at[1]...) as `precompiled` replaces it:
// whole when under 6 bytes and the map holds it, else char by char (one char was just looked up whole).
inline void precompiled_cluster(const Charsmap& cm, const uint8_t* p, const uint32_t* at, size_t chars,
                                std::vector<uint8_t>& out) {
    const size_t len = at[chars] - at[0];
    if (len < 6 && cm.replace_utf8(p + at[0], len, out)) return;
    if (chars == 1) { out.insert(out.end(), p + at[0], p + at[1]); return; }
    for (size_t k = 0; k < chars; k++)
        if (!cm.replace_utf8(p + at[k], at[k + 1] - at[k], out)) out.insert(out.end(), p + at[k], p + at[k + 1]);
}

// Whether precompiled_cluster would write anything but the cluster's own bytes.
inline bool cluster_changes(const Charsmap& cm, const uint8_t* p, const uint32_t* at, size_t chars) {
    const size_t len = at[chars] - at[0];
    if (len < 6 && cm.replaces(p + at[0], len)) return true;
    if (chars == 1) return false;
    for (size_t k = 0; k < chars; k++)
        if (cm.replaces(p + at[k], at[k + 1] - at[k])) return true;
    return false;
}

// Precompiled over UTF-8: the clusters and replacements of `precompiled`, ASCII from the map's table.
inline void precompiled_utf8(const Charsmap& cm, const UnicodeTables& T, const uint8_t* p, size_t n,
                             std::vector<uint8_t>& out, Utf8Scratch& s) {
    if (all_ascii(p, n) && !std::memchr(p, '\r', n)) {
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && cm.kept(p[j])) j++;
            out.insert(out.end(), p + i, p + j);
            if (j < n) out.insert(out.end(), cm.ascii[p[j]].begin(), cm.ascii[p[j]].end());
            i = j + 1;
        }
        return;
    }
    decode(p, n, s);
    const size_t m = s.cps.size();
    const char32_t* c = s.cps.data();
    const uint32_t* at = s.at.data();
    size_t run = 0;  // bytes [run, at[i]) come out as they are: written at once
    for (size_t i = 0; i < m;) {
        const bool alone = c[i] < 0x80 && c[i] != U'\r' && (i + 1 == m || c[i + 1] < 0x80);
        const size_t j = alone ? i + 1 : grapheme_end(T, c, i, m);
        if (alone ? cm.kept((uint8_t)c[i]) : !cluster_changes(cm, p, at + i, j - i)) {
            i = j;
            continue;
        }
        out.insert(out.end(), p + run, p + at[i]);
        if (alone) out.insert(out.end(), cm.ascii[c[i]].begin(), cm.ascii[c[i]].end());
        else precompiled_cluster(cm, p, at + i, j - i, out);
        run = at[j];
        i = j;
    }
    out.insert(out.end(), p + run, p + n);
}

// Each char mapped through `map` (Lowercase).
inline void map_utf8(const CharMap& map, const uint8_t* p, size_t n, std::vector<uint8_t>& out) {
    for (size_t i = 0; i < n;) {
        const size_t a = i;
        const uint32_t* m = map.find(utf8_next(p, n, i));
        if (!m) { out.insert(out.end(), p + a, p + i); continue; }
        for (uint32_t k = 1; k <= m[0]; k++) put_utf8(m[k], out);
    }
}

// The chars `drop` refuses removed and the rest through `to` (StripAccents, Nmt).
template <class Drop, class To>
inline void filter_utf8(const uint8_t* p, size_t n, Drop drop, To to, std::vector<uint8_t>& out, Origin& origin) {
    for (size_t i = 0; i < n;) {
        const size_t a = i;
        const char32_t c = utf8_next(p, n, i);
        if (drop(c)) {
            if (out.empty()) origin = dropped_lead(origin);
            continue;
        }
        const char32_t d = to(c);
        if (d == c) out.insert(out.end(), p + a, p + i);
        else put_utf8(d, out);
    }
}

inline bool nmt_drops(char32_t c) {
    return (c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0x8F || c == 0x9F;
}

inline char32_t nmt_space(char32_t c) {
    const bool space = c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
                       (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 || c == 0xFEFF ||
                       c == 0xFFFD;
    return space ? U' ' : c;
}

// NFD, NFKD, NFC, NFKC: the edits of `decompose` and `compose`, their chars only (ASCII is its own form).
inline void unicode_form_utf8(const NormStep& st, const UnicodeTables& T, const uint8_t* p, size_t n,
                              std::vector<uint8_t>& out, Utf8Scratch& s) {
    if (all_ascii(p, n)) { out.insert(out.end(), p, p + n); return; }
    s.text.clear();
    for (size_t i = 0; i < n;) s.text.c.push_back(utf8_next(p, n, i));
    const bool compat = st.kind == N_NFKD || st.kind == N_NFKC;
    decompose(T, compat ? T.nfkd : T.nfd, s.text, s.ns);
    if (st.kind == N_NFC || st.kind == N_NFKC) compose(T, s.ns);
    for (const Edit& e : s.ns.edits.list) put_utf8(e.c, out);
}

// Strip: white space off either end.
inline void strip_utf8(const NormStep& st, const UnicodeTables& T, const uint8_t* p, size_t n,
                       std::vector<uint8_t>& out, Origin& origin) {
    size_t a = 0, b = n;
    auto white = [&](char32_t c) { return (T.flags.get(c) & F_WHITESPACE) != 0; };
    while (st.left && a < b) {
        size_t i = a;
        if (!white(utf8_next(p, b, i))) break;
        a = i;
    }
    while (st.right && b > a) {
        size_t k = utf8_back(p, b), i = k;
        if (!white(utf8_next(p, b, i))) break;
        b = k;
    }
    if (a > 0) origin = dropped_lead(origin);
    out.insert(out.end(), p + a, p + b);
}

// The length in bytes of a Replace match at p[i], or 0 (the empty pattern is handled by the caller).
inline size_t replace_match_at(const NormStep& st, const std::string& pattern, const uint8_t* p, size_t i, size_t n) {
    if (st.collapse_spaces) {
        size_t m = 0;
        while (i + m < n && p[i + m] == ' ') m++;
        return m < 2 ? 0 : m;
    }
    const size_t m = pattern.size();
    return i + m <= n && std::memcmp(p + i, pattern.data(), m) == 0 ? m : 0;
}

// Replace with a String pattern or Regex(" {2,}"): matches left to right, not overlapping. A valid
// UTF-8 pattern matches valid UTF-8 only at char starts, so bytes compare as chars do.
inline void replace_utf8(const NormStep& st, const std::string& pattern, const std::string& content,
                         const uint8_t* p, size_t n, std::vector<uint8_t>& out, Origin& origin, Origin at_start) {
    if (pattern.empty() && !st.collapse_spaces) {  // before every char, and at the end
        if (n && !content.empty()) origin = at_start;  // an insertion at the start takes the text's base
        for (size_t i = 0; i < n;) {
            out.insert(out.end(), content.begin(), content.end());
            const size_t a = i;
            utf8_next(p, n, i);
            out.insert(out.end(), p + a, p + i);
        }
        if (n) out.insert(out.end(), content.begin(), content.end());
        return;
    }
    const uint8_t first = st.collapse_spaces ? ' ' : (uint8_t)pattern[0];
    size_t i = 0;
    while (i < n) {
        const void* hit = std::memchr(p + i, first, n - i);
        const size_t at = hit ? (size_t)((const uint8_t*)hit - p) : n;
        out.insert(out.end(), p + i, p + at);
        if (at == n) break;
        const size_t m = replace_match_at(st, pattern, p, at, n);
        if (!m) { out.push_back(p[at]); i = at + 1; continue; }
        // a match at the start: a replacement takes the span of the match's last char, so only one
        // of a single char leaves the origin as it was
        const size_t chars = st.collapse_spaces ? m : st.pattern.size();
        if (at == 0 && (content.empty() || chars != 1)) origin = dropped_lead(origin);
        out.insert(out.end(), content.begin(), content.end());
        i = at + m;
    }
}


// One normalizer step over UTF-8, in -> out, for a step utf8_covers. `origin` follows the first char;
// `base` is the origin of a char inserted at the very start (the text's own start: 0 or past it).
inline void normalize_utf8(const NormStep& st, const UnicodeTables& T, const std::vector<Charsmap>& maps,
                           const std::vector<uint8_t>& in, std::vector<uint8_t>& out, Origin& origin, Origin base,
                           Utf8Scratch& s) {
    out.clear();
    const uint8_t* p = in.data();
    const size_t n = in.size();
    switch (st.kind) {
    case N_NFD: case N_NFKD: case N_NFC: case N_NFKC:
        unicode_form_utf8(st, T, p, n, out, s);
        break;
    case N_LOWER:
        map_utf8(T.lower, p, n, out);
        break;
    case N_STRIP_ACCENTS:
        filter_utf8(p, n, [&](char32_t c) { return (T.flags.get(c) & F_STRIP_ACCENT) != 0; },
                    [](char32_t c) { return c; }, out, origin);
        break;
    case N_NMT:
        filter_utf8(p, n, nmt_drops, nmt_space, out, origin);
        break;
    case N_STRIP:
        strip_utf8(st, T, p, n, out, origin);
        break;
    case N_PREPEND:
        if (n && st.content.empty()) origin = base;  // tokenizers re-inserts the first char at the start
        if (n) out.insert(out.end(), st.content8.begin(), st.content8.end());
        out.insert(out.end(), p, p + n);
        break;
    case N_REPLACE:
        replace_utf8(st, st.pattern8, st.content8, p, n, out, origin, base);
        break;
    case N_PRECOMPILED:
        precompiled_utf8(maps[st.charsmap], T, p, n, out, s);
        break;
    default:  // never: set_utf8_ids refuses a pipeline with a step utf8_covers lacks
        throw std::logic_error("a normalizer step the UTF-8 lane lacks");
    }
}

}  // namespace pipe
}  // namespace tokkit
