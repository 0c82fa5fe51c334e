// The general encode path, part 2: pre-tokenizers. Each step splits every current piece (and may
// transform its chars), as tokenizers' PreTokenizedString::split does.
#pragma once
#include "pattern_scan.hpp"
#include "pipeline_scan.hpp"
#include "pipeline_text.hpp"

namespace tokkit {
namespace pipe {

// A piece: chars [begin, end) of a Pieces store, and the original offset its string starts at
// (tokenizers' offsets_original().0, which Metaspace's "first" scheme reads).
struct Range {
    size_t begin, end;
    int32_t orig_start;
};

struct Pieces {
    Text store;
    std::vector<Range> list;
    void clear() { store.clear(); list.clear(); }
};

enum PreKind {
    P_METASPACE, P_SPLIT_STRING, P_SPLIT_PYTHON, P_BYTELEVEL, P_WHITESPACE,
    P_WHITESPACE_SPLIT, P_PUNCTUATION, P_DIGITS, P_BERT,
    P_SPLIT_FAMILY,  // a Split(Regex) whose pattern is GPT-2's, cl100k's, qwen2's or o200k's: pattern_scan.hpp
    P_SPLIT_SCAN,    // a Split(Regex) of character classes pipeline_scan.hpp scans (ScanKind)
};

enum Behavior { B_REMOVED, B_ISOLATED, B_MERGED_PREVIOUS, B_MERGED_NEXT, B_CONTIGUOUS };

// Finds a regex's matches in c[0:n] (a Python callback; returns false when it raised).
typedef bool (*RegexFn)(void* ctx, int index, const char32_t* c, size_t n,
                        std::vector<std::pair<size_t, size_t>>& out);

struct PreStep {
    int kind = 0;
    char32_t replacement = 0x2581;   // Metaspace
    int prepend_scheme = 0;          // 0 always, 1 first, 2 never
    bool split = true;
    std::u32string pattern;          // Split(String)
    std::string pattern8, replacement8;  // Split(String)'s pattern and Metaspace's replacement in UTF-8
    int behavior = B_ISOLATED;
    bool invert = false;
    bool add_prefix_space = false, use_regex = true;  // ByteLevel
    bool individual_digits = false;
    int python = -1;                 // P_SPLIT_PYTHON: index of the Python pattern
    int family = 0;                  // P_SPLIT_FAMILY: FAMILY_CL100K, FAMILY_QWEN2 or FAMILY_O200K
    int scan = 0;                    // P_SPLIT_SCAN: a ScanKind
};

struct Segment {
    size_t a, b;
    bool match;
};

struct SplitScratch {
    std::vector<Segment> segs, merged;
    std::vector<std::pair<size_t, size_t>> found;
    Text piece, tmp;
    Edits edits;
};

// Segments covering [0, n) from sorted, non-overlapping matches.
inline void segments_from(const std::vector<std::pair<size_t, size_t>>& found, size_t n, std::vector<Segment>& out) {
    out.clear();
    size_t prev = 0;
    for (auto& m : found) {
        if (m.first > prev) out.push_back({prev, m.first, false});
        out.push_back({m.first, m.second, true});  // an empty match too: it separates (as tokenizers)
        prev = m.second;
    }
    if (prev < n) out.push_back({prev, n, false});
}

// Segments of a char predicate: each matching char is a match of its own (tokenizers' split by fn).
template <class Pred>
inline void segments_by(const char32_t* c, size_t n, Pred pred, std::vector<Segment>& out) {
    out.clear();
    size_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (pred(c[i])) {
            if (i > prev) out.push_back({prev, i, false});
            out.push_back({i, i + 1, true});
            prev = i + 1;
        }
    }
    if (prev < n) out.push_back({prev, n, false});
}

// tokenizers' SplitDelimiterBehavior over segments: the (a, b) ranges to keep as pieces.
inline void apply_behavior(std::vector<Segment>& segs, int behavior, bool invert, std::vector<Segment>& out) {
    out.clear();
    if (invert) for (auto& s : segs) s.match = !s.match;
    bool prev_match = false;
    switch (behavior) {
    case B_REMOVED:
        for (auto& s : segs) if (!s.match) out.push_back(s);
        break;
    case B_ISOLATED:
        out = segs;
        break;
    case B_MERGED_PREVIOUS:
        for (auto& s : segs) {
            if (s.match && !prev_match && !out.empty()) out.back().b = s.b;
            else out.push_back(s);
            prev_match = s.match;
        }
        break;
    case B_MERGED_NEXT:
        for (size_t k = segs.size(); k-- > 0;) {
            const Segment& s = segs[k];
            if (s.match && !prev_match && !out.empty()) out.back().a = s.a;
            else out.push_back(s);
            prev_match = s.match;
        }
        std::reverse(out.begin(), out.end());
        break;
    case B_CONTIGUOUS:
        for (auto& s : segs) {
            if (s.match == prev_match && !out.empty()) out.back().b = s.b;
            else out.push_back(s);
            prev_match = s.match;
        }
        break;
    }
}

// Occurrences of a string pattern, left to right, not overlapping.
inline void find_string(const char32_t* c, size_t n, const std::u32string& p,
                        std::vector<std::pair<size_t, size_t>>& out) {
    out.clear();
    if (p.empty()) {  // an empty pattern matches at every place, the end too
        for (size_t i = 0; i <= n; i++) out.push_back({i, i});
        return;
    }
    size_t i = 0;
    while (i + p.size() <= n) {
        if (std::equal(p.begin(), p.end(), c + i)) {
            out.push_back({i, i + p.size()});
            i += p.size();
        } else {
            i++;
        }
    }
}

inline bool is_regex_word(const UnicodeTables& T, char32_t c) { return T.flags.get(c) & F_WORD; }

// Whitespace pre-tokenizer: the matches of \w+|[^\w\s]+ are kept, the rest removed.
inline void whitespace_segments(const UnicodeTables& T, const char32_t* c, size_t n, std::vector<Segment>& out) {
    out.clear();
    size_t i = 0;
    while (i < n) {
        uint16_t f = T.flags.get(c[i]);
        if (f & F_WORD) {
            size_t j = i + 1;
            while (j < n && (T.flags.get(c[j]) & F_WORD)) j++;
            out.push_back({i, j, false});
            i = j;
        } else if (!(f & F_REGEX_SPACE)) {
            size_t j = i + 1;
            while (j < n && !(T.flags.get(c[j]) & (F_WORD | F_REGEX_SPACE))) j++;
            out.push_back({i, j, false});
            i = j;
        } else {
            i++;
        }
    }
}

// Appends piece text[a:b) to `out` as a new piece.
inline void push_piece(const Text& text, size_t a, size_t b, Pieces& out) {
    if (b <= a) return;
    size_t at = out.store.size();
    out.store.c.insert(out.store.c.end(), text.c.begin() + a, text.c.begin() + b);
    out.store.a.insert(out.store.a.end(), text.a.begin() + a, text.a.begin() + b);
    out.list.push_back({at, at + (b - a), text.a[a].s});
}

// Copies piece r of `in` into s.piece.
inline void load_piece(const Pieces& in, const Range& r, Text& piece) {
    piece.c.assign(in.store.c.begin() + r.begin, in.store.c.begin() + r.end);
    piece.a.assign(in.store.a.begin() + r.begin, in.store.a.begin() + r.end);
    piece.base = r.orig_start;
}

// Adds the ranges `keep` of `piece` as pieces of `out` (the first one keeps orig_start when it
// starts the piece: an unsplit piece keeps its original start).
inline void push_kept(const Text& piece, const std::vector<Segment>& keep, int32_t orig_start, Pieces& out) {
    for (const Segment& s : keep) {
        if (s.b <= s.a) continue;
        size_t before = out.list.size();
        push_piece(piece, s.a, s.b, out);
        if (out.list.size() > before && s.a == 0 && s.b == piece.size()) out.list.back().orig_start = orig_start;
    }
}

// GPT-2's byte -> symbol table (printable bytes stand for themselves, the others for 256 + n).
inline char32_t byte_symbol(uint8_t b) {
    static char32_t table[256];
    static bool ready = false;
    if (!ready) {  // a benign race: every thread writes the same values
        int extra = 0;
        for (int x = 0; x < 256; x++) {
            bool printable = (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255);
            table[x] = printable ? (char32_t)x : (char32_t)(256 + extra++);
        }
        ready = true;
    }
    return table[b];
}

// ByteLevel's symbols of in[a:b): each char becomes the GPT-2 symbols of its UTF-8 bytes, the first
// in the char's place and the others inserted after it (all with the char's span). Over either text.
template <class In, class Out>
inline void bytelevel_symbols(const In& in, size_t a, size_t b, Out& out) {
    uint8_t u[4];
    for (size_t i = a; i < b;) {
        const int m = in.char_bytes(i, u);
        out.keep(byte_symbol(u[0]));
        for (int k = 1; k < m; k++) out.insert(byte_symbol(u[k]));
    }
}

// Metaspace's text: each space becomes the replacement, which also goes first when `prepend` (the
// first char is then no space). Over either text (see AlignedIn / Utf8In).
template <class In, class Out>
inline void metaspace_step(char32_t rep, bool prepend, const In& in, Out& out) {
    size_t i = 0;
    if (prepend && in.end()) {  // tokenizers' prepend: the replacement takes the first char's span
        const char32_t first = in.next(i);
        out.keep(rep);
        out.insert(first);
    }
    while (i < in.end()) {
        const size_t at = in.find(U' ', ' ', i);
        out.copy(in, i, at);
        if (at == in.end()) break;
        out.remove(1);
        out.insert(rep);
        i = at + 1;
    }
}

// Whether Metaspace puts its replacement first: the scheme ("always", "first": only at the text's
// own start, "never") and the text does not start with a space or the replacement already.
inline bool metaspace_prepends(const PreStep& st, bool leads, bool at_zero) {
    return !leads && (st.prepend_scheme == 0 || (st.prepend_scheme == 1 && at_zero));
}

// Metaspace's split: a piece starts at each replacement but one at the very start (each replacement
// merged with what follows it); cut(a, b) for each piece of the text `t`.
template <class In, class Cut>
inline void metaspace_cuts(const In& t, const PreStep& st, Cut cut) {
    const std::u32string rep(1, st.replacement);
    size_t a = 0;
    for (size_t i = 1; st.split && i < t.end();) {
        const size_t at = t.find(st.replacement, (uint8_t)st.replacement8[0], i);
        if (at == t.end()) break;
        i = at + 1;
        if (!t.match(rep, st.replacement8, at)) continue;
        cut(a, at);
        a = at;
    }
    cut(a, t.end());
}

struct SplitContext {
    RegexFn regex = nullptr;
    PatternClasses classes{};  // the family scanners' classes (GPT-2's too), as tokenizers' regex engine has them
    ClassScan scan{};          // the class scanners' (the same table, and [\p{P}\p{S}])
};

// The pieces of a family's pattern in c[0:n], as (start, end) pairs: they cover every char, since
// each char is matched by one alternative or another (a letter, a digit, white space, or the rest).
inline void family_matches(const PatternClasses& cls, int family, const char32_t* c, size_t n,
                           std::vector<std::pair<size_t, size_t>>& out) {
    size_t ends[64];
    size_t a = 0;
    while (a < n) {
        const size_t k = pattern_piece_ends_units<char32_t>(cls, family, c, a, n, ends, 64);
        if (!k) break;  // not a family the scanners know (build never makes such a step)
        for (size_t i = 0; i < k; i++) {
            out.push_back({a, ends[i]});
            a = ends[i];
        }
    }
}

// ByteLevel's pieces of c[0:n] into s.merged: the GPT-2 pattern's, or the whole text without use_regex.
inline void bytelevel_segments(const PreStep& st, const SplitContext& ctx, const char32_t* c, size_t n,
                               SplitScratch& s) {
    s.found.clear();
    if (st.use_regex) family_matches(ctx.classes, FAMILY_GPT2, c, n, s.found);
    else if (n) s.found.push_back({0, n});
    segments_from(s.found, n, s.merged);
}

// The pieces a splitting step (every kind but Metaspace and ByteLevel, which also change chars)
// keeps of c[0:n], into s.merged; false when a Python pattern raised. Both the path with offsets and
// the UTF-8 path for ids split with it.
inline bool split_segments(const PreStep& st, const UnicodeTables& T, const SplitContext& ctx, void* pyctx,
                           const char32_t* c, size_t n, SplitScratch& s) {
    switch (st.kind) {
    case P_WHITESPACE_SPLIT:
        segments_by(c, n, [&](char32_t x) { return (T.flags.get(x) & F_WHITESPACE) != 0; }, s.segs);
        apply_behavior(s.segs, B_REMOVED, false, s.merged);
        break;
    case P_WHITESPACE:
        whitespace_segments(T, c, n, s.merged);
        break;
    case P_PUNCTUATION:
        segments_by(c, n, [&](char32_t x) { return (T.flags.get(x) & F_PUNCT) != 0; }, s.segs);
        apply_behavior(s.segs, st.behavior, false, s.merged);
        break;
    case P_DIGITS:
        segments_by(c, n, [&](char32_t x) { return (T.flags.get(x) & F_NUMERIC) != 0; }, s.segs);
        apply_behavior(s.segs, st.individual_digits ? B_ISOLATED : B_CONTIGUOUS, false, s.merged);
        break;
    case P_BERT: {
        segments_by(c, n, [&](char32_t x) { return (T.flags.get(x) & F_BERT_SPLIT) != 0; }, s.segs);
        apply_behavior(s.segs, B_REMOVED, false, s.merged);
        std::vector<Segment> words = s.merged;
        s.merged.clear();
        for (const Segment& w : words) {
            std::vector<Segment> inner;
            segments_by(c + w.a, w.b - w.a, [&](char32_t x) { return (T.flags.get(x) & F_BERT_PUNCT) != 0; }, inner);
            for (Segment t : inner) s.merged.push_back({t.a + w.a, t.b + w.a, false});
        }
        break;
    }
    case P_SPLIT_STRING:
        find_string(c, n, st.pattern, s.found);
        segments_from(s.found, n, s.segs);
        apply_behavior(s.segs, st.behavior, st.invert, s.merged);
        break;
    case P_SPLIT_FAMILY:
    case P_SPLIT_PYTHON:
    case P_SPLIT_SCAN:
        s.found.clear();
        if (st.kind == P_SPLIT_SCAN) class_scan_matches(ctx.scan, st.scan, c, n, s.found);
        else if (st.kind == P_SPLIT_FAMILY) family_matches(ctx.classes, st.family, c, n, s.found);
        else if (!ctx.regex(pyctx, st.python, c, n, s.found)) return false;
        segments_from(s.found, n, s.segs);
        apply_behavior(s.segs, st.behavior, st.invert, s.merged);
        break;
    default:
        s.merged.assign(1, Segment{0, n, false});
    }
    return true;
}

// One pre-tokenizer step over every piece of `in` into `out`; false when a Python pattern raised.
inline bool pre_tokenize_step(const PreStep& st, const UnicodeTables& T, const SplitContext& ctx, void* pyctx,
                              const Pieces& in, Pieces& out, SplitScratch& s) {
    out.clear();
    Text& piece = s.piece;
    for (const Range& r : in.list) {
        load_piece(in, r, piece);
        const char32_t* c = piece.c.data();
        size_t n = piece.size();
        switch (st.kind) {
        case P_METASPACE: {
            Edits& ed = s.edits;
            ed.clear();
            AlignedOut w{ed};
            const bool leads = n && (c[0] == U' ' || c[0] == st.replacement);
            metaspace_step(st.replacement, n && metaspace_prepends(st, leads, r.orig_start == 0), AlignedIn{piece}, w);
            ed.apply(piece, s.tmp);
            piece = s.tmp;
            piece.base = r.orig_start;
            s.merged.clear();
            metaspace_cuts(AlignedIn{piece}, st, [&](size_t a, size_t b) { s.merged.push_back({a, b, false}); });
            break;
        }
        case P_BYTELEVEL: {
            if (st.add_prefix_space && n && c[0] != U' ') {
                s.edits.clear();
                AlignedOut w{s.edits};
                prepend_step(U" ", AlignedIn{piece}, w);
                s.edits.apply(piece, s.tmp);
                piece = s.tmp;
                piece.base = r.orig_start;
                c = piece.c.data();
                n = piece.size();
            }
            bytelevel_segments(st, ctx, c, n, s);
            // each kept piece becomes its UTF-8 bytes as GPT-2 symbols (later bytes inserted)
            for (const Segment& g : s.merged) {
                if (g.b <= g.a) continue;
                Edits& ed = s.edits;
                ed.clear();
                s.tmp.c.assign(piece.c.begin() + g.a, piece.c.begin() + g.b);
                s.tmp.a.assign(piece.a.begin() + g.a, piece.a.begin() + g.b);
                s.tmp.base = (g.a == 0) ? r.orig_start : piece.a[g.a].s;
                AlignedOut w{ed};
                bytelevel_symbols(AlignedIn{s.tmp}, 0, s.tmp.size(), w);
                Text sym;
                ed.apply(s.tmp, sym);
                size_t before = out.list.size();
                push_piece(sym, 0, sym.size(), out);
                if (out.list.size() > before) {
                    out.list.back().orig_start = (g.a == 0 && g.b == n) ? r.orig_start : piece.a[g.a].s;
                }
            }
            continue;
        }
        default:
            if (!split_segments(st, T, ctx, pyctx, c, n, s)) return false;
        }
        push_kept(piece, s.merged, r.orig_start, out);
    }
    return true;
}

}  // namespace pipe
}  // namespace tokkit
