// The merge engine's small C++ tables (pair map, heap entries, heap) and its scoring helpers,
// declared for Cython in merge.pxd; the algorithm is in merge.pyx.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "hash_table.hpp"
static inline uint64_t tk_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }
static inline int32_t tk_left(uint64_t k) { return (int32_t)(k >> 32); }
static inline int32_t tk_right(uint64_t k) { return (int32_t)(uint32_t)k; }

// Pair key -> count, plus an int32 word-list slot (-1: none) and a flag byte (likelihood: the pair
// sits in its symbols' `listed` vectors), on the one HashTable (hash_table.hpp). Zero counts are
// erased (the template's deletion moves the probe run back), so the table holds live pairs only.
struct TkPairSlot {
    uint64_t key1;  // the pair key + 1; 0: a free slot
    int64_t val;
    int32_t aux;
    uint8_t flag;
    uint64_t key() const { return key1 - 1; }
    bool empty() const { return key1 == 0; }
    uint64_t hash() const { return tokkit::hash_int(key1); }
};
struct TkPairMap {
    tokkit::HashTable<TkPairSlot> table{1024};
    void init(size_t n) { table.clear(); if (!table.reserve(n)) throw std::bad_alloc(); }
    TkPairSlot* find(uint64_t k) const {
        uint64_t k1 = k + 1;
        return table.find(tokkit::hash_int(k1), [k1](const TkPairSlot& s) { return s.key1 == k1; });
    }
    int64_t get(uint64_t k) const { TkPairSlot* s = find(k); return s ? s->val : 0; }
    TkPairSlot* slot(uint64_t k, bool* created) {  // find or insert; may grow (other slots then move)
        uint64_t k1 = k + 1;
        TkPairSlot* s = table.find_or_claim(tokkit::hash_int(k1), [k1](const TkPairSlot& x) { return x.key1 == k1; },
                                            created);
        if (!s) throw std::bad_alloc();
        if (*created) *s = TkPairSlot{k1, 0, -1, 0};
        return s;
    }
    void erase(TkPairSlot* s) { table.erase(s); }
    size_t used() const { return table.size(); }
    size_t capacity() const { return table.capacity(); }
    TkPairSlot* at(size_t i) const { return table.at(i); }
};

// tokenizers' order: higher count, then smaller pair; seq makes exact ties first-in first-out.
struct TkFreqEntry {
    int64_t count; uint64_t key; uint32_t seq; int32_t list;
    bool operator<(const TkFreqEntry& o) const {
        if (count != o.count) return count < o.count;
        if (key != o.key) return key > o.key;
        return seq > o.seq;
    }
};
// WordPiece order: higher score, then higher count, then smaller pair.
struct TkPmiEntry {
    double score; int64_t count; uint64_t key;
    bool operator<(const TkPmiEntry& o) const {
        if (score != o.score) return score < o.score;
        if (count != o.count) return count < o.count;
        return key > o.key;
    }
};
template <class E> struct TkHeap {
    std::vector<E> v;
    void push(const E& e) { v.push_back(e); std::push_heap(v.begin(), v.end()); }
    E pop() { std::pop_heap(v.begin(), v.end()); E e = v.back(); v.pop_back(); return e; }
    void rebuild() { std::make_heap(v.begin(), v.end()); }
};
static inline double tk_score(int64_t ab, int64_t a, int64_t b) { return (double)ab / ((double)a * (double)b); }
// f(x) = x ln x with f(0) = 0, and the likelihood gain in the order tokkit.train.merge_py.likelihood_score
// adds it up (fx, fa, fb, fn_ are f of x, c_a, c_b, N; the build turns off FMA contraction).
static inline double tk_xlogx(int64_t x) { if (x <= 0) return 0.0; double y = (double)x; return y * log(y); }
// fn = f(n), which the engine takes from a table for small n
static inline double tk_gain_fn(int64_t n, double fn, int64_t a, double fa, int64_t b, double fb, int64_t total,
                                double ft, bool same) {
    double big = ft - tk_xlogx(total - n);
    if (same) return big + (fn + (tk_xlogx(a - 2 * n) - fa));
    return big + (fn + ((tk_xlogx(a - n) - fa) + (tk_xlogx(b - n) - fb)));
}
static inline double tk_gain(int64_t n, int64_t a, double fa, int64_t b, double fb, int64_t total, double ft, bool same) {
    return tk_gain_fn(n, tk_xlogx(n), a, fa, b, fb, total, ft, same);
}
