// Plain-typed entry points into the general encode path, for the Cython wrapper (pipeline.pyx):
// building a Pipeline step by step from a tokenizer.json's components, and encoding one text.
#pragma once
#include "pipeline.hpp"

namespace tokkit {
namespace pipe {

inline std::u32string u32(const uint32_t* p, size_t n) { return std::u32string((const char32_t*)p, n); }

inline void add_norm(Pipeline& P, int kind, const uint32_t* pat, size_t np, const uint32_t* content, size_t nc,
                     bool left, bool right, bool collapse, int charsmap, int python) {
    NormStep s;
    s.kind = kind;
    s.pattern = u32(pat, np);
    s.content = u32(content, nc);
    s.left = left;
    s.right = right;
    s.collapse_spaces = collapse;
    s.charsmap = charsmap;
    s.python = python;
    P.norm.push_back(s);
}

inline void add_bert_norm(Pipeline& P, bool clean, bool chinese, bool strip, bool lower) {
    NormStep s;
    s.kind = N_BERT;
    s.clean_text = clean;
    s.chinese = chinese;
    s.strip_accents = strip;
    s.lowercase = lower;
    P.norm.push_back(s);
}

inline void add_pre(Pipeline& P, int kind, uint32_t replacement, int scheme, bool split, const uint32_t* pat,
                    size_t np, int behavior, bool invert, bool add_prefix_space, bool use_regex, bool individual,
                    int python, int family) {
    PreStep s;
    s.kind = kind;
    s.replacement = replacement;
    s.prepend_scheme = scheme;
    s.split = split;
    s.pattern = u32(pat, np);
    s.behavior = behavior;
    s.invert = invert;
    s.add_prefix_space = add_prefix_space;
    s.use_regex = use_regex;
    s.individual_digits = individual;
    s.python = python;
    s.family = family;
    P.pre.push_back(s);
}

inline int add_charsmap(Pipeline& P, const uint32_t* units, size_t n, const char* pool, size_t np) {
    Charsmap m;
    m.units.assign(units, units + n);
    m.pool.assign(pool, np);
    P.charsmaps.push_back(m);
    return (int)P.charsmaps.size() - 1;
}

inline void add_added(Pipeline& P, const uint32_t* c, size_t n, int32_t id, bool single_word, bool lstrip,
                      bool rstrip, bool normalized, bool special) {
    P.added.push_back(AddedToken{u32(c, n), id, single_word, lstrip, rstrip, normalized, special});
    if (normalized) P.any_normalized = true;
    else P.any_raw = true;
}

inline void model_token(Pipeline& P, const char* p, size_t n, int32_t id, bool prefixes) {
    P.model.vocab.add((const uint8_t*)p, n, id, prefixes);
    if (n > P.model.max_piece_bytes) P.model.max_piece_bytes = n;
}

inline void model_merge(Pipeline& P, int32_t a, int32_t b, int32_t rank, int32_t merged) {
    P.model.merges.add(a, b, rank, merged);
}

inline void set_tables(Pipeline& P, const uint16_t* lower1, const uint32_t* lower2, const uint16_t* nfd1,
                       const uint32_t* nfd2, const uint16_t* nfkd1, const uint32_t* nfkd2, const uint32_t* pool,
                       const uint16_t* flags1, const uint16_t* flags2, const uint16_t* ccc1, const uint8_t* ccc2,
                       const uint64_t* ckeys, const uint32_t* cvals, size_t ncomp, const uint16_t* g1,
                       const uint16_t* g2) {
    P.T.lower = CharMap{lower1, lower2, pool};
    P.T.nfd = CharMap{nfd1, nfd2, pool};
    P.T.nfkd = CharMap{nfkd1, nfkd2, pool};
    P.T.flags = FlagMap{flags1, flags2};
    P.T.ccc = CccMap{ccc1, ccc2};
    P.T.compose = Compositions{ckeys, cvals, ncomp};
    P.T.grapheme = FlagMap{g1, g2};
}

// The per-code-point classes of the family scanners (text.pyx's pattern_tokenizers_classes()).
inline void set_pattern_classes(Pipeline& P, const uint8_t* per_code_point) { P.ctx.classes.init(per_code_point); }

// The GPT-2 scanner and the Python regex callback (Cython functions over uint32_t, the same ABI).
inline void set_callbacks(Pipeline& P, void* gpt2, void* regex) {
    P.ctx.gpt2 = reinterpret_cast<ScanFn>(gpt2);
    P.ctx.regex = reinterpret_cast<RegexFn>(regex);
    P.replace_regex = reinterpret_cast<ReplaceFn>(regex);
}

// Ids only, through the fast lane (Pipeline::encode_chunks) when it is on.
inline bool encode_ids(const Pipeline& P, const void* data, int kind, size_t n, Scratch& s, std::vector<int32_t>& ids,
                       void* pyctx) {
    std::vector<int32_t> none;
    Output o{&ids, &none, &none, &none, false, false};
    if (kind == 1) return P.encode_chunks((const uint8_t*)data, n, s, o, pyctx, 1);
    if (kind == 2) return P.encode_chunks((const uint16_t*)data, n, s, o, pyctx, 2);
    return P.encode_chunks((const uint32_t*)data, n, s, o, pyctx, 4);
}

// Whether a normalizer step keeps the last char of each chunk but the last (never white space in
// the raw text, see Pipeline::encode_chunks) a char that is no white space. NFD, NFKD, NFC, NFKC
// and Lowercase never make white space of other chars, nor end an image of one with it (a test
// checks every code point); StripAccents deletes marks, a Precompiled map or an empty Replace may
// delete chars and a Replace may end in white space, and the char before the chunk's spaces can
// then be white space (a mark after a tab, say).
inline bool keeps_solid_end(const Pipeline& P, const NormStep& st) {
    switch (st.kind) {
    case N_NFD: case N_NFKD: case N_NFC: case N_NFKC: case N_LOWER: case N_STRIP:
        return true;
    case N_REPLACE:  // a match is inside a chunk: its pattern holds no space
        return st.collapse_spaces || (!st.content.empty() && !P.is_ws(st.content.back()));
    default:
        return false;
    }
}

// Whether the fast lane gives the same ids as the whole pipeline (see Pipeline::encode_chunks):
// every normalizer step leaves a space alone and keeps its effects inside the chunks, and every
// pre-tokenizer step splits at spaces (or keeps pieces whole).
//
// A regex split (GPT-2's pattern, ByteLevel's regex, the cl100k / qwen2 / o200k families, Isolated
// and not inverted) is exact over chunks when it sees, at each cut, a char X that is no white space
// and then the chunk's ' ' (or when an earlier step already starts pieces there). Then no piece holds
// both X and the ' ', so the pieces of the whole are the pieces of the chunks: the scan reaches the
// cut at a piece start either way, and its one look-ahead, (?!\S), sees the ' ' in the whole text and
// the end in the chunk, and holds in both. Alternative by alternative, a piece holding X ends at X:
//   - the contractions (?i:'s|'t|...) hold no space; \p{L}+, \p{N}{1,3} or \p{N}, o200k's cased runs
//     [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]* / [\p{Ll}\p{Lm}\p{Lo}\p{M}]+ hold no white space;
//   - a space may only start a piece: [^\r\n\p{L}\p{N}]? and GPT-2's " ?" stand first in their
//     alternatives, and what follows them (\p{L}+, \p{N}+, [^\s\p{L}\p{N}]+, then [\r\n]* or
//     [\r\n/]*) never matches ' ';
//   - \s*[\r\n]+, \s+(?!\S) and \s+ hold white space only, so never X, whatever they backtrack to.
// A piece holding X therefore ends at the cut, and the scan of the chunk from there is the scan of
// the whole from there. What the step sees at a cut is the raw text's, when no normalizer step can
// make X white space (keeps_solid_end) and no earlier step made the spaces something else without
// starting pieces there (Metaspace without split, ByteLevel without its regex).
inline bool fast_lane_ok(const Pipeline& P) {
    if (P.any_normalized) return false;
    for (const AddedToken& t : P.added)  // a token holding a space, or eating the spaces after it
        if (t.rstrip || t.content.find(U' ') != std::u32string::npos) return false;
    bool solid_end = true;  // every normalizer step keeps_solid_end
    for (const NormStep& st : P.norm) {
        solid_end = solid_end && keeps_solid_end(P, st);
        switch (st.kind) {
        case N_NFD: case N_NFKD: case N_NFC: case N_NFKC: case N_LOWER: case N_STRIP_ACCENTS:
            break;
        case N_REPLACE:
            if (st.collapse_spaces) break;
            // an empty pattern matches at both ends of every chunk: its content would come twice
            if (st.pattern.empty() || st.pattern.find(U' ') != std::u32string::npos ||
                st.content.find(U' ') != std::u32string::npos)
                return false;
            break;
        case N_PRECOMPILED: {
            std::vector<char32_t> out;
            const uint8_t sp = ' ';
            if (P.charsmaps[st.charsmap].transform(&sp, 1, out)) return false;
            break;
        }
        case N_STRIP:  // the right end only: a chunk but the last never ends in whitespace
            if (st.left) return false;
            break;
        default:
            // Prepend and Python patterns look at the ends or across spaces; Nmt and BertNormalizer make
            // spaces of other chars, which a later " {2,}" could join with the space before a chunk
            return false;
        }
    }
    // The model must never see across a space either: some step has to start new pieces at spaces
    // (or the model is cut before each U+2581, see Pipeline::cut_before).
    bool splits = false;
    bool cut = false;          // an earlier step starts pieces at every cut
    bool raw_spaces = true;    // ... or the pieces still hold the chunks' spaces as ' '
    auto regex_ok = [&]() { return cut || (raw_spaces && solid_end); };
    for (const PreStep& st : P.pre) {
        switch (st.kind) {
        case P_METASPACE:
            splits = splits || st.split || (P.cut_before && st.replacement == P.cut_char);
            if (st.split) cut = true;  // before each replacement (MergedWithNext)
            else raw_spaces = false;
            break;
        case P_WHITESPACE: case P_WHITESPACE_SPLIT: case P_BERT:
            splits = cut = true;
            break;
        case P_BYTELEVEL:
            if (st.use_regex) {
                if (!regex_ok()) return false;
                splits = cut = true;
            } else {
                raw_spaces = false;
            }
            break;
        case P_SPLIT_GPT2: case P_SPLIT_FAMILY:
            if (st.behavior != B_ISOLATED || st.invert || !regex_ok()) return false;
            splits = cut = true;
            break;
        case P_PUNCTUATION: case P_DIGITS:
            break;
        default:
            return false;
        }
    }
    return splits;
}

// The normalizer alone, then (with `pre`) the pre-tokenizer, over c[0:n]: the resulting chars, their
// original spans and (pre) the end of each piece. For tests against the readable twins.
inline bool inspect(const Pipeline& P, const uint32_t* c, size_t n, bool pre, Scratch& s, std::vector<uint32_t>& chars,
                    std::vector<int32_t>& starts, std::vector<int32_t>& ends, std::vector<int32_t>& piece_ends,
                    void* pyctx) {
    s.seg.clear();
    s.seg.base = 0;
    for (size_t k = 0; k < n; k++) s.seg.push(c[k], Span{(int32_t)k, (int32_t)k + 1});
    if (!P.normalize(s, pyctx)) return false;
    const Text* text = &s.norm;
    Pieces* cur = &s.a;
    Pieces* next = &s.b;
    cur->clear();
    cur->store = s.norm;
    cur->list.push_back({0, s.norm.size(), 0});
    if (pre) {
        for (const PreStep& st : P.pre) {
            if (!pre_tokenize_step(st, P.T, P.ctx, pyctx, *cur, *next, s.ss)) return false;
            std::swap(cur, next);
        }
    }
    for (const Range& r : cur->list) {
        for (size_t k = r.begin; k < r.end; k++) {
            chars.push_back(cur->store.c[k]);
            starts.push_back(cur->store.a[k].s);
            ends.push_back(cur->store.a[k].e);
        }
        piece_ends.push_back((int32_t)chars.size());
    }
    (void)text;
    return true;
}

inline bool encode_one(const Pipeline& P, const uint32_t* c, size_t n, Scratch& s, std::vector<int32_t>& ids,
                       std::vector<int32_t>& starts, std::vector<int32_t>& ends, std::vector<int32_t>& words,
                       bool with_offsets, bool with_words, void* pyctx) {
    Output o{&ids, &starts, &ends, &words, with_offsets, with_words || with_offsets};
    return P.encode((const char32_t*)c, n, s, o, pyctx);
}

}  // namespace pipe
}  // namespace tokkit
