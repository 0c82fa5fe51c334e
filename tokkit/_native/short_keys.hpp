// Hash tables keyed by short byte strings (1 to 16 bytes) held inline in 32-byte entries.
//
// The encoder maps pre-tokenized pieces to their ids with one (PieceTable below), the word counter
// maps words to their counts with another (CountTable). A key's bytes sit in the entry itself, two
// 64-bit words zero-padded, so a lookup is one hash and, most of the time, one cache line: nothing
// points elsewhere. Open addressing with linear probing; 64-byte aligned slots (two entries per
// line); a table grows by doubling while at most half full. Callers hash a batch of keys first and
// prefetch their slots (slot_address), so that the cache misses of a batch overlap.
//
// One thread owns a table: there is no lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tokkit {

// The key of the n (1 to 16) bytes at p: the bytes zero-padded into two 64-bit words, as memcpy
// into zeroed words gives them. `room`: 16 bytes may be read at p, so on little-endian machines two
// loads and a mask do it.
inline void piece_key(const uint8_t* p, size_t n, bool room, uint64_t* k0, uint64_t* k1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (room) {
        uint64_t a, b;
        std::memcpy(&a, p, 8);
        std::memcpy(&b, p + 8, 8);
        if (n >= 8) {
            *k0 = a;
            *k1 = n == 16 ? b : (b & ((1ULL << (8 * (n - 8))) - 1));
        } else {
            *k0 = a & ((1ULL << (8 * n)) - 1);
            *k1 = 0;
        }
        return;
    }
#endif
    *k0 = 0;
    *k1 = 0;
    if (n > 8) {
        std::memcpy(k0, p, 8);
        std::memcpy(k1, p + 8, n - 8);
    } else {
        std::memcpy(k0, p, n);
    }
}

// Every key bit reaches the slot index.
inline uint64_t short_key_hash(uint64_t k0, uint64_t k1, size_t n) {
    uint64_t h = (k0 ^ (k1 * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)n) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 29;
    return h;
}

// Ask for the cache line at p ahead of use (a no-op where the compiler has no such builtin).
inline void prefetch_line(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

// Entry: 32 bytes, with uint64_t k0, k1 and a uint8_t `length` (0 marks an empty slot).
template <class Entry>
class ShortKeyTable {
  public:
    static const size_t START_SLOTS = 4096;

    ShortKeyTable() : slots_(nullptr), mask_(0), used_(0), max_slots_(size_t(1) << 19) {}
    ~ShortKeyTable() { std::free(slots_); }
    ShortKeyTable(const ShortKeyTable&) = delete;
    ShortKeyTable& operator=(const ShortKeyTable&) = delete;

    inline const void* slot_address(uint64_t h) const { return slots_ ? &slots_[h & mask_] : nullptr; }

    // The entry for this key, or nullptr.
    inline Entry* find(uint64_t k0, uint64_t k1, size_t n, uint64_t h) const {
        if (!slots_) return nullptr;
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            Entry& e = slots_[i];
            if (e.length == n && e.k0 == k0 && e.k1 == k1) return &e;
            if (e.length == 0) return nullptr;
        }
    }

    // A new entry for a key that is not in the table (its payload zeroed), or nullptr when the table
    // is at max_slots (`full` is then set) or memory ran out.
    Entry* add(uint64_t k0, uint64_t k1, size_t n, uint64_t h, bool* full) {
        *full = false;
        if (n == 0 || n > 16) return nullptr;
        if (!slots_ || (used_ + 1) * 2 > mask_ + 1) {
            size_t want = slots_ ? (mask_ + 1) * 2 : START_SLOTS;
            if (want > max_slots_) {
                *full = true;
                return nullptr;
            }
            if (!rehash(want)) return nullptr;
        }
        size_t i = h & mask_;
        while (slots_[i].length != 0) i = (i + 1) & mask_;
        Entry& e = slots_[i];
        std::memset(&e, 0, sizeof(Entry));
        e.k0 = k0;
        e.k1 = k1;
        e.length = (uint8_t)n;
        ++used_;
        return &e;
    }

    void clear() {
        std::free(slots_);
        slots_ = nullptr;
        mask_ = 0;
        used_ = 0;
    }

    // The most slots the table may grow to (a power of two, at least START_SLOTS).
    void set_max_slots(size_t slots) {
        size_t m = START_SLOTS;
        while (m < slots) m *= 2;
        max_slots_ = m;
        if (slots_ && mask_ + 1 > max_slots_) clear();
    }

    size_t size() const { return used_; }
    size_t capacity() const { return slots_ ? mask_ + 1 : 0; }
    Entry* slot(size_t i) const { return &slots_[i]; }  // i < capacity(); length 0: empty

  private:
    Entry* slots_;
    size_t mask_, used_, max_slots_;

    bool rehash(size_t want) {
        void* raw = nullptr;
        size_t bytes = want * sizeof(Entry);
#if defined(_MSC_VER)
        raw = std::malloc(bytes);  // (MSVC has no posix_memalign; entries then may straddle lines)
#else
        // a big table sits on 2 MB boundaries and asks for huge pages: a batch's lookups touch
        // lines all over it, and with 4 KB pages each would also miss the TLB
        const size_t huge = size_t(2) << 20;
        if (posix_memalign(&raw, bytes >= huge ? huge : 64, bytes) != 0) raw = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (raw && bytes >= huge) madvise(raw, bytes, MADV_HUGEPAGE);
#endif
#endif
        if (!raw) return false;
        std::memset(raw, 0, bytes);
        Entry* old = slots_;
        size_t old_slots = slots_ ? mask_ + 1 : 0;
        slots_ = (Entry*)raw;
        mask_ = want - 1;
        for (size_t k = 0; k < old_slots; ++k) {
            if (!old[k].length) continue;
            size_t i = short_key_hash(old[k].k0, old[k].k1, old[k].length) & mask_;
            while (slots_[i].length != 0) i = (i + 1) & mask_;
            slots_[i] = old[k];
        }
        std::free(old);
        return true;
    }
};

// ---- Pieces -> token ids (the byte-level encoder, one table per thread)

struct PieceEntry {
    uint64_t k0, k1;  // the piece's bytes, zero-padded
    int32_t ids[3];   // count <= 3: the ids; more: ids[0] is where they start in the overflow arena
    uint8_t length;   // bytes in the piece; 0 marks an empty entry
    uint8_t count;    // how many ids
    uint16_t unused;
};
static_assert(sizeof(PieceEntry) == 32, "two entries per 64-byte cache line");

// A table that would grow past its cap is cleared and starts again, so memory stays bounded on
// text with endless new pieces.
class PieceTable {
  public:
    inline const void* slot_address(uint64_t h) const { return table_.slot_address(h); }
    inline const PieceEntry* find(uint64_t k0, uint64_t k1, size_t n, uint64_t h) const {
        return table_.find(k0, k1, n, h);
    }
    // The ids of an entry find() returned (valid until the next insert()).
    inline const int32_t* ids_of(const PieceEntry* e) const {
        return e->count <= 3 ? e->ids : arena_.data() + e->ids[0];
    }

    // Remember the ids of a piece that is not in the table; false if it could not be kept.
    bool insert(uint64_t k0, uint64_t k1, size_t n, uint64_t h, const int32_t* ids, size_t count) {
        if (count > 255) return false;
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
    uint8_t length;   // bytes in the word; 0 marks an empty entry
    uint8_t unused[7];
};
static_assert(sizeof(CountEntry) == 32, "two entries per 64-byte cache line");

typedef ShortKeyTable<CountEntry> CountTable;

}  // namespace tokkit
