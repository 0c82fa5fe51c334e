// A trie over sequences of units (code points, or UTF-8 bytes), its edges in one HashTable keyed by
// (node << 21 | unit): a step is one hash and usually one cache line, whatever the fan-out. The
// root's edges (for units below 65,536) sit in a plain array, since every walk starts there. The
// added-token matcher (added_tokens.hpp) and the unigram trainer's pieces (unigram_train.pyx) use it.
#pragma once
#include <cstdint>
#include <vector>

#include "hash_table.hpp"

namespace tokkit {

class CodeTrie {
  public:
    static constexpr int32_t NONE = -1;
    static constexpr uint32_t ROOT_UNITS = 1 << 16;  // root edges of smaller units are in the array

    // Where an edge leads: the child node and its value (NONE, NONE: no such edge).
    struct Step {
        int32_t node, value;
    };

    CodeTrie() : edges_(16) { in_.push_back(0); }

    // The child of `node` by `unit` (below 2**21) and its value.
    inline Step step(int32_t node, uint32_t unit) const {
        if (node == 0 && unit < ROOT_UNITS) return unit < root_.size() ? root_[unit] : Step{NONE, NONE};
        const Edge* e = find(edge_key(node, unit));
        return e ? e->to : Step{NONE, NONE};
    }
    inline int32_t child(int32_t node, uint32_t unit) const { return step(node, unit).node; }

    // The child of `node` by `unit`, made (with value NONE) when there is none.
    int32_t add_child(int32_t node, uint32_t unit) {
        Step* to = edge(node, unit, true);
        if (to->node == NONE) {
            to->node = (int32_t)in_.size();
            in_.push_back(((uint64_t)node << 21) | unit);
        }
        return to->node;
    }

    // The node the units spell from the root, made as needed.
    template <class Unit>
    int32_t insert(const Unit* u, size_t n) {
        int32_t node = 0;
        for (size_t i = 0; i < n; i++) node = add_child(node, (uint32_t)u[i]);
        if (n > depth_) depth_ = n;
        return node;
    }

    // Room for `edges` edges (beyond the root's) without growing; false when memory ran out.
    bool reserve(size_t edges) { return edges_.reserve(edges); }

    int32_t value(int32_t node) const { return node ? step(parent(node), unit(node)).value : NONE; }
    void set_value(int32_t node, int32_t v) {
        if (node) edge(parent(node), unit(node), false)->value = v;
    }
    size_t nodes() const { return in_.size(); }
    size_t depth() const { return depth_; }  // units of the longest sequence inserted

  private:
    // The edges in the table all have a key above 0 (the root's of small units are in root_), so 0
    // can mark a free slot.
    struct Edge {
        uint64_t key;  // node << 21 | unit; 0: a free slot
        Step to;
        bool empty() const { return key == 0; }
        uint64_t hash() const { return hash_int(key); }
    };
    static uint64_t edge_key(int32_t node, uint32_t unit) { return ((uint64_t)node << 21) | unit; }

    inline const Edge* find(uint64_t k) const {
        return edges_.find(hash_int(k), [k](const Edge& x) { return x.key == k; });
    }

    // The edge from `node` by `unit` (made, leading nowhere, when `make` and there is none), or nullptr.
    Step* edge(int32_t node, uint32_t unit, bool make) {
        if (node == 0 && unit < ROOT_UNITS) {
            if (unit >= root_.size()) {
                if (!make) return nullptr;
                root_.resize(unit + 1, Step{NONE, NONE});
            }
            return &root_[unit];
        }
        uint64_t k = edge_key(node, unit);
        Edge* e = const_cast<Edge*>(find(k));
        if (!e && make) {
            e = edges_.claim(hash_int(k));
            if (!e) throw std::bad_alloc();
            *e = Edge{k, Step{NONE, NONE}};
        }
        return e ? &e->to : nullptr;
    }
    int32_t parent(int32_t node) const { return (int32_t)(in_[node] >> 21); }
    uint32_t unit(int32_t node) const { return (uint32_t)(in_[node] & 0x1FFFFF); }

    HashTable<Edge> edges_;
    std::vector<Step> root_;    // the root's edges by unit, below ROOT_UNITS
    std::vector<uint64_t> in_;  // per node: the edge that leads to it, (parent << 21 | unit)
    size_t depth_ = 0;
};

}  // namespace tokkit
