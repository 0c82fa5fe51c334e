// The general encode path, part 3: the models (Unigram, BPE, WordPiece, WordLevel) over one
// piece's UTF-8, as tokenizers' Model::tokenize gives them. BPE's merging and WordPiece's matching
// are the fast paths' own (bpe_merge.hpp, wordpiece.hpp), on the same tables (vocab_tables.hpp).
//
// Every model returns tokens as (id, start byte, end byte) within the piece.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bpe_merge.hpp"
#include "trie.hpp"
#include "vocab_tables.hpp"
#include "wordpiece.hpp"

namespace tokkit {
namespace pipe {

using tokkit::Tok;
using tokkit::TokenTable;
using tokkit::PairTable;
using tokkit::TokenMemo;
using tokkit::utf8_width;

enum ModelKind { M_UNIGRAM, M_BPE, M_WORDPIECE, M_WORDLEVEL };

// Buffers one thread reuses for the models.
struct ModelScratch {
    struct Node {
        double score;
        int32_t start;  // -1: not reached
        int32_t id;
    };
    std::vector<Node> lattice;
    std::vector<Tok> toks, rev, syms;
    std::vector<int32_t> bpos;  // WordPiece: each char's first byte
    std::string key;
};

struct Model {
    int kind = M_BPE;
    TokenTable vocab;       // token UTF-8 -> id (WordPiece: with prefixes, for its walk)
    int32_t unk_id = -1;
    bool byte_fallback = false;
    int32_t byte_ids[256];  // <0xNN> tokens (-1 when absent)
    // Unigram
    std::vector<double> scores;
    double unk_score = 0;
    ByteDoubleArray pieces;  // the pieces' UTF-8 -> id, for the lattice's walks
    std::vector<std::pair<std::string, int32_t>> pending;  // the pieces until build_pieces
    // BPE
    PairTable merges;
    std::string prefix, suffix;  // continuing_subword_prefix, end_of_word_suffix
    bool fuse_unk = false, ignore_merges = false;
    // WordPiece
    size_t max_input_chars = 100;

    Model() { std::fill(byte_ids, byte_ids + 256, -1); }

    void tokenize(const uint8_t* p, size_t n, ModelScratch& s, std::vector<Tok>& out) const {
        out.clear();
        if (!n) return;
        switch (kind) {
        case M_UNIGRAM: unigram(p, n, s, out); break;
        case M_BPE: bpe(p, n, s, out); break;
        case M_WORDPIECE: wordpiece(p, n, s, out); break;
        default: wordlevel(p, n, out); break;
        }
    }

    // The lattice's edges from byte `at` (a char of `width` bytes): every piece that starts there, by a
    // walk down the trie (a piece is valid UTF-8, so it ends where a char of p ends), and the unknown
    // char when no piece is that char alone.
    void lattice_from(const uint8_t* p, size_t at, size_t n, size_t width, ModelScratch& s) const {
        const double here = s.lattice[at].score;
        bool single = false;
        int32_t node = 0;
        for (size_t end = at; end < n;) {
            node = pieces.child(node, p[end++]);
            if (node < 0) break;
            const int32_t id = pieces.value(node);
            if (id < 0) continue;
            const double cand = here + scores[id];
            ModelScratch::Node& t = s.lattice[end];
            if (t.start < 0 || cand > t.score) t = {cand, (int32_t)at, id};
            if (end - at == width) single = true;
        }
        if (!single) {
            const double cand = here + unk_score;
            ModelScratch::Node& t = s.lattice[at + width];
            if (t.start < 0 || cand > t.score) t = {cand, (int32_t)at, unk_id};
        }
    }

    // The lattice's trie of the pieces, once every piece is in (pipeline_build.hpp's finish_model).
    void build_pieces() {
        pieces.build(pending);
        std::vector<std::pair<std::string, int32_t>>().swap(pending);
    }

    // ---- Unigram: Viterbi over the pieces found from each char, unknown chars as unk_score nodes;
    // on the way back consecutive unknowns fuse into one, which byte_fallback may spell as bytes.
    void unigram(const uint8_t* p, size_t n, ModelScratch& s, std::vector<Tok>& out) const {
        s.lattice.assign(n + 1, ModelScratch::Node{0.0, -1, -1});
        s.lattice[0].start = 0;
        for (size_t at = 0; at < n;) {
            size_t width = utf8_width(p[at]);
            if (at + width > n) width = n - at;
            lattice_from(p, at, n, width, s);
            at += width;
        }
        s.rev.clear();
        size_t end = n;
        uint32_t unk_end = 0;
        bool in_unk = false;
        while (end > 0) {
            const ModelScratch::Node& node = s.lattice[end];
            if (node.id == unk_id && unk_id >= 0) {
                if (!in_unk) { unk_end = (uint32_t)end; in_unk = true; }
            } else {
                if (in_unk) { s.rev.push_back({unk_id, (uint32_t)end, unk_end}); in_unk = false; }
                s.rev.push_back({node.id, (uint32_t)node.start, (uint32_t)end});
            }
            end = (size_t)node.start;
        }
        if (in_unk) s.rev.push_back({unk_id, 0, unk_end});
        for (size_t k = s.rev.size(); k-- > 0;) {
            Tok t = s.rev[k];
            if (t.id == unk_id && unk_id >= 0) {
                // a fused unknown that is itself a token keeps that token (tokenizers looks it up)
                int32_t whole = vocab.get(p + t.start, t.end - t.start);
                if (whole >= 0) { out.push_back({whole, t.start, t.end}); continue; }
                if (byte_fallback && spell_bytes(p + t.start, t.end - t.start, t.start, t.end, out)) continue;
            }
            out.push_back(t);
        }
    }

