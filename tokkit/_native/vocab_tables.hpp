// The models' tables, shared by the fast paths (encode.pyx, through encode_tables.pyx) and the
// general path (pipeline_model.hpp), all on the one HashTable (hash_table.hpp):
//   - TokenTable: token bytes -> id, and whether a longer token starts with these bytes;
//   - PairTable: a merge's (left id, right id) -> (rank, merged id);
//   - TokenMemo: a thread's bounded memo of pieces already tokenized, bytes -> tokens.
// Keys of any length live in one byte arena; a slot holds the key's hash and first 8 bytes, so a
// short key compares without touching the arena.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hash_table.hpp"
#include "utf8.hpp"

namespace tokkit {

// A token of a piece: its id and its (start, end) within the piece (bytes or chars, as the model says).
struct Tok {
    int32_t id;
    uint32_t start, end;
};

// The hash and the first 8 bytes (zero-padded) of a key.
struct BytesKey {
    uint64_t h, head;
};

inline BytesKey bytes_key(const uint8_t* p, size_t n) {
    uint64_t k0, k1;
    if (n <= 16) {
        key_words(p, n, false, &k0, &k1);
        return BytesKey{hash_words(k0, k1, n), k0};
    }
    return BytesKey{hash_bytes(p, n), load8(p)};
}

inline uint64_t key_head(const uint8_t* p, size_t n) {
    if (n >= 8) return load8(p);
    uint64_t k0, k1;
    key_words(p, n, false, &k0, &k1);
    return k0;
}

// The BytesKey of p[0:n] for n growing from call to call, each in O(1): a walk that tries every
// prefix of a piece (Unigram's lattice) hashes each without reading it again.
class GrowingKey {
  public:
    explicit GrowingKey(const uint8_t* p) : p_(p), long_(p) {}
    // The key of the first n bytes (n at least the last call's).
    inline BytesKey at(size_t n) {
        for (; n_ < n && n_ < 16; n_++) {
            if (n_ < 8) k0_ |= (uint64_t)p_[n_] << (8 * n_);
            else k1_ |= (uint64_t)p_[n_] << (8 * (n_ - 8));
        }
        n_ = n;
        return BytesKey{n <= 16 ? hash_words(k0_, k1_, n) : long_.at(n), k0_};
    }

  private:
    const uint8_t* p_;
    size_t n_ = 0;
    uint64_t k0_ = 0, k1_ = 0;
    PrefixHash long_;
};


// Byte strings -> (id, "a longer key starts with this one"); read-only once built.
class TokenTable {
  public:
    struct Slot {
        uint64_t h, head;
        uint32_t off, len1;  // the key is arena[off:off + len1 - 1]; len1 0: a free slot
        int32_t id;          // -1: only a prefix of longer keys
        int32_t more;        // 1: some longer key starts with this one
        bool empty() const { return len1 == 0; }
        uint64_t hash() const { return h; }
    };

    // Adds key -> id (the first id given for a key wins); with `prefixes`, every proper prefix of
    // the key at a UTF-8 character boundary is added too (id -1 unless it is a key itself), and
    // marked as starting a longer key. A prefix points into its key's bytes and hashes in O(1), so
    // a long token costs memory and time in proportion to its length.
    void add(const uint8_t* p, size_t n, int32_t id, bool prefixes) {
        BytesKey k = bytes_key(p, n);
        Slot* s = const_cast<Slot*>(find(p, n, k));
        uint32_t off;
        if (s) {
            off = s->off;
            if (s->id < 0) s->id = id;
        } else {
            if (arena_.size() + n > UINT32_MAX) throw std::bad_alloc();
            off = (uint32_t)arena_.size();
            arena_.insert(arena_.end(), p, p + n);
            put(k, off, n, id, 0);
            if (n > longest_) longest_ = n;
        }
        if (!prefixes || !n) return;
        PrefixHash hash(p);
        for (size_t m = utf8_width(p[0]); m < n; m += utf8_width(p[m])) {
            BytesKey pk{hash.at(m), key_head(p, m)};
            Slot* x = const_cast<Slot*>(find(p, m, pk));
            if (x) x->more = 1;
            else put(pk, off, m, -1, 1);
        }
    }

    inline const Slot* find(const uint8_t* p, size_t n, BytesKey k) const {
        const uint8_t* arena = arena_.data();
        return table_.find(k.h, [&](const Slot& s) {
            return s.h == k.h && s.head == k.head && s.len1 == n + 1 &&
                   (n <= 8 || std::memcmp(arena + s.off + 8, p + 8, n - 8) == 0);
        });
    }
    inline const Slot* find(const uint8_t* p, size_t n) const { return find(p, n, bytes_key(p, n)); }

    // The id of the key, or -1 (absent, or only a prefix).
    inline int32_t get(const uint8_t* p, size_t n) const {
        const Slot* s = find(p, n);
        return s ? s->id : -1;
    }
    size_t size() const { return table_.size(); }
    size_t longest() const { return longest_; }  // bytes of the longest key

  private:
    HashTable<Slot> table_;
    std::vector<uint8_t> arena_;
    size_t longest_ = 0;

