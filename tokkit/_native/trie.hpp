// A trie over sequences of units (code points, or UTF-8 bytes), its edges in one HashTable keyed by
// (node << 21 | unit): a step is one hash and usually one cache line, whatever the fan-out. The
// added-token matcher (added_tokens.hpp) and the unigram trainer's pieces (unigram_train.pyx) use it.
#pragma once
#include <cstdint>
#include <vector>

#include "hash_table.hpp"

namespace tokkit {

class CodeTrie {
  public:
    static constexpr int32_t NONE = -1;

    CodeTrie() : edges_(16) { value_.push_back(NONE); }

    // The child of `node` by `unit` (below 2**21), or NONE.
    inline int32_t child(int32_t node, uint32_t unit) const {
        uint64_t k = edge_key(node, unit);
        const Edge* e = edges_.find(hash_int(k), [k](const Edge& x) { return x.key1 == k; });
        return e ? e->child : NONE;
    }

    // The child of `node` by `unit`, made (with value NONE) when there is none.
    int32_t add_child(int32_t node, uint32_t unit) {
        uint64_t k = edge_key(node, unit);
        bool added;
        Edge* e = edges_.find_or_claim(hash_int(k), [k](const Edge& x) { return x.key1 == k; }, &added);
        if (!e) throw std::bad_alloc();
        if (added) {
            *e = Edge{k, (int32_t)value_.size()};
            value_.push_back(NONE);
        }
        return e->child;
    }

    // The node the units spell from the root, made as needed.
    template <class Unit>
    int32_t insert(const Unit* u, size_t n) {
        int32_t node = 0;
        for (size_t i = 0; i < n; i++) node = add_child(node, (uint32_t)u[i]);
        if (n > depth_) depth_ = n;
        return node;
    }

    int32_t value(int32_t node) const { return value_[node]; }
    void set_value(int32_t node, int32_t v) { value_[node] = v; }
    size_t nodes() const { return value_.size(); }
    size_t depth() const { return depth_; }  // units of the longest sequence inserted

  private:
    struct Edge {
        uint64_t key1;  // (node << 21 | unit) + 1; 0: a free slot
        int32_t child;
        bool empty() const { return key1 == 0; }
        uint64_t hash() const { return hash_int(key1); }
    };
    static uint64_t edge_key(int32_t node, uint32_t unit) { return (((uint64_t)node << 21) | unit) + 1; }
    HashTable<Edge> edges_;
    std::vector<int32_t> value_;  // per node (NONE when no sequence ends there)
    size_t depth_ = 0;
};

}  // namespace tokkit
