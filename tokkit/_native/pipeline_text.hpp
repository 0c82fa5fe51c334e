// The general encode path, part 1: text with alignments, normalizers and pre-tokenizers.
//
// A tokenizer.json pipeline is normalizer -> pre-tokenizer -> model. The fast paths in encode.pyx
// cover BERT WordPiece, char BPE and byte-level BPE; this header (with pipeline_model.hpp) covers
// every other combination of the components tokkit supports, with tokenizers' offsets.
//
// Text is held as code points, each with the (start, end) span of the original text it comes
// from: tokenizers' alignments. Every normalizer is written as tokenizers writes it, a list of
// (char, change) edits over the current string, and `Edits::apply` turns them into a new string
// with tokenizers' rule for alignments:
//   - change <= 0: the char takes the span of the char at the cursor, then the cursor skips that
//     char and -change more (removed);
//   - change > 0: the char is inserted and takes the span of the char before the cursor (or an
//     empty span at the start of the string).
// So quirks of tokenizers' alignments (a composed char keeps only its first char's span) come out
// the same here.
//
// Nothing here holds the GIL or allocates per character beyond amortised vector growth; tables are
// read-only after construction, so many threads share one Pipeline.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "utf8.hpp"

namespace tokkit {
namespace pipe {

struct Span {
    int32_t s, e;
};

// A string under normalization: code points and the original span of each.
struct Text {
    std::vector<char32_t> c;
    std::vector<Span> a;
    int32_t base = 0;  // original offset where this string starts (the span of an insertion at 0)
    void clear() { c.clear(); a.clear(); }
    size_t size() const { return c.size(); }
    void push(char32_t ch, Span sp) { c.push_back(ch); a.push_back(sp); }
};

// One char of a transformed string. `change` is tokenizers' (char, change): > 0 an insertion, <= 0
// the char replaces the one at the cursor and removes -change more after it. `skip` chars are removed
// before this one (how a replaced match or a filtered char leaves its place).
struct Edit {
    char32_t c;
    int32_t change;
    int32_t skip;
};

// (char, change) edits over a Text, applied with tokenizers' alignment rule (see the top).
struct Edits {
    std::vector<Edit> list;
    int32_t pending = 0;  // removals waiting for the next char
    void clear() { list.clear(); pending = 0; }
    void keep(char32_t ch) { list.push_back({ch, 0, pending}); pending = 0; }
    void insert(char32_t ch) { list.push_back({ch, 1, pending}); pending = 0; }
    void remove(int32_t k) { pending += k; }
    void apply(const Text& src, Text& dst) const {
        dst.clear();
        dst.base = src.base;
        size_t cur = 0, n = src.size();
        for (const Edit& e : list) {
            cur += (size_t)e.skip;
            Span sp;
            if (e.change > 0) {
                sp = cur > 0 && cur - 1 < n ? src.a[cur - 1]
                                            : (cur > 0 && n ? src.a[n - 1] : Span{src.base, src.base});
            } else {
                sp = cur < n ? src.a[cur] : (n ? Span{src.a[n - 1].e, src.a[n - 1].e} : Span{src.base, src.base});
                cur += 1 + (size_t)(-e.change);
            }
            dst.push(e.c, sp);
        }
    }
};

// ------------------------------------------------------------------------------------ step I/O
// Each normalizer step is written once, over a reader (positions in the text, the char at one) and
// a writer (keep a char, insert one, remove some, copy a run of the input as it is). Here: code
// points with alignments, the edits applied with tokenizers' rule; pipeline_utf8.hpp has the same
// pair over bare UTF-8, for ids without offsets. A position is a char's index here, a byte there.
struct AlignedIn {
    const Text& t;
    size_t end() const { return t.size(); }
    char32_t next(size_t& i) const { return t.c[i++]; }
    size_t back(size_t i) const { return i - 1; }
    size_t chars(size_t a, size_t b) const { return b - a; }
    // The UTF-8 of the char at i into u (4 bytes of room); i moves past it; how many bytes.
    int char_bytes(size_t& i, uint8_t* u) const { return utf8_encode(t.c[i++], u); }
    bool ascii() const {
        char32_t any = 0;
        for (char32_t c : t.c) any |= c;
        return any < 0x80;
    }
    size_t find(char32_t c, uint8_t, size_t from) const {
        while (from < t.size() && t.c[from] != c) from++;
        return from;
    }
    // The length of a match of the pattern at i, or 0.
    size_t match(const std::u32string& p, const std::string&, size_t i) const {
        return i + p.size() <= t.size() && std::equal(p.begin(), p.end(), t.c.begin() + i) ? p.size() : 0;
    }
    // How many spaces (U+0020, one unit in either text) start at i.
    size_t spaces(size_t i) const {
        size_t m = 0;
        while (i + m < t.size() && t.c[i + m] == U' ') m++;
        return m;
    }
    const Text& text() const { return t; }
};

struct AlignedOut {
    Edits& ed;
    void keep(char32_t c) { ed.keep(c); }
    void insert(char32_t c) { ed.insert(c); }
    void remove(size_t k) { ed.remove((int32_t)k); }
    // k chars gone into the last char written (lost when none was: later chars then take the spans
    // of earlier ones, as tokenizers' Precompiled does)
    void absorb(size_t k) {
        if (!ed.list.empty()) ed.list.back().change -= (int32_t)k;
    }
    void copy(const AlignedIn& in, size_t a, size_t b) {
        for (size_t i = a; i < b; i++) ed.keep(in.t.c[i]);
    }
    void edits(const Edits& e) {
        if (&e != &ed) ed = e;
    }
};

// tokenizers' NormalizedString::replace, one match of `chars` chars by r: the match is removed, then
// r's chars are inserted (each takes the span of the match's last char).
template <class Out>
inline void replace_match(Out& out, size_t chars, const std::u32string& r) {
    out.remove(chars);
    for (char32_t c : r) out.insert(c);
}

// ------------------------------------------------------------------------------------ tables

// A per-code-point map to short sequences, in the layout tokkit/_native/unicode_tables.py builds:
// stage1[c >> 8] picks a block of 256 entries in stage2; an entry is 0 (unchanged) or the index in
// pool of [length, code points...].
struct CharMap {
    const uint16_t* stage1 = nullptr;
    const uint32_t* stage2 = nullptr;
    const uint32_t* pool = nullptr;
    // nullptr when c maps to itself; else pool entry [length, cps...]
    const uint32_t* find(char32_t c) const {
        if (!stage1 || c >= 0x110000) return nullptr;
        uint32_t at = stage2[(size_t)stage1[c >> 8] * 256 + (c & 255)];
        return at ? pool + at : nullptr;
    }
};

// Per-code-point class bits (unicode_tables.norm_tables()["flags"]), two-stage like CharMap.
enum : uint16_t {
    F_WHITESPACE = 1,   // Rust char::is_whitespace (Strip, WhitespaceSplit)
    F_PUNCT = 2,        // tokenizers' punctuation (Punctuation pre-tokenizer, BertPreTokenizer)
    F_NUMERIC = 4,      // char::is_numeric (Digits)
    F_WORD = 8,         // \w of the Whitespace pre-tokenizer's regex
    F_STRIP_ACCENT = 16,  // removed by StripAccents
    F_REGEX_SPACE = 32,   // \s of the Whitespace pre-tokenizer's regex
    F_BERT_SPLIT = 1024,  // BertPreTokenizer drops it as whitespace
    F_BERT_PUNCT = 2048,  // BertPreTokenizer isolates it as punctuation
};

struct FlagMap {
    const uint16_t* stage1 = nullptr;
    const uint16_t* stage2 = nullptr;
    uint16_t get(char32_t c) const {
        if (!stage1 || c >= 0x110000) return 0;
        return stage2[(size_t)stage1[c >> 8] * 256 + (c & 255)];
    }
};

// Canonical combining classes (0 for starters), two-stage.
struct CccMap {
    const uint16_t* stage1 = nullptr;
    const uint8_t* stage2 = nullptr;
    uint8_t get(char32_t c) const {
        if (!stage1 || c >= 0x110000) return 0;
        return stage2[(size_t)stage1[c >> 8] * 256 + (c & 255)];
    }
};

// Canonical composition pairs, sorted by key (first << 21 | second), for binary search.
struct Compositions {
    const uint64_t* keys = nullptr;
    const uint32_t* values = nullptr;
    size_t n = 0;
    char32_t find(char32_t a, char32_t b) const {
        // Hangul syllables compose by arithmetic, as in the Unicode standard (3.12)
        const char32_t SB = 0xAC00, LB = 0x1100, VB = 0x1161, TB = 0x11A7;
        const int LC = 19, VC = 21, TC = 28;
        if (a >= LB && a < LB + LC && b >= VB && b < VB + VC)
            return SB + ((a - LB) * VC + (b - VB)) * TC;
        if (a >= SB && a < SB + LC * VC * TC && (a - SB) % TC == 0 && b > TB && b < TB + TC)
            return a + (b - TB);
        uint64_t key = ((uint64_t)a << 21) | b;
        const uint64_t* it = std::lower_bound(keys, keys + n, key);
        return (it != keys + n && *it == key) ? values[it - keys] : 0;
    }
};

// BertNormalizer over c[0:n] as the fast paths run it (text.pyx's bert_normalize): the chars, and for
// each the index of the char of c it comes from.
typedef void (*BertNormFn)(const uint32_t* c, size_t n, int clean_text, int handle_chinese_chars, int strip_accents,
                           int lowercase, std::vector<uint32_t>& out, std::vector<ptrdiff_t>& source);

struct UnicodeTables {
    BertNormFn bert = nullptr;
    CharMap lower, nfd, nfkd;
    FlagMap flags;
    CccMap ccc;
    Compositions compose;
    // Grapheme_Cluster_Break and friends for Precompiled (see grapheme_end)
    FlagMap grapheme;
};

// Grapheme property values in UnicodeTables::grapheme (low 5 bits), plus flags.
enum : uint16_t {
    G_OTHER = 0, G_CR = 1, G_LF = 2, G_CONTROL = 3, G_EXTEND = 4, G_ZWJ = 5, G_RI = 6, G_PREPEND = 7,
    G_SPACING_MARK = 8, G_L = 9, G_V = 10, G_T = 11, G_LV = 12, G_LVT = 13,
    G_EXT_PICT = 32,        // Extended_Pictographic
    G_INCB_CONSONANT = 64,  // Indic_Conjunct_Break=Consonant
    G_INCB_LINKER = 128,    // Indic_Conjunct_Break=Linker
    G_INCB_EXTEND = 256,    // Indic_Conjunct_Break=Extend
};

// End (exclusive) of the extended grapheme cluster starting at c[i] (UAX #29, rules GB3-GB999).
inline size_t grapheme_end(const UnicodeTables& T, const char32_t* c, size_t i, size_t n) {
    if (i + 1 >= n) return n;
    uint16_t prev = T.grapheme.get(c[i]);
    int ri_run = (prev & 31) == G_RI ? 1 : 0;
    // emoji state (GB11): 1 after Extended_Pictographic Extend*, 2 after one ZWJ more; Indic state (GB9c)
    int emoji = (prev & G_EXT_PICT) ? 1 : 0;
    bool incb_cons = (prev & G_INCB_CONSONANT) != 0, incb_linker = false;
    size_t j = i + 1;
    for (; j < n; j++) {
        uint16_t cur = T.grapheme.get(c[j]);
        int p = prev & 31, q = cur & 31;
        bool brk;
        if (p == G_CR && q == G_LF) brk = false;                                   // GB3
        else if (p == G_CR || p == G_LF || p == G_CONTROL) brk = true;             // GB4
        else if (q == G_CR || q == G_LF || q == G_CONTROL) brk = true;             // GB5
        else if (p == G_L && (q == G_L || q == G_V || q == G_LV || q == G_LVT)) brk = false;  // GB6
        else if ((p == G_LV || p == G_V) && (q == G_V || q == G_T)) brk = false;   // GB7
        else if ((p == G_LVT || p == G_T) && q == G_T) brk = false;                // GB8
        else if (q == G_EXTEND || q == G_ZWJ) brk = false;                         // GB9
        else if (q == G_SPACING_MARK) brk = false;                                 // GB9a
        else if (p == G_PREPEND) brk = false;                                      // GB9b
        else if ((cur & G_INCB_CONSONANT) && incb_cons && incb_linker) brk = false;  // GB9c
        else if (p == G_ZWJ && (cur & G_EXT_PICT) && emoji == 2) brk = false;      // GB11
        else if (p == G_RI && q == G_RI && (ri_run % 2) == 1) brk = false;         // GB12/13
        else brk = true;                                                           // GB999
        if (brk) break;
        // states for the rules that look further back
        if (q == G_RI) ri_run = (p == G_RI) ? ri_run + 1 : 1; else ri_run = 0;
        if (cur & G_EXT_PICT) emoji = 1;
        else if (q == G_EXTEND && emoji == 1) emoji = 1;
        else if (q == G_ZWJ && emoji == 1) emoji = 2;
        else emoji = 0;
        if (cur & G_INCB_CONSONANT) { incb_cons = true; incb_linker = false; }
        else if (cur & G_INCB_LINKER) { if (incb_cons) incb_linker = true; }
        else if (!(cur & G_INCB_EXTEND) && q != G_ZWJ) { incb_cons = false; incb_linker = false; }
        prev = cur;
    }
    return j;
}

// ------------------------------------------------------------------------------------ Precompiled

// SentencePiece's precompiled_charsmap: a darts-clone double-array trie over UTF-8 byte strings whose
// values index a pool of NUL-terminated replacement strings.
struct Charsmap {
    std::vector<uint32_t> units;
    std::string pool;

