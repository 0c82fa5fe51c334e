// Tables keyed by short byte strings (1 to 16 bytes) held inline in 32-byte slots, and the word
// counter's table of words of any length; all on the one HashTable (hash_table.hpp).
//
// The encoder maps pre-tokenized pieces to their ids with one (PieceTable below), the word counter
// maps words to their counts with another (CountTable). A key's bytes sit in the slot itself, two
// 64-bit words zero-padded, so a lookup is one hash and, most of the time, one cache line: nothing
// points elsewhere. Slots are 64-byte aligned (two per line). Callers hash a batch of keys first and
// prefetch their slots (slot_address), so that the cache misses of a batch overlap.
//
// One thread owns a table: there is no lock.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hash_table.hpp"

namespace tokkit {

// Entry: 32 bytes, with uint64_t k0, k1 and a uint8_t `length` (0 marks a free slot).
template <class Entry>
class ShortKeyTable {
  public:
    static constexpr size_t START_SLOTS = 4096;

    ShortKeyTable() : table_(START_SLOTS) { table_.set_max_slots(size_t(1) << 19); }

    inline const void* slot_address(uint64_t h) const { return table_.slot_address(h); }
    const Entry* slots() const { return table_.slots(); }
    size_t mask() const { return table_.mask(); }

    // The entry for this key, or nullptr.
    inline Entry* find(uint64_t k0, uint64_t k1, size_t n, uint64_t h) const {
        return table_.find(h, [=](const Entry& e) { return e.length == n && e.k0 == k0 && e.k1 == k1; });
    }

    // A new entry for a key that is not in the table (its payload zeroed), or nullptr when the table
    // is at max_slots (`full` is then set) or memory ran out.
    Entry* add(uint64_t k0, uint64_t k1, size_t n, uint64_t h, bool* full) {
        *full = false;
        if (n == 0 || n > 16) return nullptr;
        Entry* e = table_.claim(h, full);
        if (!e) return nullptr;
        e->k0 = k0;
        e->k1 = k1;
        e->length = (uint8_t)n;
        return e;
    }

    void clear() { table_.clear(); }
    // The most slots the table may grow to (a power of two, at least START_SLOTS).
    void set_max_slots(size_t slots) { table_.set_max_slots(slots); }
    size_t size() const { return table_.size(); }
    size_t capacity() const { return table_.capacity(); }
    Entry* slot(size_t i) const { return table_.at(i); }  // i < capacity(); length 0: free

  private:
    HashTable<Entry> table_;
};

// ---- Pieces -> token ids (the byte-level encoder, one table per thread)

struct PieceEntry {
    uint64_t k0, k1;  // the piece's bytes, zero-padded
    int32_t ids[3];   // count <= 3: the ids; more: ids[0] is where they start in the overflow arena
    uint8_t length;   // bytes in the piece; 0 marks a free slot
    uint8_t count;    // how many ids
    uint16_t unused;
    bool empty() const { return length == 0; }
    uint64_t hash() const { return hash_words(k0, k1, length); }
};
static_assert(sizeof(PieceEntry) == 32, "two entries per 64-byte cache line");

// A piece's key and hash, made ahead of its lookup (PieceTable::stage).
struct PieceKey {
    uint64_t k0, k1, h;
};

// A table that would grow past its cap is cleared and starts again, so memory stays bounded on
// text with endless new pieces.
//
// The byte-level encoder looks pieces up a batch at a time: stage() keys and hashes the pieces of a
// batch and prefetches their slots, and emit() copies their ids out up to the first piece it cannot
// serve. Both keep the table's address and mask in registers (a loop through find() reloads them
// after every store, as far as the compiler knows a store may change them).
class PieceTable {
  public:
    // Keys of the pieces of p (n bytes) that start at a and end at ends[0..count), their slots
    // prefetched; a piece over 16 bytes gets no key (emit() stops at it).
    inline void stage(const uint8_t* p, size_t a, size_t n, const size_t* ends, size_t count,
                      PieceKey* keys) const {
        const PieceEntry* base = table_.slots();
        const size_t mask = table_.mask();
        for (size_t q = 0; q < count; ++q) {
            const size_t m = ends[q] - a;
            if (m <= 16) {
                key_words(p + a, m, a + 16 <= n, &keys[q].k0, &keys[q].k1);
                keys[q].h = hash_words(keys[q].k0, keys[q].k1, m);
                prefetch_line(base + (keys[q].h & mask));
            }
            a = ends[q];
        }
    }

    // The ids of pieces q, q + 1, ... of a staged batch (piece q starts at a) written at *w, while
    // each is in the table with at most three ids; the first piece that is not (count if none).
    // Three ids are copied whatever a piece's count, so *w needs room for three a piece.
    inline size_t emit(const size_t* ends, size_t a, const PieceKey* keys, size_t q, size_t count,
                       int32_t** w) const {
        int32_t* out = *w;
        for (; q < count; ++q) {
            const size_t m = ends[q] - a;
            if (m > 16) break;
            const PieceEntry* e = find_in(keys[q].k0, keys[q].k1, m, keys[q].h);
            if (!e || e->count > 3) break;
            std::memcpy(out, e->ids, 3 * sizeof(int32_t));
            out += e->count;
            a = ends[q];
        }
        *w = out;
        return q;
    }

