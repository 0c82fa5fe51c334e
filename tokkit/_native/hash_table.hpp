// The one hash and the one open-addressing table of the compiled code.
//
// Every table in tokkit/_native is a HashTable<Slot>: one array of slots, a power-of-two capacity,
// linear probing, and growth by doubling before it passes its load. A slot holds its key (or where
// the key lives) and its value side by side, so a hit is usually one cache line, where a
// std::unordered_map follows a pointer to a node allocated apart. Keys that fit (up to 16 bytes)
// sit in the slot itself.
//
// Each slot type says three things (see the tables in short_keys.hpp, vocab_tables.hpp, trie.hpp):
//   - a slot of zero bytes is free, and `bool empty() const` tells;
//   - `uint64_t hash() const` gives its key's hash again when the table grows (a table whose slots
//     do not hold enough to rehash passes a function instead);
//   - the caller's key test never accepts a free slot.
//
// One thread owns a table while it changes; a table that is only read may be shared.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tokkit {

const uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL;  // 2**64 / phi, odd

// The one mixer: multiplications by splitmix64's constants, each followed by a shift that brings
// the product's upper half, which every lower key bit reaches, down to the low bits that pick a
// slot. The words of a byte string take two rounds. An integer key (a merge pair, a trie edge)
// takes one, its upper half folded in first so that its high bits count too, and the product's
// halves swapped.
inline uint64_t mix64(uint64_t x) {
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 32;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 29);
}
inline uint64_t hash_int(uint64_t k) {
    k = (k ^ (k >> 32)) * 0xBF58476D1CE4E5B9ULL;
    return (k >> 32) | (k << 32);
}

// The hash of a key of up to 16 bytes held as two zero-padded words and its length (n may also
// carry a seed: hash_bytes chains 16-byte blocks through it).
inline uint64_t hash_words(uint64_t k0, uint64_t k1, uint64_t n) { return mix64(k0 ^ (k1 * GOLDEN) ^ n); }

inline uint64_t load8(const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);  // one unaligned load
    return w;
}

// KEY_MASKS[n]: the two words' masks that keep the first n (0 to 16) bytes of 16.
struct KeyMasks {
    uint64_t m[17][2];
    constexpr KeyMasks() : m() {
        for (int n = 0; n <= 16; ++n) {
            m[n][0] = n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
            m[n][1] = n <= 8 ? 0 : n == 16 ? ~0ULL : (1ULL << (8 * (n - 8))) - 1;
        }
    }
    constexpr const uint64_t* operator[](size_t n) const { return m[n]; }
};
inline constexpr KeyMasks KEY_MASKS{};

