// The builder interface of the general encode path: one plain struct per kind of step, as the
// Cython wrapper (pipeline.pyx) fills it from a component's own description of itself (the
// `native()` methods of tokkit.tokenizer's components), turned into the engine's steps here; and
// encoding one text. Which lanes run is decided in Python (tokkit/tokenizer/plan.py).
#pragma once
#include "pipeline.hpp"

namespace tokkit {
namespace pipe {

// Metaspace's prepend_scheme, as PreStep holds it.
enum PrependScheme { PS_ALWAYS, PS_FIRST, PS_NEVER };

// A normalizer step (NormStep's fields; a string as its code points).
struct NormDesc {
    int kind;                                   // NormKind
    std::vector<uint32_t> pattern, content;     // Replace (a String pattern), Prepend (content)
    bool strip_left, strip_right;               // Strip
    bool collapse_spaces;                       // Replace(Regex(" {2,}")), done without a regex
    bool clean_text, handle_chinese_chars, strip_accents, lowercase;  // BertNormalizer
    int charsmap;                               // Precompiled: index in Pipeline::charsmaps (the builder's)
    int python;                                 // N_PYTHON: index of the Python callback (the builder's)
};

// A pre-tokenizer step (PreStep's fields).
struct PreDesc {
    int kind;                                   // PreKind
    uint32_t replacement;                       // Metaspace
    int prepend_scheme;                         // PrependScheme
    bool split;
    std::vector<uint32_t> pattern;              // Split(String), CharDelimiterSplit
    int behavior;                               // Behavior
    bool invert, add_prefix_space, use_regex, individual_digits;
    int python;                                 // P_SPLIT_PYTHON: index of the Python callback
    int family;                                 // P_SPLIT_FAMILY: FAMILY_CL100K, FAMILY_QWEN2 or FAMILY_O200K
    int scan;                                   // P_SPLIT_SCAN: a ScanKind (pipeline_scan.hpp)
};

// The model's settings; its tokens, merges and scores come in bulk (model_token, model_merge).
struct ModelDesc {
    int kind;                                   // ModelKind
    int32_t unk_id;                             // -1: none
    bool byte_fallback, fuse_unk, ignore_merges;
    std::string prefix, suffix;                 // continuing_subword_prefix, end_of_word_suffix (UTF-8)
    uint64_t max_input_chars;                   // WordPiece
    std::vector<double> scores;                 // Unigram, by id
    double unk_score;                           // Unigram
    std::vector<int32_t> byte_ids;              // the <0xNN> tokens' ids by byte (-1 where absent)
    bool cut_at_metaspace;                      // pieces may be cut before each U+2581 (see Pipeline)
};

// An added token, as matched (a normalized one in its normalized form).
struct AddedDesc {
    std::vector<uint32_t> content;
    int32_t id;
    bool single_word, lstrip, rstrip, normalized, special;
};

// The Unicode tables the steps read (pipeline_tables.py's arrays).
struct TableDesc {
    const uint16_t *lower1, *nfd1, *nfkd1, *flags1, *flags2, *ccc1, *grapheme1, *grapheme2;
    const uint32_t *lower2, *nfd2, *nfkd2, *pool, *compose_values;
    const uint8_t* ccc2;
    const uint64_t* compose_keys;
    size_t compositions;
};

inline std::u32string u32(const std::vector<uint32_t>& v) { return std::u32string(v.begin(), v.end()); }

inline std::string utf8(const std::u32string& s) {
    std::vector<uint8_t> out;
    put_utf8(s, out);
    return std::string(out.begin(), out.end());
}

inline void add_norm(Pipeline& P, const NormDesc& d) {
    NormStep s;
    s.kind = d.kind;
    s.pattern = u32(d.pattern);
    s.content = u32(d.content);
    s.pattern8 = utf8(s.pattern);
    s.content8 = utf8(s.content);
    s.left = d.strip_left;
    s.right = d.strip_right;
    s.collapse_spaces = d.collapse_spaces;
    s.charsmap = d.charsmap;
    s.python = d.python;
    s.clean_text = d.clean_text;
    s.chinese = d.handle_chinese_chars;
    s.strip_accents = d.strip_accents;
    s.lowercase = d.lowercase;
    P.norm.push_back(s);
}

inline void add_pre(Pipeline& P, const PreDesc& d) {
    PreStep s;
    s.kind = d.kind;
    s.replacement = d.replacement;
    s.prepend_scheme = d.prepend_scheme;
    s.split = d.split;
    s.pattern = u32(d.pattern);
    s.pattern8 = utf8(s.pattern);
    s.replacement8 = utf8(std::u32string(1, s.replacement));
    s.behavior = d.behavior;
    s.invert = d.invert;
    s.add_prefix_space = d.add_prefix_space;
    s.use_regex = d.use_regex;
    s.individual_digits = d.individual_digits;
    s.python = d.python;
    s.family = d.family;
    s.scan = d.scan;
    P.pre.push_back(s);
}

inline int add_charsmap(Pipeline& P, const uint32_t* units, size_t n, const char* pool, size_t np) {
    Charsmap m;
    m.units.assign(units, units + n);
    m.pool.assign(pool, np);
    m.index_ascii();
    P.charsmaps.push_back(m);
    return (int)P.charsmaps.size() - 1;
}

inline void add_added(Pipeline& P, const AddedDesc& d) {
    P.added.add(d.content.data(), d.content.size(), d.id, d.single_word, d.lstrip, d.rstrip, d.normalized, d.special);
    if (d.normalized) P.any_normalized = true;
    else P.any_raw = true;
}

inline void set_model(Pipeline& P, const ModelDesc& d) {
    Model& m = P.model;
    m.kind = d.kind;
    m.unk_id = d.unk_id;
    m.byte_fallback = d.byte_fallback;
    m.fuse_unk = d.fuse_unk;
    m.ignore_merges = d.ignore_merges;
    m.prefix = d.prefix;
    m.suffix = d.suffix;
    m.max_input_chars = (size_t)d.max_input_chars;
    m.scores = d.scores;
    m.unk_score = d.unk_score;
    for (size_t b = 0; b < 256 && b < d.byte_ids.size(); b++) m.byte_ids[b] = d.byte_ids[b];
    P.cut_before = d.cut_at_metaspace;
    P.cut_char = d.cut_at_metaspace ? 0x2581 : 0;
}

inline void model_token(Pipeline& P, const char* p, size_t n, int32_t id) {
    // (WordPiece's matching walks the prefixes of its tokens, see wordpiece.hpp; Unigram's lattice
    // walks a trie of its pieces, made once all are in: finish_model)
    P.model.vocab.add((const uint8_t*)p, n, id, P.model.kind == M_WORDPIECE);
    if (P.model.kind == M_UNIGRAM && n) P.model.pending.emplace_back(std::string(p, n), id);
}

// What the model builds once its tokens are in.
inline void finish_model(Pipeline& P) {
    if (P.model.kind == M_UNIGRAM) P.model.build_pieces();
}

inline void model_merge(Pipeline& P, int32_t a, int32_t b, int32_t rank, int32_t merged) {
    P.model.merges.add(a, b, rank, merged);
}

inline void set_tables(Pipeline& P, const TableDesc& t) {
    P.T.lower = CharMap{t.lower1, t.lower2, t.pool};
    P.T.nfd = CharMap{t.nfd1, t.nfd2, t.pool};
    P.T.nfkd = CharMap{t.nfkd1, t.nfkd2, t.pool};
    P.T.flags = FlagMap{t.flags1, t.flags2};
    P.T.ccc = CccMap{t.ccc1, t.ccc2};
    P.T.compose = Compositions{t.compose_keys, t.compose_values, t.compositions};
    P.T.grapheme = FlagMap{t.grapheme1, t.grapheme2};
}

// Ids without offsets over UTF-8 (Pipeline::segment_ids) or not, as tokkit/tokenizer/plan.py's
// utf8_lane decided. The lane never skips a step: a normalizer step it lacks (utf8_covers), or an added
// token matched on the normalized text (that matching reads code points), is refused. Called once the
// steps are in.
inline void set_utf8_ids(Pipeline& P, bool on) {
    if (on && P.any_normalized)
        throw std::invalid_argument("the UTF-8 lane cannot match added tokens in the normalized text");
    for (const NormStep& st : P.norm)
        if (on && !utf8_covers(st))
            throw std::invalid_argument("the UTF-8 lane has no step of normalizer kind " + std::to_string(st.kind));
    P.utf8_ids = on;
}

// The fast paths' BertNormalizer (text.pyx's bert_normalize), which the general path runs too.
inline void set_bert_normalizer(Pipeline& P, void* fn) { P.T.bert = reinterpret_cast<BertNormFn>(fn); }

// The per-code-point classes of the family scanners (text.pyx's pattern_tokenizers_classes()).
inline void set_pattern_classes(Pipeline& P, const uint8_t* per_code_point) {
    P.ctx.classes.init(per_code_point);
    P.ctx.scan.code = per_code_point;
}

// The class scanners' [\p{P}\p{S}]: 1 for its code points below `end` (pipeline.pyx's punct_symbol_table()).
inline void set_punct_symbol(Pipeline& P, const uint8_t* table, size_t end) {
    P.ctx.scan.punct_symbol = table;
    P.ctx.scan.punct_symbol_end = end;
}

// The Python regex callback (a Cython function over uint32_t, the same ABI).
inline void set_callbacks(Pipeline& P, void* regex) {
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