    void put(BytesKey k, uint32_t off, size_t n, int32_t id, int32_t more) {
        Slot* s = table_.claim(k.h);
        if (!s) throw std::bad_alloc();
        *s = Slot{k.h, k.head, off, (uint32_t)(n + 1), id, more};
    }
};

inline uint64_t pair_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

// (left id, right id) -> rank << 32 | merged id; read-only once built.
class PairTable {
  public:
    struct Slot {
        uint64_t key1;  // pair_key + 1; 0: a free slot
        int64_t value;
        bool empty() const { return key1 == 0; }
        uint64_t hash() const { return hash_int(key1); }
    };

    // Adds a merge (the first, lowest-rank, merge of a pair wins).
    void add(int32_t a, int32_t b, int32_t rank, int32_t merged) {
        uint64_t k = pair_key(a, b) + 1;
        bool added;
        Slot* s = table_.find_or_claim(hash_int(k), [k](const Slot& x) { return x.key1 == k; }, &added);
        if (!s) throw std::bad_alloc();
        if (added) *s = Slot{k, ((int64_t)rank << 32) | (uint32_t)merged};
    }

    // rank << 32 | merged id of the merge of (a, b), or -1: comparing two values compares ranks.
    inline int64_t get(int32_t a, int32_t b) const {
        uint64_t k = pair_key(a, b) + 1;
        const Slot* s = table_.find(hash_int(k), [k](const Slot& x) { return x.key1 == k; });
        return s ? s->value : -1;
    }
    size_t size() const { return table_.size(); }

  private:
    HashTable<Slot> table_;
};

// One thread's memo of pieces already tokenized: bytes -> tokens. It starts again empty when it
// holds max_entries pieces or when keeping one more would make the memory it holds pass max_bytes
// (32 MiB unless told): its keys' and tokens' buffers as they would be once grown (by doubling),
// and its slots as they would be once the table grew. So on text with endless new pieces its
// memory stays under max_bytes, whatever the stream's length (docs/hub-files.md, "Memory").
class TokenMemo {
  public:
    explicit TokenMemo(size_t max_entries = 1 << 16, size_t max_bytes = 32 << 20, size_t first_slots = 64)
        : table_(first_slots), max_entries_(max_entries), max_bytes_(max_bytes) {}

    // The tokens of the piece and their count, or nullptr (never null on a hit, even of no tokens).
    inline const Tok* find(const uint8_t* p, size_t n, BytesKey k, size_t* count) const {
        const uint8_t* keys = keys_.data();
        const Slot* s = table_.find(k.h, [&](const Slot& x) {
            return x.h == k.h && x.head == k.head && x.klen1 == n + 1 &&
                   (n <= 8 || std::memcmp(keys + x.koff + 8, p + 8, n - 8) == 0);
        });
        if (!s) return nullptr;
        *count = s->vcount;
        return s->vcount ? vals_.data() + s->voff : &none_;
    }

    // Remembers the tokens of a piece that is not in the memo. Without memory it keeps nothing (the
    // piece is tokenized again next time) and stays as it was: the nogil kernels call it.
    void add(const uint8_t* p, size_t n, BytesKey k, const Tok* toks, size_t count) noexcept {
        if (table_.size() >= max_entries_ || bytes_after(n, count) > max_bytes_) clear();
        if (n > max_bytes_ / 2 || count * sizeof(Tok) > max_bytes_ / 2) return;  // too big to keep at all
        size_t koff = keys_.size(), voff = vals_.size();
        try {  // the bytes first: a slot is claimed only for a piece whose bytes are in
            keys_.insert(keys_.end(), p, p + n);
            vals_.insert(vals_.end(), toks, toks + count);
        } catch (...) {
            keys_.resize(koff);
            vals_.resize(voff);
            return;
        }
        Slot* s = table_.claim(k.h);
        if (!s) {
            keys_.resize(koff);
            vals_.resize(voff);
            return;
        }
        *s = Slot{k.h, k.head, (uint32_t)koff, (uint32_t)(n + 1), (uint32_t)voff, (uint32_t)count};
    }

    void clear() {
        table_.reset();
        keys_.clear();
        vals_.clear();
    }
    size_t size() const { return table_.size(); }
    // Bytes held: what max_bytes bounds.
    size_t nbytes() const { return bytes_after(0, 0); }
    size_t max_bytes() const { return max_bytes_; }

  private:
    // The bytes held once `more` keys' bytes and `count` tokens are added (with nothing added: now).
    // A buffer that must grow doubles at least; the table doubles when one more key passes half.
    size_t bytes_after(size_t more, size_t count) const {
        auto grown = [](size_t size, size_t cap, size_t add) {
            return size + add <= cap ? cap : std::max(size + add, 2 * cap);
        };
        size_t slots = table_.capacity();
        if (more + count && (table_.size() + 1) * 2 > slots) slots = std::max<size_t>(2 * slots, 64);
        return grown(keys_.size(), keys_.capacity(), more) + grown(vals_.size(), vals_.capacity(), count) * sizeof(Tok) +
               slots * sizeof(Slot);
    }

    struct Slot {
        uint64_t h, head;
        uint32_t koff, klen1;  // the key is keys_[koff:koff + klen1 - 1]; klen1 0: a free slot
        uint32_t voff, vcount;
        bool empty() const { return klen1 == 0; }
        uint64_t hash() const { return h; }
    };
    HashTable<Slot> table_;
    std::vector<uint8_t> keys_;
    std::vector<Tok> vals_;
    size_t max_entries_, max_bytes_;
    Tok none_{-1, 0, 0};
};

}  // namespace tokkit