    static bool has_leaf(uint32_t u) { return (u >> 8) & 1; }
    static uint32_t value(uint32_t u) { return u & ((1U << 31) - 1); }
    static uint32_t label(uint32_t u) { return u & ((1U << 31) | 0xFF); }
    static uint32_t offset(uint32_t u) { return (u >> 10) << ((u & (1U << 9)) >> 6); }

    // The value of the SHORTEST key that is a prefix of p[0:n] (what tokenizers takes), or -1.
    int64_t first_prefix(const uint8_t* p, size_t n) const {
        size_t m = units.size();
        if (!m) return -1;
        size_t pos = offset(units[0]);
        for (size_t i = 0; i < n; i++) {
            pos ^= p[i];
            if (pos >= m) return -1;
            uint32_t u = units[pos];
            if (label(u) != p[i]) return -1;
            pos ^= offset(u);
            if (pos >= m) return -1;
            if (has_leaf(u)) return value(units[pos]);
        }
        return -1;
    }

    // Calls f with each code point of the replacement for the UTF-8 chunk; false when it has none.
    template <class F>
    bool each_replacement_char(const uint8_t* p, size_t n, F f) const {
        int64_t v = first_prefix(p, n);
        if (v < 0 || (size_t)v >= pool.size()) return false;
        size_t i = (size_t)v;
        while (i < pool.size() && pool[i] != 0) {
            const uint8_t* bytes = (const uint8_t*)pool.data();
            if (i + utf8_width(bytes[i]) > pool.size()) break;
            f(utf8_next(bytes, pool.size(), i));
        }
        return true;
    }

