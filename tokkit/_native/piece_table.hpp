// A per-thread table from short pre-tokenized pieces (up to 16 UTF-8 bytes) to their token ids.
//
// The byte-level encoder looks up every piece here before it runs BPE. A piece's bytes are the key,
// held inline (two 64-bit words, zero-padded), so a lookup is one hash and one or two probes of a
// 32-byte entry, and an entry never points elsewhere unless the piece has more than three ids. Open
// addressing with linear probing keeps a probe inside one cache line most of the time, which lets the
// encoder prefetch the lines of a batch of pieces before it reads any of them.
//
// The table grows by doubling while it is at most half full, up to `max_slots`; a table that would
// pass that is cleared and starts again, so memory stays bounded on text with endless new pieces.
// One thread owns a table: there is no lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tokkit {

struct PieceEntry {
    uint64_t k0, k1;  // the piece's bytes, zero-padded
    int32_t ids[3];   // count <= 3: the ids; more: ids[0] is where they start in the overflow arena
    uint8_t length;   // bytes in the piece; 0 marks an empty entry
    uint8_t count;    // how many ids
    uint16_t unused;
};
static_assert(sizeof(PieceEntry) == 32, "two entries per 64-byte cache line");

class PieceTable {
  public:
    static const size_t START_SLOTS = 4096;

    PieceTable() : slots_(nullptr), mask_(0), used_(0), max_slots_(size_t(1) << 19) {}
    ~PieceTable() { std::free(slots_); }
    PieceTable(const PieceTable&) = delete;
    PieceTable& operator=(const PieceTable&) = delete;

    // Every key bit reaches the slot index.
    static inline uint64_t hash(uint64_t k0, uint64_t k1, size_t n) {
        uint64_t h = (k0 ^ (k1 * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)n) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 32;
        h *= 0x94D049BB133111EBULL;
        h ^= h >> 29;
        return h;
    }

    inline const void* slot_address(uint64_t h) const { return slots_ ? &slots_[h & mask_] : nullptr; }

    // The entry for this key, or nullptr.
    inline const PieceEntry* find(uint64_t k0, uint64_t k1, size_t n, uint64_t h) const {
        if (!slots_) return nullptr;
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const PieceEntry& e = slots_[i];
            if (e.length == n && e.k0 == k0 && e.k1 == k1) return &e;
            if (e.length == 0) return nullptr;
        }
    }

    // The ids of an entry find() returned (valid until the next insert()).
    inline const int32_t* ids_of(const PieceEntry* e) const {
        return e->count <= 3 ? e->ids : arena_.data() + e->ids[0];
    }

    // Remember the ids of a piece that is not in the table. False when memory ran out (the table
    // then simply stays as it was).
    bool insert(uint64_t k0, uint64_t k1, size_t n, uint64_t h, const int32_t* ids, size_t count) {
        if (n == 0 || n > 16 || count > 255) return false;
        if (!slots_ || (used_ + 1) * 2 > mask_ + 1) {
            size_t want = slots_ ? (mask_ + 1) * 2 : START_SLOTS;
            if (want > max_slots_) {
                clear();
                want = START_SLOTS;
            }
            if (!rehash(want)) return false;
        }
        PieceEntry e;
        e.k0 = k0;
        e.k1 = k1;
        e.length = (uint8_t)n;
        e.count = (uint8_t)count;
        e.unused = 0;
        e.ids[0] = e.ids[1] = e.ids[2] = 0;
        if (count <= 3) {
            for (size_t k = 0; k < count; ++k) e.ids[k] = ids[k];
        } else {
            e.ids[0] = (int32_t)arena_.size();
            arena_.insert(arena_.end(), ids, ids + count);
        }
        place(e, h);
        ++used_;
        return true;
    }

    void clear() {
        std::free(slots_);
        slots_ = nullptr;
        mask_ = 0;
        used_ = 0;
        arena_.clear();
    }

    size_t size() const { return used_; }

    // The most slots the table may grow to (a power of two, at least START_SLOTS).
    void set_max_slots(size_t slots) {
        size_t m = START_SLOTS;
        while (m < slots) m *= 2;
        max_slots_ = m;
        if (slots_ && mask_ + 1 > max_slots_) clear();
    }

  private:
    PieceEntry* slots_;
    size_t mask_, used_, max_slots_;
    std::vector<int32_t> arena_;

    void place(const PieceEntry& e, uint64_t h) {
        size_t i = h & mask_;
        while (slots_[i].length != 0) i = (i + 1) & mask_;
        slots_[i] = e;
    }

    bool rehash(size_t want) {
        // 64-byte aligned, so an entry never straddles two cache lines
        void* raw = nullptr;
        size_t bytes = want * sizeof(PieceEntry);
#if defined(_MSC_VER)
        raw = std::malloc(bytes);  // (MSVC has no aligned_alloc; entries then may straddle lines)
#else
        // a big table sits on 2 MB boundaries and asks for huge pages: the lookups of a batch touch
        // lines all over it, and with 4 KB pages each one would also miss the TLB
        const size_t huge = size_t(2) << 20;
        if (posix_memalign(&raw, bytes >= huge ? huge : 64, bytes) != 0) raw = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (raw && bytes >= huge) madvise(raw, bytes, MADV_HUGEPAGE);
#endif
#endif
        if (!raw) return false;
        std::memset(raw, 0, bytes);
        PieceEntry* old = slots_;
        size_t old_slots = slots_ ? mask_ + 1 : 0;
        slots_ = (PieceEntry*)raw;
        mask_ = want - 1;
        for (size_t i = 0; i < old_slots; ++i)
            if (old[i].length) place(old[i], hash(old[i].k0, old[i].k1, old[i].length));
        std::free(old);
        return true;
    }
};

}  // namespace tokkit