    inline const void* slot_address(uint64_t h) const { return table_.slot_address(h); }
    inline const PieceEntry* find(uint64_t k0, uint64_t k1, size_t n, uint64_t h) const {
        return table_.find(k0, k1, n, h);
    }
    // find() as an inner loop does it: the table's address and mask read once, into registers (a
    // loop through find() reloads them after every store it makes).
    inline const PieceEntry* find_in(uint64_t k0, uint64_t k1, size_t n, uint64_t h) const {
        const PieceEntry* base = table_.slots();
        const size_t mask = table_.mask();
        for (size_t i = h & mask;; i = (i + 1) & mask) {
            if (base[i].length == n && base[i].k0 == k0 && base[i].k1 == k1) return base + i;
            if (base[i].length == 0) return nullptr;
        }
    }
    // The ids of an entry find() returned (valid until the next insert()).
    inline const int32_t* ids_of(const PieceEntry* e) const {
        return e->count <= 3 ? e->ids : arena_.data() + e->ids[0];
    }

    // Remember the ids of a piece that is not in the table; false if it could not be kept (memory
    // that runs out included: the table then stays as it was).
    bool insert(uint64_t k0, uint64_t k1, size_t n, uint64_t h, const int32_t* ids, size_t count) noexcept {
        if (count > 255) return false;
        if (count > 3 && arena_.size() + count > arena_.capacity()) {
            // room for the ids before the entry goes in: after that nothing may fail
            try {
                arena_.reserve(std::max(arena_.size() + count, 2 * arena_.capacity()));
            } catch (...) {
                return false;
            }
        }
        bool full;
        PieceEntry* e = table_.add(k0, k1, n, h, &full);
        if (!e && full) {
            clear();
            e = table_.add(k0, k1, n, h, &full);
        }
        if (!e) return false;
        e->count = (uint8_t)count;
        if (count <= 3) {
            for (size_t k = 0; k < count; ++k) e->ids[k] = ids[k];
        } else {
            e->ids[0] = (int32_t)arena_.size();
            arena_.insert(arena_.end(), ids, ids + count);
        }
        return true;
    }

    void clear() {
        table_.clear();
        arena_.clear();
    }
    void set_max_slots(size_t slots) {
        table_.set_max_slots(slots);
        if (!table_.size()) arena_.clear();
    }
    size_t size() const { return table_.size(); }

  private:
    ShortKeyTable<PieceEntry> table_;
    std::vector<int32_t> arena_;
};

// ---- Words -> counts (the trainers' word counter)

struct CountEntry {
    uint64_t k0, k1;  // the word's bytes, zero-padded
    int64_t count;
    uint8_t length;   // bytes in the word; 0 marks a free slot
    uint8_t unused[7];
    bool empty() const { return length == 0; }
    uint64_t hash() const { return hash_words(k0, k1, length); }
};
static_assert(sizeof(CountEntry) == 32, "two entries per 64-byte cache line");

typedef ShortKeyTable<CountEntry> CountTable;

// Words of any length -> counts, compact: the words in one byte arena, entry e being
// arena[offs[e]:offs[e + 1]] with its count in counts[e], and 8-byte slots holding the upper half
// of a word's hash (a tag) and its entry number; about 40 bytes per distinct word with the keys.
class WordTable {
  public:
    std::vector<uint8_t> arena;
    std::vector<uint64_t> offs{0};
    std::vector<int64_t> counts;

    WordTable() : table_(1 << 14) {}

    // Adds count to the word's count (a new word starts at 0); false when memory ran out or the
    // table holds 2**32 - 1 words.
    bool add(const uint8_t* p, size_t n, int64_t count) {
        uint64_t h = hash_bytes(p, n);
        uint32_t tag = (uint32_t)(h >> 32);
        const uint8_t* a = arena.data();
        const uint64_t* o = offs.data();
        Slot* s = table_.find(h, [&](const Slot& x) {
            uint32_t e = x.entry1 - 1;
            return x.entry1 && x.tag == tag && o[e + 1] - o[e] == n && std::memcmp(a + o[e], p, n) == 0;
        });
        if (s) {
            counts[s->entry1 - 1] += count;
            return true;
        }
        size_t e = counts.size();
        if (e >= 0xFFFFFFFFULL) return false;
        s = table_.claim(h, nullptr, Rehash{this});
        if (!s) return false;
        *s = Slot{tag, (uint32_t)(e + 1)};
        arena.insert(arena.end(), p, p + n);
        offs.push_back(arena.size());
        counts.push_back(count);
        return true;
    }
    size_t size() const { return counts.size(); }
    size_t slot_bytes() const { return table_.capacity() * sizeof(Slot); }

  private:
    struct Slot {
        uint32_t tag, entry1;  // entry1: the entry number + 1; 0: a free slot
        bool empty() const { return entry1 == 0; }
    };
    struct Rehash {
        const WordTable* t;
        uint64_t operator()(const Slot& s) const {
            uint32_t e = s.entry1 - 1;
            return hash_bytes(t->arena.data() + t->offs[e], t->offs[e + 1] - t->offs[e]);
        }
    };
    HashTable<Slot, 7> table_;
};

}  // namespace tokkit