    // The <0xNN> tokens of p[0:n], all with the span (a, b); false (nothing written) if one is missing.
    bool spell_bytes(const uint8_t* p, size_t n, uint32_t a, uint32_t b, std::vector<Tok>& out) const {
        for (size_t k = 0; k < n; k++) if (byte_ids[p[k]] < 0) return false;
        for (size_t k = 0; k < n; k++) out.push_back({byte_ids[p[k]], a, b});
        return true;
    }

    // ---- BPE: one symbol per char (prefix on all but the first, suffix on the last), unknown chars
    // as byte tokens or (fused) unk, then merges by rank, leftmost first.
    void bpe(const uint8_t* p, size_t n, ModelScratch& s, std::vector<Tok>& out) const {
        if (ignore_merges) {
            int32_t whole = vocab.get(p, n);
            if (whole >= 0) { out.push_back({whole, 0, (uint32_t)n}); return; }
        }
        s.syms.clear();
        bool have_unk = false;
        uint32_t unk_start = 0, unk_len = 0;
        size_t i = 0;
        while (i < n) {
            size_t w = utf8_width(p[i]);
            if (i + w > n) w = n - i;
            bool first = i == 0, last = i + w == n;
            const uint8_t* sym = p + i;  // the symbol's bytes: the char's own, unless a prefix or suffix joins
            size_t len = w;
            if ((!first && !prefix.empty()) || (last && !suffix.empty())) {
                s.key.clear();
                if (!first) s.key += prefix;
                s.key.append((const char*)p + i, w);
                if (last) s.key += suffix;
                sym = (const uint8_t*)s.key.data();
                len = s.key.size();
            }
            int32_t id = vocab.get(sym, len);
            if (id >= 0) {
                if (have_unk) { push_sym(s, unk_id, unk_start, unk_start + unk_len); have_unk = false; }
                push_sym(s, id, (uint32_t)i, (uint32_t)(i + w));
            } else {
                bool spelled = false;
                if (byte_fallback) {
                    spelled = true;
                    for (size_t k = 0; k < len; k++) if (byte_ids[sym[k]] < 0) { spelled = false; break; }
                    if (spelled) {
                        // each byte of the symbol (prefix and suffix too) one token of length 1
                        uint32_t at = (uint32_t)i;
                        for (size_t k = 0; k < len; k++) { push_sym(s, byte_ids[sym[k]], at, at + 1); at++; }
                    }
                }
                if (!spelled && unk_id >= 0) {
                    if (have_unk && fuse_unk) {
                        unk_len += (uint32_t)w;
                    } else {
                        if (have_unk) push_sym(s, unk_id, unk_start, unk_start + unk_len);
                        have_unk = true;
                        unk_start = symbol_end(s);
                        unk_len = (uint32_t)w;
                    }
                }
            }
            i += w;
        }
        if (have_unk) push_sym(s, unk_id, unk_start, unk_start + unk_len);
        tokkit::bpe_merge(merges, s.syms);
        out.insert(out.end(), s.syms.begin(), s.syms.end());
    }

    // tokenizers places a symbol right after the previous one (its length is what it was given)
    static uint32_t symbol_end(const ModelScratch& s) { return s.syms.empty() ? 0 : s.syms.back().end; }

    static void push_sym(ModelScratch& s, int32_t id, uint32_t a, uint32_t b) {
        uint32_t start = symbol_end(s);
        s.syms.push_back({id, start, start + (b - a)});
    }

    // ---- WordPiece: greedy longest match, "##"-style prefix after the first; a failure or a word
    // over max_input_chars_per_word chars is one unk for the whole piece.
    void wordpiece(const uint8_t* p, size_t n, ModelScratch& s, std::vector<Tok>& out) const {
        s.bpos.clear();
        for (size_t i = 0; i < n; i += utf8_width(p[i])) s.bpos.push_back((int32_t)i);
        size_t chars = s.bpos.size();
        s.bpos.push_back((int32_t)n);
        // continuing parts are looked up with the prefix in front (the vocabulary holds every
        // prefix of its tokens, prefixed ones included, see model_token)
        auto find = [&](bool first, const uint8_t* q, size_t m) {
            if (first) return vocab.find(q, m);
            s.key.assign(prefix);
            s.key.append((const char*)q, m);
            return vocab.find((const uint8_t*)s.key.data(), s.key.size());
        };
        size_t mark = out.size();
        if (chars > max_input_chars || !tokkit::wordpiece_word(find, p, s.bpos.data(), chars, out)) {
            out.push_back({unk_id, 0, (uint32_t)n});
            return;
        }
        for (size_t k = mark; k < out.size(); k++) {  // chars -> bytes
            out[k].start = (uint32_t)s.bpos[out[k].start];
            out[k].end = (uint32_t)s.bpos[out[k].end];
        }
    }

    void wordlevel(const uint8_t* p, size_t n, std::vector<Tok>& out) const {
        int32_t id = vocab.get(p, n);
        out.push_back({id >= 0 ? id : unk_id, 0, (uint32_t)n});
    }
};

}  // namespace pipe
}  // namespace tokkit
