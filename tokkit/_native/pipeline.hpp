// The general encode path, part 4: one text through added tokens, the normalizer, the
// pre-tokenizer and the model, with tokenizers' offsets and word numbers, or (ids only) over UTF-8.
#pragma once
#include "added_tokens.hpp"
#include "pipeline_ids.hpp"
#include "pipeline_model.hpp"
#include "pipeline_split.hpp"
#include "pipeline_text.hpp"

namespace tokkit {
namespace pipe {

using tokkit::AddedToken;

struct Match {
    size_t a, b;
    int32_t id;  // -1: ordinary text
};

// Tokens of one or many texts: ids, and (with offsets) code-point spans and word numbers.
struct Output {
    std::vector<int32_t>* ids;
    std::vector<int32_t>* starts;
    std::vector<int32_t>* ends;
    std::vector<int32_t>* words;
    bool with_offsets, with_words;
    void push(int32_t id, int32_t s, int32_t e, int32_t w) {
        ids->push_back(id);
        if (with_words) words->push_back(w);
        if (with_offsets) { starts->push_back(s); ends->push_back(e); }
    }
};

struct Scratch {
    Text text, seg, norm, tmp;
    NormScratch ns;
    SplitScratch ss;
    Pieces a, b;
    ModelScratch ms;
    TokenMemo memo;
    std::vector<Tok> toks;
    std::vector<uint8_t> utf8;
    std::vector<uint32_t> char_at;   // byte -> char index within the piece
    std::vector<Match> raw_matches, norm_matches;
    std::vector<std::pair<size_t, size_t>> found;
    TokenMemo chunks{1 << 18};       // the fast lane's chunks -> ids
    bool unknown = false;            // a char no token covers met a model without an unk token
    bool in_chunk = false;           // the fast lane is encoding a chunk ...
    bool ragged = false;             // ... whose end was white space after some normalizer step
    std::vector<char32_t> cps;
    std::vector<int32_t> chunk_ids;
    Utf8Scratch u8;                  // the UTF-8 path's text ...
    BytePieces pa, pb;               // ... and pieces
};

typedef bool (*ReplaceFn)(void* ctx, int index, const char32_t* c, size_t n,
                          std::vector<std::pair<size_t, size_t>>& out);

struct Pipeline {
    std::vector<NormStep> norm;
    std::vector<PreStep> pre;
    Model model;
    UnicodeTables T;
    std::vector<Charsmap> charsmaps;
    AddedTokens added;
    bool any_raw = false, any_normalized = false;
    bool split_specials = false;     // split_special_tokens: specials are ordinary text
    char32_t cut_char = 0;           // pieces may be cut before this char (see cut_before) ...
    bool cut_before = false;         // ... when no token holds it past its first char
    SplitContext ctx;
    ReplaceFn replace_regex = nullptr;
    bool fast_lane = false;          // ids of texts without offsets go through encode_chunks
    bool utf8_ids = false;           // ids without offsets go through segment_ids (set_utf8_ids)
    static constexpr int32_t RAGGED = INT32_MIN;  // a memo entry's last id: the chunk ended ragged

    bool is_ws(char32_t c) const { return (T.flags.get(c) & F_WHITESPACE) != 0; }

    // tokenizers' AddedVocabulary::find_matches (added_tokens.hpp): the matches and the ordinary
    // text between them, in order.
    void find_added(const char32_t* c, size_t n, bool normalized, std::vector<Match>& out) const {
        out.clear();
        AddedCursor cur;
        AddedSpan m;
        const CharClass is_ws{&T.flags, F_WHITESPACE}, is_word{&T.flags, F_WORD};  // as the fast encoder's
        while (added.next(normalized ? added.normalized() : added.raw(), c, n, split_specials, cur, is_ws, is_word,
                          &m)) {
            if (m.from < m.a) out.push_back({m.from, m.a, -1});
            out.push_back({m.a, m.b, added.tokens()[m.index].id});
        }
        if (cur.start_offset < n || out.empty()) out.push_back({cur.start_offset, n, -1});
    }

