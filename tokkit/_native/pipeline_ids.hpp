// The general encode path for ids only, part 2: pre-tokenizers over UTF-8 pieces, without
// alignments. Metaspace and Split(String) cut the bytes directly; the other splits find their
// pieces with the same code as the path with alignments (split_segments, over the piece's code
// points) and cut the bytes where it says.
#pragma once
#include "pipeline_split.hpp"
#include "pipeline_utf8.hpp"

namespace tokkit {
namespace pipe {

// A piece: bytes [a, b) of a BytePieces store, and where its first char comes from (see Origin).
struct BytePiece {
    uint32_t a, b;
    Origin origin;
};

struct BytePieces {
    std::vector<uint8_t> store;
    std::vector<BytePiece> list;
    void clear() { store.clear(); list.clear(); }
};

// What a step over UTF-8 came to: done, a Python pattern raised, or only the spans can tell (a
// Metaspace "first" meeting an UNSURE origin), so the text goes the path with alignments.
enum StepResult { STEP_OK, STEP_RAISED, STEP_SPANS };

// Adds p[a:b) as a piece of `out`; `origin` is that of the text p starts, so a piece starting later
// has its first char from further on (as push_kept gives a later piece its own first char's span).
inline void push_bytes(const uint8_t* p, size_t a, size_t b, Origin origin, BytePieces& out) {
    if (b <= a) return;
    const size_t at = out.store.size();
    out.store.insert(out.store.end(), p + a, p + b);
    out.list.push_back({(uint32_t)at, (uint32_t)(at + b - a), a == 0 ? origin : dropped_lead(origin)});
}

// Non-overlapping occurrences of `pattern` (non-empty, valid UTF-8) in p[0:n], left to right.
inline void find_bytes(const uint8_t* p, size_t n, const std::string& pattern,
                       std::vector<std::pair<size_t, size_t>>& out) {
    out.clear();
    const size_t m = pattern.size();
    for (size_t i = 0; i + m <= n;) {
        const void* hit = std::memchr(p + i, (uint8_t)pattern[0], n - m + 1 - i);
        if (!hit) break;
        const size_t at = (size_t)((const uint8_t*)hit - p);
        if (std::memcmp(p + at, pattern.data(), m) == 0) {
            out.push_back({at, at + m});
            i = at + m;
        } else {
            i = at + 1;
        }
    }
}

// Adds out.store[a:b) as a piece (see push_bytes for its origin).
inline void push_stored(size_t a, size_t b, size_t start, Origin origin, BytePieces& out) {
    if (b > a) out.list.push_back({(uint32_t)a, (uint32_t)b, a == start ? origin : dropped_lead(origin)});
}

// Metaspace (metaspace_step, metaspace_cuts) written straight into out's store.
inline StepResult metaspace_utf8(const PreStep& st, const uint8_t* p, size_t n, Origin origin, BytePieces& out,
                                 Utf8Scratch& s) {
    const std::string& rep = st.replacement8;
    const bool leads = n && (p[0] == ' ' || (n >= rep.size() && std::memcmp(p, rep.data(), rep.size()) == 0));
    if (n && !leads && st.prepend_scheme == 1 && origin == UNSURE) return STEP_SPANS;  // "first": reads the span
    std::vector<uint8_t>& o = out.store;
    const size_t start = o.size();
    Origin first = origin;  // the pieces' origins are push_stored's
    Utf8Out w{o, first, origin, 0, start};
    metaspace_step(st.replacement, n && metaspace_prepends(st, leads, origin == AT_ZERO), Utf8In{p, n, s}, w);
    const Utf8In text{o.data() + start, o.size() - start, s};
    metaspace_cuts(text, st, [&](size_t a, size_t b) { push_stored(start + a, start + b, start, origin, out); });
    return STEP_OK;
}

// Chars written as UTF-8 with nothing else kept: ByteLevel's symbols, whose piece carries the origin.
struct SymbolsOut {
    std::vector<uint8_t>& out;
    void keep(char32_t c) { put(c); }
    void insert(char32_t c) { put(c); }
    void put(char32_t c) {  // a symbol is below U+0800: one byte or two
        if (c < 0x80) {
            out.push_back((uint8_t)c);
        } else {
            const uint8_t two[2] = {(uint8_t)(0xC0 | (c >> 6)), (uint8_t)(0x80 | (c & 0x3F))};
            out.insert(out.end(), two, two + 2);
        }
    }
};

// ByteLevel: (a space first,) the GPT-2 pattern's pieces, each as its bytes' symbols.
inline void bytelevel_utf8(const PreStep& st, const SplitContext& ctx, const uint8_t* p, size_t n, Origin origin,
                           BytePieces& out, SplitScratch& ss, Utf8Scratch& s, std::vector<uint8_t>& tmp) {
    tmp.clear();
    if (st.add_prefix_space && n && p[0] != ' ') tmp.push_back(' ');
    tmp.insert(tmp.end(), p, p + n);
    const uint8_t* q = tmp.data();
    const size_t m = tmp.size();
    decode(q, m, s);
    bytelevel_segments(st, ctx, s.cps.data(), s.cps.size(), ss);
    for (const Segment& g : ss.merged) {
        const size_t a = s.at[g.a], b = s.at[g.b];
        if (b <= a) continue;
        const size_t at = out.store.size();
        SymbolsOut w{out.store};
        bytelevel_symbols(Utf8In{q, m, s}, a, b, w);
        out.list.push_back({(uint32_t)at, (uint32_t)out.store.size(), a == 0 ? origin : dropped_lead(origin)});
    }
}

// Any other step: split_segments over the piece's code points, the pieces cut from its bytes.
inline bool split_utf8(const PreStep& st, const UnicodeTables& T, const SplitContext& ctx, void* pyctx,
                       const uint8_t* p, size_t n, Origin origin, BytePieces& out, SplitScratch& ss, Utf8Scratch& s) {
    if (st.kind == P_SPLIT_STRING && !st.pattern8.empty()) {  // bytes compare as chars (see replace_utf8)
        find_bytes(p, n, st.pattern8, ss.found);
        segments_from(ss.found, n, ss.segs);
        apply_behavior(ss.segs, st.behavior, st.invert, ss.merged);
        for (const Segment& g : ss.merged) push_bytes(p, g.a, g.b, origin, out);
        return true;
    }
    decode(p, n, s);
    if (!split_segments(st, T, ctx, pyctx, s.cps.data(), s.cps.size(), ss)) return false;
    for (const Segment& g : ss.merged) push_bytes(p, s.at[g.a], s.at[g.b], origin, out);
    return true;
}

// One pre-tokenizer step over every piece of `in` into `out`.
inline StepResult pre_tokenize_utf8(const PreStep& st, const UnicodeTables& T, const SplitContext& ctx, void* pyctx,
                                    const BytePieces& in, BytePieces& out, SplitScratch& ss, Utf8Scratch& s) {
    out.clear();
    for (const BytePiece& r : in.list) {
        const uint8_t* p = in.store.data() + r.a;
        const size_t n = r.b - r.a;
        if (st.kind == P_METASPACE) {
            if (metaspace_utf8(st, p, n, r.origin, out, s) == STEP_SPANS) return STEP_SPANS;
        } else if (st.kind == P_BYTELEVEL) {
            bytelevel_utf8(st, ctx, p, n, r.origin, out, ss, s, s.tmp);
        } else if (!split_utf8(st, T, ctx, pyctx, p, n, r.origin, out, ss, s)) {
            return STEP_RAISED;
        }
    }
    return STEP_OK;
}

}  // namespace pipe
}  // namespace tokkit