// The n (0 to 16) bytes at p zero-padded into two little-endian words, as memcpy into zeroed words
// gives them. `room`: 16 bytes may be read at p, so two loads and a mask do it; otherwise the loads
// overlap inside the n bytes and no byte past them is read.
inline void key_words(const uint8_t* p, size_t n, bool room, uint64_t* k0, uint64_t* k1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (room) {  // masks from a table: no branch on the length, which varies piece to piece
        *k0 = load8(p) & KEY_MASKS[n][0];
        *k1 = load8(p + 8) & KEY_MASKS[n][1];
        return;
    }
    if (n >= 8) {
        *k0 = load8(p);
        *k1 = n == 8 ? 0 : load8(p + n - 8) >> (8 * (16 - n));
        return;
    }
    *k1 = 0;
    if (n >= 4) {
        uint32_t a, b;
        std::memcpy(&a, p, 4);
        std::memcpy(&b, p + n - 4, 4);
        *k0 = (uint64_t)a | (((uint64_t)b >> (8 * (8 - n))) << 32);
        return;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
    *k0 = w;
    return;
#else
    (void)room;
    *k0 = 0;
    *k1 = 0;
    if (n > 8) {
        std::memcpy(k0, p, 8);
        std::memcpy(k1, p + 8, n - 8);
    } else {
        std::memcpy(k0, p, n);
    }
#endif
}

// The hash of a byte string: its (padded) words and length when it fits in 16 bytes, else its
// whole 16-byte blocks chained through the mixer, then the last 16 bytes (read from the end) and
// the length. The chain does not depend on the length, so the hashes of a string's prefixes come
// one after the other in O(1) each (PrefixHash).
inline uint64_t hash_bytes(const void* data, size_t n) {
    const uint8_t* p = (const uint8_t*)data;
    uint64_t k0, k1;
    if (n <= 16) {
        key_words(p, n, false, &k0, &k1);
        return hash_words(k0, k1, n);
    }
    uint64_t h = GOLDEN;
    for (size_t i = 0; i + 16 < n; i += 16) h = hash_words(load8(p + i), load8(p + i + 8), h);
    return hash_words(load8(p + n - 16), load8(p + n - 8), h ^ n);
}

// hash_bytes(p, k) for k growing from call to call, each in O(1): a long key's prefixes hash in
// linear time.
class PrefixHash {
  public:
    explicit PrefixHash(const uint8_t* p) : p_(p) {}
    uint64_t at(size_t k) {
        if (k <= 16) {
            uint64_t k0, k1;
            key_words(p_, k, false, &k0, &k1);
            return hash_words(k0, k1, k);
        }
        for (; chained_ + 16 < k; chained_ += 16) h_ = hash_words(load8(p_ + chained_), load8(p_ + chained_ + 8), h_);
        return hash_words(load8(p_ + k - 16), load8(p_ + k - 8), h_ ^ k);
    }

  private:
    const uint8_t* p_;
    size_t chained_ = 0;  // bytes folded into h_
    uint64_t h_ = GOLDEN;
};

// Ask for the cache line at p ahead of use (a no-op where the compiler has no such builtin).
inline void prefetch_line(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

// Gives a slot's hash back from the slot itself.
struct SlotHash {
    template <class Slot>
    uint64_t operator()(const Slot& s) const { return s.hash(); }
};

// Open addressing over a power-of-two array of Slots (see the top). The table grows by doubling
// when one more key would fill more than LoadTenths/10 of it, up to max_slots (then claim() says
// `full`). Memory that cannot be had is a nullptr from claim() with `full` false.
template <class Slot, unsigned LoadTenths = 5>
class HashTable {
  public:
    explicit HashTable(size_t first_slots = 16) : first_(round_up(first_slots < 2 ? 2 : first_slots)) {}
    ~HashTable() { release(); }
    HashTable(const HashTable&) = delete;
    HashTable& operator=(const HashTable&) = delete;
    HashTable(HashTable&& o) noexcept { take(o); }
    HashTable& operator=(HashTable&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }

    size_t size() const { return used_; }
    size_t capacity() const { return mask_ ? mask_ + 1 : 0; }
    Slot* at(size_t i) const { return slots_ + i; }  // i < capacity(); may be free
    const void* slot_address(uint64_t h) const { return slots_ + (h & mask_); }
    const Slot* slots() const { return slots_; }  // with mask(): a lookup loop keeps both in registers
    size_t mask() const { return mask_; }

    // The slot for hash h that `is_key` accepts, or nullptr.
    template <class IsKey>
    inline Slot* find(uint64_t h, const IsKey& is_key) const {
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            Slot* s = slots_ + i;
            if (is_key(*s)) return s;
            if (s->empty()) return nullptr;
        }
    }

    // A free slot for a new key of hash h (not in the table; the caller fills the slot in), after
    // growing if one more key needs it; nullptr when memory ran out or the table is at max_slots
    // (then *full is set).
    template <class HashOf = SlotHash>
    Slot* claim(uint64_t h, bool* full = nullptr, const HashOf& hash_of = HashOf()) {
        if (full) *full = false;
        if ((used_ + 1) * 10 > (mask_ + 1) * LoadTenths) {  // (always so without memory: mask_ 0)
            size_t want = mask_ ? (mask_ + 1) * 2 : first_;
            if (want > max_slots_) {
                if (full) *full = true;
                return nullptr;
            }
            if (!rehash(want, hash_of)) return nullptr;
        }
        size_t i = h & mask_;
        while (!slots_[i].empty()) i = (i + 1) & mask_;
        ++used_;
        return slots_ + i;
    }

    // The slot of the key `is_key` accepts, or a claimed one (*added set) for it.
    template <class IsKey, class HashOf = SlotHash>
    inline Slot* find_or_claim(uint64_t h, const IsKey& is_key, bool* added, const HashOf& hash_of = HashOf()) {
        Slot* s = find(h, is_key);
        *added = s == nullptr;
        return s ? s : claim(h, nullptr, hash_of);
    }

    // Frees slot s, moving later slots of its probe run back (no tombstones).
    template <class HashOf = SlotHash>
    void erase(Slot* s, const HashOf& hash_of = HashOf()) {
        size_t i = (size_t)(s - slots_);
        for (size_t j = i;;) {
            j = (j + 1) & mask_;
            if (slots_[j].empty()) break;
            size_t home = hash_of(slots_[j]) & mask_;
            // slot j stays when its home lies cyclically in (i, j]
            bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays) {
                slots_[i] = slots_[j];
                i = j;
            }
        }
        std::memset((void*)(slots_ + i), 0, sizeof(Slot));
        --used_;
    }

    // Room for n keys without growing; false when memory ran out.
    template <class HashOf = SlotHash>
    bool reserve(size_t n, const HashOf& hash_of = HashOf()) {
        size_t want = first_;
        while (n * 10 > want * LoadTenths) want *= 2;
        return want <= capacity() || rehash(want, hash_of);
    }

    // Every slot free, keeping the memory.
    void reset() {
        if (mask_) std::memset((void*)slots_, 0, (mask_ + 1) * sizeof(Slot));
        used_ = 0;
    }

    // Every slot free and the memory given back.
    void clear() {
        release();
        slots_ = none();
        base_ = nullptr;
        mapped_ = 0;
        mask_ = used_ = 0;
    }

    // The most slots the table may grow to (rounded up to a power of two); a bigger table is cleared.
    void set_max_slots(size_t slots) {
        max_slots_ = round_up(slots < first_ ? first_ : slots);
        if (capacity() > max_slots_) clear();
    }
    size_t max_slots() const { return max_slots_; }

  private:
    // A table without memory (mask_ 0; a table with memory has 2 slots or more) probes one free
    // slot that is never written, so find() needs no test. (Each extension module has its own: a
    // table made in one and grown in another tells by mask_, not by this address.)
    static Slot* none() {
        alignas(64) static Slot one;  // zero bytes: free
        return &one;
    }
    void release() {
        if (mask_) release_block(base_, mapped_);
    }
    static void release_block(void* base, size_t mapped) {
#if defined(__linux__)
        if (mapped) {
            munmap(base, mapped);
            return;
        }
#endif
        std::free(base);
    }

    Slot* slots_ = none();
    void* base_ = nullptr;  // the block slots_ lies in: malloc's, or mapped_ bytes from mmap
    size_t mapped_ = 0;
    size_t mask_ = 0, used_ = 0, first_, max_slots_ = ~(size_t)0 >> 1;

    static size_t round_up(size_t n) {
        size_t m = 1;
        while (m < n) m *= 2;
        return m;
    }

    void take(HashTable& o) {
        slots_ = o.slots_;
        base_ = o.base_;
        mapped_ = o.mapped_;
        mask_ = o.mask_;
        used_ = o.used_;
        first_ = o.first_;
        max_slots_ = o.max_slots_;
        o.slots_ = none();
        o.mask_ = o.used_ = 0;
    }

    // Zeroed memory for `bytes` of slots, or nullptr; base_ and mapped_ say how to give it back.
    // A big table comes straight from the kernel, on 2 MB boundaries and asking for huge pages:
    // lookups touch lines all over it, with 4 KB pages each would also miss the TLB, and fresh
    // pages read as zero without a pass to clear them.
    Slot* allocate(size_t bytes, void** base, size_t* mapped) {
        *mapped = 0;
#if defined(__linux__)
        const size_t huge = size_t(2) << 20;
        if (bytes >= huge && bytes % 4096 == 0) {
            size_t len = bytes + huge;
            void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) return nullptr;
            uintptr_t at = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1);
            size_t head = at - (uintptr_t)p;
            if (head) munmap(p, head);
            if (len - head - bytes) munmap((void*)(at + bytes), len - head - bytes);
#if defined(MADV_HUGEPAGE)
            madvise((void*)at, bytes, MADV_HUGEPAGE);
#endif
            *base = (void*)at;
            *mapped = bytes;
            return (Slot*)at;
        }