    // Normalizes s.seg into s.norm; false when a Python pattern raised. With `chunk_end` (the text
    // ends a fast-lane chunk), s.ragged records an end in white space before or after any step.
    bool normalize(Scratch& s, void* pyctx, bool chunk_end = false) const {
        Text* in = &s.seg;
        Text* out = &s.norm;
        if (norm.empty()) { s.norm = s.seg; return true; }
        for (size_t k = 0; k < norm.size(); k++) {
            const NormStep& st = norm[k];
            if (chunk_end && !solid_end(*in)) s.ragged = true;
            if (st.kind == N_PYTHON) {
                s.found.clear();  // an empty string has no match, not even an empty one (as tokenizers)
                if (in->size() && !replace_regex(pyctx, st.python, in->c.data(), in->size(), s.found)) return false;
                Edits& ed = s.ns.edits;
                ed.clear();
                size_t i = 0;
                for (auto& m : s.found) {
                    while (i < m.first) ed.keep(in->c[i++]);
                    replace_match(ed, m.second - m.first, st.content);
                    i = m.second;
                }
                while (i < in->size()) ed.keep(in->c[i++]);
                ed.apply(*in, *out);
            } else {
                normalize_step(st, T, charsmaps, *in, *out, s.ns);
            }
            std::swap(in, out);
        }
        if (chunk_end && !solid_end(*in)) s.ragged = true;
        if (in != &s.norm) s.norm = *in;
        return true;
    }

    // A chunk may be cut after this text: it ends in a char that is no white space and starts no
    // grapheme cluster across the cut (see chunk_lane in tokkit/tokenizer/plan.py).
    bool solid_end(const Text& t) const { return t.size() && solid_char(t.c.back()); }

    bool solid_end(const std::vector<uint8_t>& t) const {
        if (t.empty()) return false;
        size_t i = utf8_back(t.data(), t.size());
        return solid_char(utf8_next(t.data(), t.size(), i));
    }

    bool solid_char(char32_t c) const { return !is_ws(c) && (T.grapheme.get(c) & 31) != G_PREPEND; }

    // The tokens of one piece (chars [r.begin, r.end) of p.store), through the memo.
    void model_piece(const Pieces& p, const Range& r, int32_t word, Scratch& s, Output& o) const {
        s.utf8.clear();
        if (o.with_offsets) s.char_at.clear();
        for (size_t k = r.begin; k < r.end; k++) {
            uint8_t u[4];
            int m = utf8_encode(p.store.c[k], u);
            s.utf8.insert(s.utf8.end(), u, u + m);
            if (o.with_offsets) for (int j = 0; j < m; j++) s.char_at.push_back((uint32_t)(k - r.begin));
        }
        const uint8_t* bytes = s.utf8.data();
        each_cut(bytes, s.utf8.size(), [&](size_t a, size_t b) { emit(p, r, bytes, a, b, word, s, o); });
    }

    // Calls f(a, b) for each part of bytes[0:n] the model sees: the whole, or (cut_before) cut before
    // each cut_char after the first, since models cannot see across it (see Pipeline).
    template <class F>
    void each_cut(const uint8_t* bytes, size_t n, F f) const {
        size_t a = 0;
        if (cut_before) {
            uint8_t lead[4];
            const size_t w = (size_t)utf8_encode(cut_char, lead);
            for (size_t i = 1; i + w <= n; i++) {
                if (bytes[i] == lead[0] && std::memcmp(bytes + i, lead, w) == 0) {
                    f(a, i);
                    a = i;
                }
            }
        }
        f(a, n);
    }

    // The tokens of piece p[0:n] (n > 0) and their count, through the memo of pieces.
    const Tok* tokens_of(const uint8_t* p, size_t n, Scratch& s, size_t* count) const {
        const BytesKey h = bytes_key(p, n);
        const Tok* toks = s.memo.find(p, n, h, count);
        if (toks) return toks;
        model.tokenize(p, n, s.ms, s.toks);
        s.memo.add(p, n, h, s.toks.data(), s.toks.size());
        *count = s.toks.size();
        return s.toks.data();
    }

    void emit(const Pieces& p, const Range& r, const uint8_t* bytes, size_t a, size_t b, int32_t word,
              Scratch& s, Output& o) const {
        if (b <= a) return;
        size_t count = 0;
        const Tok* toks = tokens_of(bytes + a, b - a, s, &count);
        for (size_t k = 0; k < count; k++) {
            const Tok& t = toks[k];
            if (t.id < 0) { s.unknown = true; continue; }  // an unknown char and no unk token
            if (!o.with_offsets) { o.push(t.id, 0, 0, word); continue; }
            size_t cs = s.char_at[a + std::min<size_t>(t.start, b - a - 1)];
            size_t ce = s.char_at[a + (t.end > t.start ? std::min<size_t>(t.end, b - a) - 1 : std::min<size_t>(t.start, b - a - 1))];
            const Span& x = p.store.a[r.begin + cs];
            const Span& y = p.store.a[r.begin + ce];
            o.push(t.id, x.s, t.end > t.start ? y.e : x.s, word);
        }
    }

