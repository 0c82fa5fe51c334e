// The merge engine's small C++ tables (pair map, heap entries, heap) and its scoring helpers,
// declared for Cython in merge.pxd; the algorithm is in merge.pyx.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
static inline uint64_t tk_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }
static inline int32_t tk_left(uint64_t k) { return (int32_t)(k >> 32); }
static inline int32_t tk_right(uint64_t k) { return (int32_t)(uint32_t)k; }

// Linear-probing hash table: pair key -> count, plus an int32 word-list slot (-1: none) and a
// flag byte (likelihood: the pair sits in its symbols' `listed` vectors).
// Zero counts are erased (backward-shift deletion), so the table holds live pairs only.
struct TkPairMap {
    std::vector<uint64_t> keys; std::vector<int64_t> vals; std::vector<int32_t> aux; std::vector<uint8_t> flag;
    size_t mask = 0, used = 0;
    static constexpr uint64_t EMPTY = ~0ULL;
    void init(size_t n) {
        size_t cap = 1024; while (cap < 2 * n) cap <<= 1;
        keys.assign(cap, EMPTY); vals.assign(cap, 0); aux.assign(cap, -1); flag.assign(cap, 0); mask = cap - 1; used = 0;
    }
    size_t home(uint64_t k) const { uint64_t h = k * 0x9E3779B97F4A7C15ULL; return (size_t)(h ^ (h >> 29)) & mask; }
    int64_t find(uint64_t k) const {
        for (size_t i = home(k);; i = (i + 1) & mask) {
            if (keys[i] == k) return (int64_t)i;
            if (keys[i] == EMPTY) return -1;
        }
    }
    int64_t get(uint64_t k) const { int64_t i = find(k); return i < 0 ? 0 : vals[i]; }
    size_t slot(uint64_t k, bool* created) {  // find or insert; may rehash
        if (2 * (used + 1) > mask + 1) grow();
        size_t i = home(k);
        for (; keys[i] != EMPTY; i = (i + 1) & mask) if (keys[i] == k) { *created = false; return i; }
        keys[i] = k; vals[i] = 0; aux[i] = -1; flag[i] = 0; used++; *created = true; return i;
    }
    void grow() {
        std::vector<uint64_t> k2; std::vector<int64_t> v2; std::vector<int32_t> a2; std::vector<uint8_t> f2;
        k2.swap(keys); v2.swap(vals); a2.swap(aux); f2.swap(flag);
        size_t cap = 2 * k2.size();
        keys.assign(cap, EMPTY); vals.assign(cap, 0); aux.assign(cap, -1); flag.assign(cap, 0); mask = cap - 1;
        for (size_t j = 0; j < k2.size(); j++) if (k2[j] != EMPTY) {
            size_t i = home(k2[j]); while (keys[i] != EMPTY) i = (i + 1) & mask;
            keys[i] = k2[j]; vals[i] = v2[j]; aux[i] = a2[j]; flag[i] = f2[j];
        }
    }
    void erase(size_t i) {
        for (size_t j = i;;) {
            j = (j + 1) & mask;
            if (keys[j] == EMPTY) break;
            size_t h = home(keys[j]);
            bool stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j);
            if (!stays) { keys[i] = keys[j]; vals[i] = vals[j]; aux[i] = aux[j]; flag[i] = flag[j]; i = j; }
        }
        keys[i] = EMPTY; vals[i] = 0; aux[i] = -1; flag[i] = 0; used--;
    }
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