#endif
        void* raw = nullptr;
#if defined(_MSC_VER)
        raw = std::malloc(bytes);  // (MSVC has no posix_memalign; slots then may straddle lines)
#else
        if (posix_memalign(&raw, 64, bytes) != 0) raw = nullptr;  // two 32-byte slots a cache line
#endif
        if (!raw) return nullptr;
        std::memset(raw, 0, bytes);
        *base = raw;
        return (Slot*)raw;
    }

    template <class HashOf>
    bool rehash(size_t want, const HashOf& hash_of) {
        if (want > (~(size_t)0) / sizeof(Slot)) return false;
        void* base;
        size_t mapped;
        Slot* fresh = allocate(want * sizeof(Slot), &base, &mapped);
        if (!fresh) return false;
        Slot* old = slots_;
        size_t old_slots = capacity();
        slots_ = fresh;
        mask_ = want - 1;
        for (size_t k = 0; k < old_slots; ++k) {
            if (old[k].empty()) continue;
            size_t i = hash_of(old[k]) & mask_;
            while (!slots_[i].empty()) i = (i + 1) & mask_;
            slots_[i] = old[k];
        }
        if (old_slots) release_block(base_, mapped_);
        base_ = base;
        mapped_ = mapped;
        return true;
    }
};

}  // namespace tokkit
