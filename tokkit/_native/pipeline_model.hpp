// The general encode path, part 3: the models (Unigram, BPE, WordPiece, WordLevel) over one
// piece's UTF-8, as tokenizers' Model::tokenize gives them, and the per-thread memo of pieces.
//
// Every model returns tokens as (id, start byte, end byte) within the piece.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <queue>
#include <string>
#include <vector>

namespace tokkit {
namespace pipe {

struct Tok {
    int32_t id;
    uint32_t start, end;
};

inline uint64_t fnv_step(uint64_t h, uint8_t b) { return (h ^ b) * 0x100000001B3ULL; }
const uint64_t FNV_START = 0xCBF29CE484222325ULL;

inline uint64_t hash_span(const uint8_t* p, size_t n) {
    uint64_t h = FNV_START;
    for (size_t i = 0; i < n; i++) h = fnv_step(h, p[i]);
    return h;
}

// A fast hash of a byte string, 8 bytes at a time (for the memos; BytesMap keeps FNV, which the
// Unigram walk extends byte by byte).
inline uint64_t fast_hash(const uint8_t* p, size_t n) {
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ULL, w;
    while (n >= 8) {
        std::memcpy(&w, p, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    if (n) {
        w = 0;
        std::memcpy(&w, p, n);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    h *= 0x94D049BB133111EBULL;
    return h ^ (h >> 29);
}

// The first 8 bytes of a key, zero-padded: most keys compare without a call.
inline uint64_t key_head(const uint8_t* p, size_t n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n < 8 ? n : 8);
    return w;
}

inline size_t utf8_width(uint8_t b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

// Byte strings -> (id, "a longer key starts with this one"), open addressing, read-only once built.
class BytesMap {
  public:
    struct Slot {
        uint64_t h;
        uint32_t off, len;
        int32_t id;    // -1: only a prefix of keys
        int32_t more;  // 1: some longer key starts with this one
        bool used;
    };

    // Adds key -> id (the first id given for a key wins); with `prefixes`, every proper prefix of
    // the key at a character boundary is added too (as id -1, more = 1).
    void add(const uint8_t* p, size_t n, int32_t id, bool prefixes) {
        if (prefixes) {
            size_t k = 0;
            while (k < n) {
                k += utf8_width(p[k]);
                if (k < n) put(p, k, -1, true);
            }
        }
        put(p, n, id, false);
    }

    const Slot* find(const uint8_t* p, size_t n, uint64_t h) const {
        if (slots_.empty()) return nullptr;
        size_t i = h & mask_;
        while (slots_[i].used) {
            const Slot& s = slots_[i];
            if (s.h == h && s.len == n && std::memcmp(blob_.data() + s.off, p, n) == 0) return &s;
            i = (i + 1) & mask_;
        }
        return nullptr;
    }
    int32_t get(const uint8_t* p, size_t n) const {
        const Slot* s = find(p, n, hash_span(p, n));
        return s ? s->id : -1;
    }
    int32_t get(const std::string& k) const { return get((const uint8_t*)k.data(), k.size()); }

  private:
    std::vector<Slot> slots_;
    std::string blob_;
    size_t mask_ = 0, count_ = 0;

    void put(const uint8_t* p, size_t n, int32_t id, bool prefix) {
        if (2 * (count_ + 1) > slots_.size()) grow();
        uint64_t h = hash_span(p, n);
        size_t i = h & mask_;
        while (slots_[i].used) {
            Slot& s = slots_[i];
            if (s.h == h && s.len == n && std::memcmp(blob_.data() + s.off, p, n) == 0) {
                if (prefix) s.more = 1;
                else if (s.id < 0) s.id = id;
                return;
            }
            i = (i + 1) & mask_;
        }
        Slot& s = slots_[i];
        s.h = h;
        s.off = (uint32_t)blob_.size();
        s.len = (uint32_t)n;
        s.id = prefix ? -1 : id;
        s.more = prefix ? 1 : 0;
        s.used = true;
        blob_.append((const char*)p, n);
        count_++;
    }
    void grow() {
        std::vector<Slot> old;
        old.swap(slots_);
        size_t size = old.empty() ? 1024 : old.size() * 2;
        slots_.assign(size, Slot{0, 0, 0, -1, 0, false});
        mask_ = size - 1;
        for (const Slot& s : old) {
            if (!s.used) continue;
            size_t i = s.h & mask_;
            while (slots_[i].used) i = (i + 1) & mask_;
            slots_[i] = s;
        }
    }
};

// (left id, right id) -> (rank, merged id), read-only once built.
class MergeMap {
  public:
    void add(int32_t a, int32_t b, int32_t rank, int32_t merged) {
        if (2 * (count_ + 1) > keys_.size()) grow();
        uint64_t k = key(a, b);
        size_t i = mix(k) & mask_;
        while (keys_[i] != EMPTY) {
            if (keys_[i] == k) return;  // the first (lowest-rank) merge of a pair wins
            i = (i + 1) & mask_;
        }
        keys_[i] = k;
        vals_[i] = ((uint64_t)(uint32_t)rank << 32) | (uint32_t)merged;
        count_++;
    }
    // false when (a, b) is no merge
    bool get(int32_t a, int32_t b, int32_t* rank, int32_t* merged) const {
        if (keys_.empty()) return false;
        uint64_t k = key(a, b);
        size_t i = mix(k) & mask_;
        while (keys_[i] != EMPTY) {
            if (keys_[i] == k) {
                *rank = (int32_t)(vals_[i] >> 32);
                *merged = (int32_t)(uint32_t)vals_[i];
                return true;
            }
            i = (i + 1) & mask_;
        }
        return false;
    }

  private:
    static constexpr uint64_t EMPTY = ~0ULL;
    std::vector<uint64_t> keys_, vals_;
    size_t mask_ = 0, count_ = 0;
    static uint64_t key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }
    static uint64_t mix(uint64_t k) {
        k ^= k >> 33;
        k *= 0xFF51AFD7ED558CCDULL;
        k ^= k >> 33;
        return k;
    }
    void grow() {
        std::vector<uint64_t> ok, ov;
        ok.swap(keys_);
        ov.swap(vals_);
        size_t size = ok.empty() ? 1024 : ok.size() * 2;
        keys_.assign(size, EMPTY);
        vals_.assign(size, 0);
        mask_ = size - 1;
        for (size_t j = 0; j < ok.size(); j++) {
            if (ok[j] == EMPTY) continue;
            size_t i = mix(ok[j]) & mask_;
            while (keys_[i] != EMPTY) i = (i + 1) & mask_;
            keys_[i] = ok[j];
            vals_[i] = ov[j];
        }
    }
};

enum ModelKind { M_UNIGRAM, M_BPE, M_WORDPIECE, M_WORDLEVEL };

// Buffers one thread reuses for the models.
struct ModelScratch {
    struct Node {
        double score;
        int32_t start;  // -1: not reached
        int32_t id;
    };
    std::vector<Node> lattice;
    std::vector<Tok> toks, rev;
    struct Sym {
        int32_t id;
        uint32_t start, end;
        int32_t prev, next;
    };
    std::vector<Sym> syms;
    std::string key;
};

struct Model {
    int kind = M_BPE;
    BytesMap vocab;         // token UTF-8 -> id (Unigram: with prefixes, for the lattice walk)
    int32_t unk_id = -1;
    bool byte_fallback = false;
    int32_t byte_ids[256];  // <0xNN> tokens (-1 when absent)
    // Unigram
    std::vector<double> scores;
    double unk_score = 0;
    size_t max_piece_bytes = 0;
    // BPE
    MergeMap merges;
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

    // ---- Unigram: Viterbi over the pieces found from each char, unknown chars as unk_score nodes;
    // on the way back consecutive unknowns fuse into one, which byte_fallback may spell as bytes.
    void unigram(const uint8_t* p, size_t n, ModelScratch& s, std::vector<Tok>& out) const {
        s.lattice.assign(n + 1, ModelScratch::Node{0.0, -1, -1});
        s.lattice[0].start = 0;
        size_t at = 0;
        while (at < n) {
            double here = s.lattice[at].score;
            size_t width = utf8_width(p[at]);
            if (at + width > n) width = n - at;
            bool single = false;
            uint64_t h = FNV_START;
            size_t end = at;
            while (end < n && end - at < max_piece_bytes) {
                size_t w = utf8_width(p[end]);
                if (end + w > n) break;
                for (size_t k = 0; k < w; k++) h = fnv_step(h, p[end + k]);
                end += w;
                const BytesMap::Slot* hit = vocab.find(p + at, end - at, h);
                if (!hit) break;
                if (hit->id >= 0) {
                    double cand = here + scores[hit->id];
                    ModelScratch::Node& t = s.lattice[end];
                    if (t.start < 0 || cand > t.score) t = {cand, (int32_t)at, hit->id};
                    if (end - at == width) single = true;
                }
                if (!hit->more) break;
            }
            if (!single) {
                double cand = here + unk_score;
                ModelScratch::Node& t = s.lattice[at + width];
                if (t.start < 0 || cand > t.score) t = {cand, (int32_t)at, unk_id};
            }
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
            s.key.clear();
            if (!first) s.key += prefix;
            s.key.append((const char*)p + i, w);
            if (last) s.key += suffix;
            int32_t id = vocab.get(s.key);
            if (id >= 0) {
                if (have_unk) { push_sym(s, unk_id, unk_start, unk_start + unk_len); have_unk = false; }
                push_sym(s, id, (uint32_t)i, (uint32_t)(i + w));
            } else {
                bool spelled = false;
                if (byte_fallback) {
                    spelled = true;
                    for (char b : s.key) if (byte_ids[(uint8_t)b] < 0) { spelled = false; break; }
                    if (spelled) {
                        // each byte of the symbol (prefix and suffix too) one token of length 1
                        uint32_t at = (uint32_t)i;
                        for (char b : s.key) { push_sym(s, byte_ids[(uint8_t)b], at, at + 1); at++; }
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
        merge_all(s);
        for (int32_t k = s.syms.empty() ? -1 : 0; k >= 0; k = s.syms[k].next)
            out.push_back({s.syms[k].id, s.syms[k].start, s.syms[k].end});
    }

    // tokenizers places a symbol right after the previous one (its length is what it was given)
    static uint32_t symbol_end(const ModelScratch& s) { return s.syms.empty() ? 0 : s.syms.back().end; }

    static void push_sym(ModelScratch& s, int32_t id, uint32_t a, uint32_t b) {
        uint32_t start = s.syms.empty() ? 0 : s.syms.back().end;
        uint32_t len = b - a;
        int32_t k = (int32_t)s.syms.size();
        s.syms.push_back({id, start, start + len, k - 1, -1});
        if (k > 0) s.syms[k - 1].next = k;
    }

    void merge_all(ModelScratch& s) const {
        struct Cand {
            int32_t rank, pos, merged;
            bool operator<(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::priority_queue<Cand> q;
        int32_t rank, merged;
        for (int32_t k = 0; k + 1 < (int32_t)s.syms.size(); k++)
            if (merges.get(s.syms[k].id, s.syms[k + 1].id, &rank, &merged)) q.push({rank, k, merged});
        while (!q.empty()) {
            Cand c = q.top();
            q.pop();
            ModelScratch::Sym& a = s.syms[c.pos];
            if (a.start == a.end && a.id == -2) continue;  // removed
            if (a.next < 0) continue;
            ModelScratch::Sym& b = s.syms[a.next];
            int32_t r2, m2;
            if (!merges.get(a.id, b.id, &r2, &m2) || m2 != c.merged) continue;
            a.id = c.merged;
            a.end = b.end;
            int32_t gone = a.next;
            a.next = b.next;
            if (b.next >= 0) s.syms[b.next].prev = c.pos;
            s.syms[gone].id = -2;
            s.syms[gone].end = s.syms[gone].start;
            if (a.prev >= 0 && merges.get(s.syms[a.prev].id, a.id, &r2, &m2)) q.push({r2, a.prev, m2});
            if (a.next >= 0 && merges.get(a.id, s.syms[a.next].id, &r2, &m2)) q.push({r2, c.pos, m2});
        }
    }

    // ---- WordPiece: greedy longest match, "##"-style prefix after the first; a failure or a word
    // over max_input_chars_per_word chars is one unk for the whole piece.
    void wordpiece(const uint8_t* p, size_t n, ModelScratch& s, std::vector<Tok>& out) const {
        size_t chars = 0;
        for (size_t i = 0; i < n; i += utf8_width(p[i])) chars++;
        if (chars > max_input_chars) { out.push_back({unk_id, 0, (uint32_t)n}); return; }
        size_t start = 0;
        while (start < n) {
            size_t end = n;
            int32_t found = -1;
            while (start < end) {
                s.key.clear();
                if (start > 0) s.key += prefix;
                s.key.append((const char*)p + start, end - start);
                found = vocab.get(s.key);
                if (found >= 0) break;
                do { end--; } while (end > start && (p[end] & 0xC0) == 0x80);
            }
            if (found < 0) {
                out.clear();
                out.push_back({unk_id, 0, (uint32_t)n});
                return;
            }
            out.push_back({found, (uint32_t)start, (uint32_t)end});
            start = end;
        }
    }

    void wordlevel(const uint8_t* p, size_t n, std::vector<Tok>& out) const {
        int32_t id = vocab.get(p, n);
        out.push_back({id >= 0 ? id : unk_id, 0, (uint32_t)n});
    }
};

// One thread's memo of pieces already tokenized: UTF-8 -> tokens. Cleared when it holds `limit` pieces.
class Memo {
  public:
    explicit Memo(size_t limit = 1 << 16) : limit_(limit) {}
    const Tok* find(const uint8_t* p, size_t n, uint64_t h, size_t* count) const {
        if (slots_.empty()) return nullptr;
        size_t i = h & mask_;
        uint64_t head = key_head(p, n);
        while (slots_[i].used) {
            const Slot& s = slots_[i];
            if (s.h == h && s.klen == n && s.head == head &&
                (n <= 8 || std::memcmp(keys_.data() + s.koff + 8, p + 8, n - 8) == 0)) {
                *count = s.vcount;
                return s.vcount ? vals_.data() + s.voff : &none_;  // never null on a hit
            }
            i = (i + 1) & mask_;
        }
        return nullptr;
    }
    void add(const uint8_t* p, size_t n, uint64_t h, const Tok* toks, size_t count) {
        if (count_ >= limit_) clear();
        if (2 * (count_ + 1) > slots_.size()) grow();
        size_t i = h & mask_;
        while (slots_[i].used) i = (i + 1) & mask_;
        slots_[i] = Slot{h, key_head(p, n), (uint32_t)keys_.size(), (uint32_t)n, (uint32_t)vals_.size(),
                         (uint32_t)count, true};
        keys_.insert(keys_.end(), p, p + n);
        vals_.insert(vals_.end(), toks, toks + count);
        count_++;
    }
    void clear() {
        slots_.clear();
        keys_.clear();
        vals_.clear();
        count_ = 0;
        mask_ = 0;
    }

  private:
    struct Slot {
        uint64_t h, head;
        uint32_t koff, klen, voff, vcount;
        bool used;
    };
    std::vector<Slot> slots_;
    std::vector<uint8_t> keys_;
    std::vector<Tok> vals_;
    size_t mask_ = 0, count_ = 0, limit_;
    Tok none_{-1, 0, 0};
    void grow() {
        std::vector<Slot> old;
        old.swap(slots_);
        size_t size = old.empty() ? 4096 : old.size() * 2;
        slots_.assign(size, Slot{0, 0, 0, 0, 0, 0, false});
        mask_ = size - 1;
        for (const Slot& s : old) {
            if (!s.used) continue;
            size_t i = s.h & mask_;
            while (slots_[i].used) i = (i + 1) & mask_;
            slots_[i] = s;
        }
    }
};

}  // namespace pipe
}  // namespace tokkit