    // The replacement for the UTF-8 chunk, or false (replacement written as code points to out).
    bool transform(const uint8_t* p, size_t n, std::vector<char32_t>& out) const {
        out.clear();
        return each_replacement_char(p, n, [&](char32_t c) { out.push_back(c); });
    }

    // Whether the map replaces the UTF-8 chunk (each_replacement_char would find a replacement).
    bool replaces(const uint8_t* p, size_t n) const {
        const int64_t v = first_prefix(p, n);
        return v >= 0 && (size_t)v < pool.size();
    }

    // Appends the UTF-8 of the chunk's replacement to out, or returns false.
    bool replace_utf8(const uint8_t* p, size_t n, std::vector<uint8_t>& out) const {
        return each_replacement_char(p, n, [&](char32_t c) {
            uint8_t u[4];
            out.insert(out.end(), u, u + utf8_encode(c, u));
        });
    }

    // Each ASCII char alone, kept as it is or not: a char followed by ASCII is a grapheme cluster of
    // its own (but CR), so most of an ASCII run needs no trie walk.
    uint64_t ascii_kept[2] = {0, 0};  // bit b: ASCII b is its own replacement (runs of them copy at once)
    bool kept(uint8_t b) const { return b < 128 && ((ascii_kept[b >> 6] >> (b & 63)) & 1); }
    void index_ascii() {
        for (int b = 0; b < 128; b++) {
            std::vector<uint8_t> out;
            uint8_t c = (uint8_t)b;
            if (!replace_utf8(&c, 1, out)) out.assign(1, c);
            if (out.size() == 1 && out[0] == c) ascii_kept[b >> 6] |= 1ULL << (b & 63);
        }
    }
};

// ------------------------------------------------------------------------------------ normalizers

enum NormKind {
    N_NFD, N_NFKD, N_NFC, N_NFKC, N_LOWER, N_STRIP, N_STRIP_ACCENTS, N_REPLACE, N_PREPEND,
    N_PRECOMPILED, N_BERT, N_PYTHON, N_NMT,
};

struct NormStep {
    int kind = 0;
    bool left = false, right = false;       // Strip
    std::u32string pattern, content;        // Replace (String pattern), Prepend (content)
    std::string pattern8, content8;         // the same in UTF-8 (the UTF-8 path's)
    bool collapse_spaces = false;           // Replace(Regex(" {2,}"), " "), done without a regex
    int charsmap = -1;                      // Precompiled: index in Pipeline::charsmaps
    bool clean_text = false, chinese = false, strip_accents = false, lowercase = false;  // BertNormalizer
    int python = -1;                        // N_PYTHON: index of the Python callback
};

// One thread's buffers for normalizing.
struct NormScratch {
    Text tmp;
    Edits edits;
    std::vector<char32_t> buf, repl;
    std::vector<uint8_t> bytes;
    std::vector<uint32_t> at;       // Precompiled over code points: each char's position (its index)
    std::vector<uint32_t> chars;    // BertNormalizer's chars ...
    std::vector<ptrdiff_t> source;  // ... and where each comes from
};

// Full decomposition (NFD or NFKD table) as edits, then canonical ordering of the marks: a stable
// sort by combining class in which each char takes its change along (as tokenizers' normalization
// crate sorts (char, change) pairs).
inline void decompose(const UnicodeTables& T, const CharMap& map, const Text& in, NormScratch& s) {
    Edits& ed = s.edits;
    ed.clear();
    for (size_t i = 0; i < in.size(); i++) {
        const char32_t c = in.c[i];
        const char32_t SB = 0xAC00, LB = 0x1100, VB = 0x1161, TB = 0x11A7;
        if (c >= SB && c < SB + 11172) {  // Hangul syllables decompose by arithmetic
            char32_t si = c - SB;
            ed.keep(LB + si / (21 * 28));
            ed.insert(VB + (si % (21 * 28)) / 28);
            if (si % 28) ed.insert(TB + si % 28);
            continue;
        }
        const uint32_t* m = map.find(c);
        if (!m) { ed.keep(c); continue; }
        ed.keep(m[1]);
        for (uint32_t k = 2; k <= m[0]; k++) ed.insert(m[k]);
    }
    std::vector<Edit>& e = ed.list;
    size_t i = 0;
    while (i < e.size()) {
        if (!T.ccc.get(e[i].c)) { i++; continue; }
        size_t j = i;
        while (j < e.size() && T.ccc.get(e[j].c)) j++;
        if (j - i > 1)
            std::stable_sort(e.begin() + i, e.begin() + j,
                             [&](const Edit& x, const Edit& y) { return T.ccc.get(x.c) < T.ccc.get(y.c); });
        i = j;
    }
}

// Canonical composition of decomposed edits, in place. A char composed into the char before it
// (its "composee") is gone, and the composee's change becomes change + (the gone char's change - 1),
// as tokenizers' normalization crate counts it.
inline void compose(const UnicodeTables& T, NormScratch& s) {
    std::vector<Edit>& e = s.edits.list;
    size_t w = 0;
    long starter = -1;   // index (in the written part) of the composee
    int last_ccc = -1;   // ccc of the last char written after it (-1: none)
    for (size_t i = 0; i < e.size(); i++) {
        Edit cur = e[i];
        int cc = T.ccc.get(cur.c);
        if (starter >= 0 && !(last_ccc != -1 && (last_ccc == 0 || last_ccc >= cc))) {
            char32_t comp = T.compose.find(e[starter].c, cur.c);
            if (comp) {
                e[starter].c = comp;
                e[starter].change += cur.change - 1;
                continue;
            }
        }
        if (cc == 0) { starter = (long)w; last_ccc = -1; }
        else last_ccc = cc;
        e[w++] = cur;
    }
    e.resize(w);
}

// A text's code points c[0:m] and where each starts in the text (at[m]: its end): the
// random access grapheme clusters need, over either reader.
struct Chars {
    const char32_t* c;
    const uint32_t* at;
    size_t m;
};

inline Chars code_points(const AlignedIn& in, NormScratch& s) {
    s.at.resize(in.t.size() + 1);
    for (size_t i = 0; i <= in.t.size(); i++) s.at[i] = (uint32_t)i;
    return {in.t.c.data(), s.at.data(), in.t.size()};
}

// The UTF-8 of chars [i, j) (the charsmap's keys are UTF-8), in s.bytes.
inline const uint8_t* chars_utf8(const AlignedIn&, const Chars& cs, size_t i, size_t j, NormScratch& s,
                                 size_t& len) {
    s.bytes.clear();
    for (size_t k = i; k < j; k++) put_utf8(cs.c[k], s.bytes);
    len = s.bytes.size();
    return s.bytes.data();
}

// tokenizers' Precompiled `replace` of `old` chars by r: r's first `old` chars are kept, the rest
// inserted; a shorter r leaves the removals to the last char written (Out::absorb).
template <class Out>
inline void precompiled_replace(Out& out, size_t old, const std::vector<char32_t>& r) {
    for (size_t k = 0; k < r.size(); k++) {
        if (k < old) out.keep(r[k]);
        else out.insert(r[k]);
    }
    if (r.size() < old) out.absorb(old - r.size());
}

// Whether the map changes the cluster [i, j): whole when under 6 bytes, else any char of it.
template <class In>
inline bool cluster_changes(const Charsmap& cm, const In& in, const Chars& cs, size_t i, size_t j, NormScratch& s) {
    size_t len;
    const uint8_t* u = chars_utf8(in, cs, i, j, s, len);
    if (len < 6 && cm.replaces(u, len)) return true;
    if (j - i == 1) return false;
    for (size_t k = i; k < j; k++) {
        u = chars_utf8(in, cs, k, k + 1, s, len);  // before len is read: arguments have no order
        if (cm.replaces(u, len)) return true;
    }
    return false;
}

// One cluster as Precompiled replaces it: whole when under 6 bytes and the map holds it, else char
// by char (a lone char was just looked up whole).
template <class In, class Out>
inline void precompiled_cluster(const Charsmap& cm, const In& in, const Chars& cs, size_t i, size_t j, Out& out,
                                NormScratch& s) {
    size_t len;
    const uint8_t* u = chars_utf8(in, cs, i, j, s, len);
    if (len < 6 && cm.transform(u, len, s.repl)) return precompiled_replace(out, j - i, s.repl);
    for (size_t k = i; k < j; k++) {
        u = chars_utf8(in, cs, k, k + 1, s, len);
        if (j - i > 1 && cm.transform(u, len, s.repl)) precompiled_replace(out, 1, s.repl);
        else out.copy(in, cs.at[k], cs.at[k + 1]);
    }
}

// ASCII text without CR: every char a cluster of its own, most of them kept (Charsmap::kept).
template <class In, class Out>
inline void precompiled_ascii(const Charsmap& cm, const In& in, Out& out, NormScratch& s) {
    size_t run = 0;  // chars [run, a) come out as they are
    for (size_t i = 0; i < in.end();) {
        const size_t a = i;
        const uint8_t b = (uint8_t)in.next(i);
        if (cm.kept(b)) continue;
        out.copy(in, run, a);
        if (cm.transform(&b, 1, s.repl)) precompiled_replace(out, 1, s.repl);
        else out.copy(in, a, i);
        run = i;
    }
    out.copy(in, run, in.end());
}

// SentencePiece's precompiled_charsmap as tokenizers applies it, grapheme cluster by cluster; runs
// the map leaves as they are are copied at once. An ASCII char followed by ASCII is a cluster of its
// own (but CR), so such chars need no cluster search and no trie walk.
template <class In, class Out>
inline void precompiled_step(const Charsmap& cm, const UnicodeTables& T, const In& in, Out& out, NormScratch& s) {
    if (in.ascii() && in.find(U'\r', '\r', 0) == in.end()) return precompiled_ascii(cm, in, out, s);
    const Chars cs = code_points(in, s);
    const char32_t* c = cs.c;
    size_t run = 0;  // chars [run, i) come out as they are
    for (size_t i = 0; i < cs.m;) {
        const bool alone = c[i] < 0x80 && c[i] != U'\r' && (i + 1 == cs.m || c[i + 1] < 0x80);
        const size_t j = alone ? i + 1 : grapheme_end(T, c, i, cs.m);
        if (alone ? cm.kept((uint8_t)c[i]) : !cluster_changes(cm, in, cs, i, j, s)) {
            i = j;
            continue;
        }
        out.copy(in, cs.at[run], cs.at[i]);
        precompiled_cluster(cm, in, cs, i, j, out, s);
        run = i = j;
    }
    out.copy(in, cs.at[run], cs.at[cs.m]);
}

// Each char mapped through `map` (Lowercase).
template <class In, class Out>
inline void map_step(const CharMap& map, const In& in, Out& out) {
    for (size_t i = 0; i < in.end();) {
        const size_t a = i;
        const uint32_t* m = map.find(in.next(i));
        if (!m) { out.copy(in, a, i); continue; }
        out.keep(m[1]);
        for (uint32_t k = 2; k <= m[0]; k++) out.insert(m[k]);
    }
}

// The chars `drop` refuses removed and the rest through `to` (StripAccents, Nmt).
template <class In, class Out, class Drop, class To>
inline void filter_step(const In& in, Drop drop, To to, Out& out) {
    for (size_t i = 0; i < in.end();) {
        const size_t a = i;
        const char32_t c = in.next(i);
        if (drop(c)) { out.remove(1); continue; }
        const char32_t d = to(c);
        if (d == c) out.copy(in, a, i);
        else out.keep(d);
    }
}

inline bool nmt_drops(char32_t c) {
    return (c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0x8F || c == 0x9F;
}

// tokenizers' Nmt turns these spaces and separators into " ".
inline char32_t nmt_space(char32_t c) {
    const bool space = c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
                       (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 || c == 0xFEFF ||
                       c == 0xFFFD;
    return space ? U' ' : c;
}

// Strip: white space off either end.
template <class In, class Out>
inline void strip_step(const NormStep& st, const UnicodeTables& T, const In& in, Out& out) {
    size_t a = 0, b = in.end();
    auto white = [&](char32_t c) { return (T.flags.get(c) & F_WHITESPACE) != 0; };
    while (st.left && a < b) {
        size_t i = a;
        if (!white(in.next(i))) break;
        a = i;
    }
    while (st.right && b > a) {
        size_t k = in.back(b), i = k;
        if (!white(in.next(i))) break;
        b = k;
    }
    out.remove(in.chars(0, a));
    out.copy(in, a, b);
}

// Prepend: the content before the text (tokenizers re-inserts the first char after it).
template <class In, class Out>
inline void prepend_step(const std::u32string& content, const In& in, Out& out) {
    if (!in.end()) return;
    size_t i = 0;
    const char32_t first = in.next(i);
    if (content.empty()) {
        out.insert(first);  // it takes the empty span at the start
        out.remove(1);
    } else {
        out.keep(content[0]);
        for (size_t k = 1; k < content.size(); k++) out.insert(content[k]);
        out.insert(first);
    }
    out.copy(in, i, in.end());
}

// Replace with a String pattern or Regex(" {2,}"): matches left to right, not overlapping; an empty
// pattern matches before every char and at the end.
template <class In, class Out>
inline void replace_step(const NormStep& st, const In& in, Out& out) {
    const size_t n = in.end();
    if (st.pattern.empty() && !st.collapse_spaces) {
        for (size_t i = 0; i < n;) {
            replace_match(out, 0, st.content);
            const size_t a = i;
            in.next(i);
            out.copy(in, a, i);
        }
        if (n) replace_match(out, 0, st.content);
        return;
    }
    const char32_t first = st.collapse_spaces ? U' ' : st.pattern[0];
    const uint8_t first8 = st.collapse_spaces ? ' ' : (uint8_t)st.pattern8[0];
    for (size_t i = 0; i < n;) {
        const size_t at = in.find(first, first8, i);
        out.copy(in, i, at);
        if (at == n) break;
        size_t m = st.collapse_spaces ? in.spaces(at) : in.match(st.pattern, st.pattern8, at);
        if (st.collapse_spaces && m < 2) m = 0;
        if (!m) {
            i = at;
            in.next(i);
            out.copy(in, at, i);
            continue;
        }
        replace_match(out, st.collapse_spaces ? m : st.pattern.size(), st.content);
        i = at + m;
    }
}

// NFD, NFKD, NFC, NFKC: `decompose`, then `compose` for the composed forms (ASCII is its own form).
template <class In, class Out>
inline void unicode_form_step(const NormStep& st, const UnicodeTables& T, const In& in, Out& out, NormScratch& s) {
    if (in.ascii()) { out.copy(in, 0, in.end()); return; }
    const bool compat = st.kind == N_NFKD || st.kind == N_NFKC;
    decompose(T, compat ? T.nfkd : T.nfd, in.text(), s);
    if (st.kind == N_NFC || st.kind == N_NFKC) compose(T, s);
    out.edits(s.edits);
}

// The steps written once over both texts; false for a kind they do not hold (Precompiled,
// BertNormalizer and Python callbacks are the callers').
template <class In, class Out>
inline bool text_step(const NormStep& st, const UnicodeTables& T, const In& in, Out& out, NormScratch& s) {
    switch (st.kind) {
    case N_NFD: case N_NFKD: case N_NFC: case N_NFKC:
        unicode_form_step(st, T, in, out, s);
        return true;
    case N_LOWER:
        map_step(T.lower, in, out);
        return true;
    case N_STRIP_ACCENTS:
        filter_step(in, [&](char32_t c) { return (T.flags.get(c) & F_STRIP_ACCENT) != 0; },
                    [](char32_t c) { return c; }, out);
        return true;
    case N_NMT:
        filter_step(in, nmt_drops, nmt_space, out);
        return true;
    case N_STRIP:
        strip_step(st, T, in, out);
        return true;
    case N_PREPEND:
        prepend_step(st.content, in, out);
        return true;
    case N_REPLACE:
        replace_step(st, in, out);
        return true;
    default:
        return false;
    }
}

// One normalizer step, in -> out (N_PYTHON steps are run by the caller).
inline void normalize_step(const NormStep& st, const UnicodeTables& T, const std::vector<Charsmap>& maps,
                           const Text& in, Text& out, NormScratch& s) {
    Edits& ed = s.edits;
    ed.clear();
    AlignedOut writer{ed};
    if (text_step(st, T, AlignedIn{in}, writer, s)) {
        ed.apply(in, out);
        return;
    }
    switch (st.kind) {
    case N_PRECOMPILED:
        precompiled_step(maps[st.charsmap], T, AlignedIn{in}, writer, s);
        ed.apply(in, out);
        return;
    case N_BERT: {  // the fast paths' BertNormalizer: each char takes the span of the char it comes from
        s.chars.clear();
        s.source.clear();
        T.bert((const uint32_t*)in.c.data(), in.size(), st.clean_text, st.chinese, st.strip_accents, st.lowercase,
               s.chars, s.source);
        out.clear();
        out.base = in.base;
        for (size_t k = 0; k < s.chars.size(); k++) out.push((char32_t)s.chars[k], in.a[s.source[k]]);
        return;
    }
    default:
        out = in;
        return;
    }
}

}  // namespace pipe
}  // namespace tokkit