    // Normalized text s.norm (or part of it) -> pieces -> tokens; returns the next word number.
    bool tokenize_norm(size_t a, size_t b, int32_t orig_start, int32_t* word, Scratch& s, Output& o,
                       void* pyctx) const {
        s.a.clear();
        if (b <= a) return true;
        s.a.store.c.assign(s.norm.c.begin() + a, s.norm.c.begin() + b);
        s.a.store.a.assign(s.norm.a.begin() + a, s.norm.a.begin() + b);
        s.a.list.push_back({0, b - a, orig_start});
        Pieces* cur = &s.a;
        Pieces* next = &s.b;
        for (const PreStep& st : pre) {
            if (!pre_tokenize_step(st, T, ctx, pyctx, *cur, *next, s.ss)) return false;
            std::swap(cur, next);
        }
        for (const Range& r : cur->list) {
            model_piece(*cur, r, *word, s, o);
            (*word)++;
        }
        return true;
    }

    // The ids of c[a:b], text between added tokens, over UTF-8 (pipeline_utf8.hpp, pipeline_ids.hpp): the
    // same chars as normalize and tokenize_norm give, with no spans, and the same word numbers (one per
    // piece, from *word on). STEP_SPANS (nothing pushed) when only the spans can tell; `chunk_end` as
    // for normalize.
    StepResult segment_ids(const char32_t* c, size_t a, size_t b, bool chunk_end, int32_t* word, Scratch& s,
                           Output& o, void* pyctx) const {
        Utf8Scratch& u = s.u8;
        u.x.resize(4 * (b - a));
        uint8_t* w = u.x.data();
        for (size_t k = a; k < b; k++) {
            if (c[k] < 0x80) *w++ = (uint8_t)c[k];
            else w += utf8_encode(c[k], w);
        }
        u.x.resize((size_t)(w - u.x.data()));
        const Origin base = a == 0 ? AT_ZERO : PAST_ZERO;
        Origin origin = base;
        std::vector<uint8_t>* in = &u.x;
        std::vector<uint8_t>* out = &u.y;
        for (const NormStep& st : norm) {
            if (chunk_end && !solid_end(*in)) s.ragged = true;
            normalize_utf8(st, T, charsmaps, *in, *out, origin, base, u);
            std::swap(in, out);
        }
        if (chunk_end && !solid_end(*in)) s.ragged = true;
        BytePieces* cur = &s.pa;
        BytePieces* next = &s.pb;
        cur->clear();
        std::swap(cur->store, *in);  // the buffers trade places, none is copied
        if (cur->store.size()) cur->list.push_back({0, (uint32_t)cur->store.size(), origin});
        for (const PreStep& st : pre) {
            const StepResult r = pre_tokenize_utf8(st, T, ctx, pyctx, *cur, *next, s.ss, u);
            if (r != STEP_OK) return r;
            std::swap(cur, next);
        }
        for (const BytePiece& r : cur->list) {
            const uint8_t* p = cur->store.data() + r.a;
            each_cut(p, r.b - r.a, [&](size_t x, size_t y) { piece_ids(p + x, y - x, *word, s, o); });
            (*word)++;
        }
        return STEP_OK;
    }

    void piece_ids(const uint8_t* p, size_t n, int32_t word, Scratch& s, Output& o) const {
        if (!n) return;
        size_t count = 0;
        const Tok* toks = tokens_of(p, n, s, &count);
        for (size_t k = 0; k < count; k++) {
            if (toks[k].id < 0) s.unknown = true;  // an unknown char and no unk token
            else o.push(toks[k].id, 0, 0, word);
        }
    }

    // The fast lane for ids only. When every step is local to the words between spaces (see
    // chunk_lane in tokkit/tokenizer/plan.py), a text's ids are the ids of its chunks, each chunk being
    // a run of spaces and the text up to the next such run, cut only where the char after the run is
    // ASCII (no mark can join the space) and the char before it is no whitespace and starts no
    // grapheme cluster across it, and where the chunk still ends so after each normalizer step (else
    // the rest of the text goes whole). A chunk's ids come from the memo keyed by its raw code units,
    // so a repeated word costs one hash.
    template <class Unit>
    bool encode_chunks(const Unit* u, size_t n, Scratch& s, Output& o, void* pyctx, uint8_t kind) const {
        size_t a = 0, i = 1;
        while (a < n) {
            // the next cut: the start of a run of spaces followed by ASCII or the end
            size_t cut = n;
            for (; i < n; i++) {
                if (u[i] != (Unit)' ' || u[i - 1] == (Unit)' ') continue;
                // no whitespace before the run (a right Strip would see it), no cluster across it
                if (T.flags.get((char32_t)u[i - 1]) & F_WHITESPACE) continue;
                if (u[i - 1] >= 0x80 && (T.grapheme.get((char32_t)u[i - 1]) & 31) == G_PREPEND) continue;
                size_t j = i;
                while (j < n && u[j] == (Unit)' ') j++;
                if (j == n || u[j] < 0x80) { cut = i; break; }
            }
            bool solid = true;
            if (!chunk(u + a, cut - a, cut == n, &solid, s, o, pyctx, kind)) return false;
            if (!solid) {  // no cut after this chunk is safe: the rest of the text goes whole
                s.cps.assign(u + a, u + n);
                return encode(s.cps.data(), n - a, s, o, pyctx);
            }
            a = cut;
            i = cut + 1;
        }
        return true;
    }

