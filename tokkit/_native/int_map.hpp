// A flat hash map from non-negative int64 keys to int32 values, for the unigram trainer's tries.
//
// The tries look up (node << 21 | code point) once per character of every word on every pass, so
// the map is one array of (key, value) pairs with linear probing: a hit is usually one cache line,
// where std::unordered_map follows a pointer to a separately allocated node. Keys are never removed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tokkit {

struct IntMap {
    struct Slot {
        int64_t key;  // -1: empty
        int32_t value;
    };
    std::vector<Slot> slots;
    size_t mask = 0, count = 0;

    IntMap() { rehash(16); }

    static size_t spread(int64_t key) { return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 20); }

    // The value of `key`, or -1 when it is not in the map.
    int32_t get(int64_t key) const {
        for (size_t i = spread(key) & mask;; i = (i + 1) & mask) {
            const Slot& s = slots[i];
            if (s.key == key) return s.value;
            if (s.key < 0) return -1;
        }
    }

    // Sets key -> value (the key must not be in the map yet).
    void add(int64_t key, int32_t value) {
        if (2 * (count + 1) > slots.size()) rehash(2 * slots.size());
        size_t i = spread(key) & mask;
        while (slots[i].key >= 0) i = (i + 1) & mask;
        slots[i] = Slot{key, value};
        count++;
    }

    void rehash(size_t size) {
        std::vector<Slot> old;
        old.swap(slots);
        slots.assign(size, Slot{-1, 0});
        mask = size - 1;
        for (const Slot& s : old) {
            if (s.key < 0) continue;
            size_t i = spread(s.key) & mask;
            while (slots[i].key >= 0) i = (i + 1) & mask;
            slots[i] = s;
        }
    }
};

}  // namespace tokkit
