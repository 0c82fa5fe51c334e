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
#include <stdexcept>

#include "pipeline_text.hpp"

namespace tokkit {
namespace pipe {

// Whether the first char of a text under normalization has an original span starting at 0 (what
// tokenizers' offsets_original().0 == 0 tests). UNSURE: a step removed chars before it, so only the
// spans could tell (Metaspace "first" then leaves the text to the path with alignments).
enum Origin : uint8_t { AT_ZERO, PAST_ZERO, UNSURE };

// The origin once chars before the first kept one were removed (it then takes a later char's span).
inline Origin dropped_lead(Origin o) { return o == PAST_ZERO ? PAST_ZERO : UNSURE; }

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

// A normalizer step's reader over bare UTF-8 (see AlignedIn): positions are bytes.
struct Utf8In {
    const uint8_t* p;
    size_t n;
    Utf8Scratch& s;
    size_t end() const { return n; }
    char32_t next(size_t& i) const { return utf8_next(p, n, i); }
    size_t back(size_t i) const { return utf8_back(p, i); }
    size_t chars(size_t a, size_t b) const {
        size_t k = 0;
        for (size_t i = a; i < b; i++) k += (p[i] & 0xC0) != 0x80;
        return k;
    }
    int char_bytes(size_t& i, uint8_t* u) const {
        if (p[i] < 0x80) {
            u[0] = p[i++];
            return 1;
        }
        const int m = (int)utf8_width(p[i]);
        for (int k = 0; k < m; k++) u[k] = p[i++];
        return m;
    }
    bool ascii() const { return ascii_only(p, n); }
    // A valid UTF-8 pattern matches valid UTF-8 only at char starts, so bytes compare as chars do.
    size_t find(char32_t, uint8_t c, size_t from) const {
        const void* hit = from < n ? std::memchr(p + from, c, n - from) : nullptr;
        return hit ? (size_t)((const uint8_t*)hit - p) : n;
    }
    size_t match(const std::u32string&, const std::string& pattern, size_t i) const {
        const size_t m = pattern.size();
        return i + m <= n && std::memcmp(p + i, pattern.data(), m) == 0 ? m : 0;
    }
    size_t spaces(size_t i) const {
        size_t m = 0;
        while (i + m < n && p[i + m] == ' ') m++;
        return m;
    }
    const Text& text() const {  // the code points, for the Unicode forms
        s.text.clear();
        for (size_t i = 0; i < n;) s.text.c.push_back(utf8_next(p, n, i));
        return s.text;
    }
};

// Precompiled's random access over UTF-8 (see the AlignedIn pair): the code points and their bytes.
inline Chars code_points(const Utf8In& in, NormScratch&) {
    decode(in.p, in.n, in.s);
    return {in.s.cps.data(), in.s.at.data(), in.s.cps.size()};
}

inline const uint8_t* chars_utf8(const Utf8In& in, const Chars& cs, size_t i, size_t j, NormScratch&, size_t& len) {
    len = cs.at[j] - cs.at[i];
    return in.p + cs.at[i];
}

// A normalizer step's writer of bare UTF-8 (see AlignedOut). Of the spans only the first char's
// origin is kept, as the alignments would give it: a char kept takes the span of the char at the
// cursor, one inserted the span of the char before it (`base` at the very start).
struct Utf8Out {
    std::vector<uint8_t>& out;
    Origin& origin;
    Origin base;
    size_t removed = 0;  // chars removed before the first char written
    size_t start = 0;    // where this text starts in `out`

    void starting(bool inserted) {
        if (out.size() != start) return;
        if (inserted) origin = removed == 0 ? base : removed == 1 ? origin : dropped_lead(origin);
        else if (removed) origin = dropped_lead(origin);
    }
    void keep(char32_t c) { starting(false); put_utf8(c, out); }
    void insert(char32_t c) { starting(true); put_utf8(c, out); }
    void remove(size_t k) { if (out.size() == start) removed += k; }
    void absorb(size_t) {}  // into the last char written, or lost: the first char's origin stays
    void copy(const Utf8In& in, size_t a, size_t b) {
        if (a == b) return;
        starting(false);
        out.insert(out.end(), in.p + a, in.p + b);
    }
    void edits(const Edits& e) {
        for (const Edit& x : e.list) {
            remove((size_t)x.skip);
            if (x.change > 0) {
                insert(x.c);
                continue;
            }
            keep(x.c);
            remove((size_t)-x.change);
        }
    }
};

// One normalizer step over UTF-8, in -> out, for a step utf8_covers. `origin` follows the first char;
// `base` is the origin of a char inserted at the very start (the text's own start: 0 or past it).
inline void normalize_utf8(const NormStep& st, const UnicodeTables& T, const std::vector<Charsmap>& maps,
                           const std::vector<uint8_t>& in, std::vector<uint8_t>& out, Origin& origin, Origin base,
                           Utf8Scratch& s) {
    out.clear();
    Utf8Out writer{out, origin, base};
    const Utf8In reader{in.data(), in.size(), s};
    if (text_step(st, T, reader, writer, s.ns)) return;
    if (st.kind != N_PRECOMPILED)  // never: set_utf8_ids refuses a pipeline with a step utf8_covers lacks
        throw std::logic_error("a normalizer step the UTF-8 lane lacks");
    precompiled_step(maps[st.charsmap], T, reader, writer, s.ns);
}

}  // namespace pipe
}  // namespace tokkit