    // A chunk's ids through the memo; *solid = false (and nothing pushed) when the chunk is not the
    // text's last and ended in white space after some normalizer step (Scratch::ragged).
    template <class Unit>
    bool chunk(const Unit* u, size_t m, bool last, bool* solid, Scratch& s, Output& o, void* pyctx,
               uint8_t kind) const {
        if (!m) return true;
        const uint8_t* key = (const uint8_t*)u;
        size_t bytes = m * sizeof(Unit);
        BytesKey h = bytes_key(key, bytes);
        h.h ^= kind;  // a chunk of 1-, 2- or 4-byte units
        size_t count = 0;
        const Tok* toks = s.chunks.find(key, bytes, h, &count);
        if (!toks) {
            s.cps.assign(u, u + m);
            s.chunk_ids.clear();
            std::vector<int32_t> none;
            Output inner{&s.chunk_ids, &none, &none, &none, false, false};
            s.in_chunk = true;
            s.ragged = false;
            bool ok = encode(s.cps.data(), m, s, inner, pyctx);
            s.in_chunk = false;
            if (!ok) return false;
            if (s.unknown) return true;  // an error for the caller: not remembered
            s.toks.clear();
            for (int32_t id : s.chunk_ids) s.toks.push_back({id, 0, 0});
            if (s.ragged) s.toks.push_back({RAGGED, 0, 0});  // remembered with the chunk
            s.chunks.add(key, bytes, h, s.toks.data(), s.toks.size());
            toks = s.toks.data();
            count = s.toks.size();
        }
        if (count && toks[count - 1].id == RAGGED) {
            count--;
            if (!last) { *solid = false; return true; }
        }
        for (size_t k = 0; k < count; k++) {
            if (toks[k].id < 0) s.unknown = true;
            else o.ids->push_back(toks[k].id);
        }
        return true;
    }

    // Encodes code points c[0:n]; false when a Python pattern raised (the caller re-raises it).
    bool encode(const char32_t* c, size_t n, Scratch& s, Output& o, void* pyctx) const {
        int32_t word = 0;
        if (any_raw) find_added(c, n, false, s.raw_matches);
        else { s.raw_matches.clear(); s.raw_matches.push_back({0, n, -1}); }
        for (const Match& m : s.raw_matches) {
            if (m.id >= 0) { o.push(m.id, (int32_t)m.a, (int32_t)m.b, word++); continue; }
            if (m.b <= m.a) continue;
            if (utf8_ids && !o.with_offsets) {
                const StepResult r = segment_ids(c, m.a, m.b, s.in_chunk && m.b == n, &word, s, o, pyctx);
                if (r == STEP_RAISED) return false;
                if (r == STEP_OK) continue;
            }
            s.seg.clear();
            s.seg.base = (int32_t)m.a;
            for (size_t k = m.a; k < m.b; k++) s.seg.push(c[k], Span{(int32_t)k, (int32_t)k + 1});
            if (!normalize(s, pyctx, s.in_chunk && m.b == n)) return false;
            if (!any_normalized) {
                // a piece's original start is its first normalized char's (Metaspace's "first" reads it)
                int32_t start = s.norm.size() ? s.norm.a[0].s : (int32_t)m.a;
                if (!tokenize_norm(0, s.norm.size(), start, &word, s, o, pyctx)) return false;
                continue;
            }
            find_added(s.norm.c.data(), s.norm.size(), true, s.norm_matches);
            std::vector<Match> nm = s.norm_matches;
            for (const Match& q : nm) {
                if (q.id >= 0) {
                    const Span& x = s.norm.a[q.a];
                    const Span& y = s.norm.a[q.b - 1];
                    o.push(q.id, x.s, y.e, word++);
                    continue;
                }
                int32_t start = q.a < s.norm.size() ? s.norm.a[q.a].s : (int32_t)m.b;
                if (!tokenize_norm(q.a, q.b, start, &word, s, o, pyctx)) return false;
            }
        }
        return true;
    }
};

}  // namespace pipe
}  // namespace tokkit
