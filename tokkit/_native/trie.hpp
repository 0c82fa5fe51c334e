// Two tries.
//
// CodeTrie: over sequences of units (code points, or UTF-8 bytes), its edges in one HashTable keyed by
// (node << 21 | unit): a step is one hash and usually one cache line, whatever the fan-out, and it
// grows one key at a time. The root's edges (for units below 65,536) sit in a plain array, since every
// walk starts there. The added-token matcher (added_tokens.hpp) and the unigram trainer's pieces
// (unigram_train.pyx) use it.
//
// ByteDoubleArray: a read-only trie over bytes built once from all its keys, in Aoe's double array: the
// child of node s by byte c is node base[s] + c when that node's check is s. A step is two loads from
// one array and no hash, so a walk that tries every prefix from every position (Unigram's lattice,
// pipeline_model.hpp) costs a few instructions a byte.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
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

class ByteDoubleArray {
  public:
    static constexpr uint32_t FREE = 0xFFFFFFFFu;  // the check of a node no edge leads to

    // Builds the trie of `keys` (distinct byte strings, each with its value >= 0); sorts them.
    void build(std::vector<std::pair<std::string, int32_t>>& keys) {
        std::sort(keys.begin(), keys.end());
        nodes_.clear();
        next_free_.clear();
        prev_free_.clear();
        head_ = tail_ = NIL;
        grow(1024);
        take(0);  // the root: no edge leads to it
        nodes_[0].check = 0;
        if (!keys.empty()) place(0, keys, 0, keys.size(), 0);
        nodes_.resize(last_ + 257, Node{0, FREE, -1});  // base + any byte stays inside: no bounds test
        nodes_.shrink_to_fit();
        std::vector<uint32_t>().swap(next_free_);
        std::vector<uint32_t>().swap(prev_free_);
    }

    bool empty() const { return nodes_.empty(); }

    // The child of `node` by byte c, or -1. (A node without children has base 0, and no node's check
    // names it, so a step from it fails too.)
    inline int32_t child(int32_t node, uint8_t c) const {
        const uint32_t t = (uint32_t)nodes_[node].base + c;
        return nodes_[t].check == (uint32_t)node ? (int32_t)t : -1;
    }
    // The value of the key ending at `node`, or -1.
    inline int32_t value(int32_t node) const { return nodes_[node].value; }

  private:
    struct Node {
        uint32_t base, check;
        int32_t value;
    };

    // Places the nodes below `root`: keys[lo:hi) share their first d bytes, the path to `root`. A stack
    // instead of recursion, since a key may be long.
    void place(uint32_t root, const std::vector<std::pair<std::string, int32_t>>& keys, size_t lo, size_t hi,
               size_t d) {
        struct Todo {
            uint32_t node;
            size_t lo, hi, d;
        };
        std::vector<Todo> todo{{root, lo, hi, d}};
        while (!todo.empty()) {
            Todo t = todo.back();
            todo.pop_back();
            if (keys[t.lo].first.size() == t.d) nodes_[t.node].value = keys[t.lo++].second;  // sorted: shortest first
            labels_.clear();
            for (size_t k = t.lo; k < t.hi; k++) {
                const uint8_t c = (uint8_t)keys[k].first[t.d];
                if (labels_.empty() || labels_.back() != c) labels_.push_back(c);
            }
            if (labels_.empty()) continue;
            const uint32_t base = find_base();  // takes the children's nodes
            nodes_[t.node].base = base;
            for (uint8_t c : labels_) nodes_[base + c].check = t.node;
            for (size_t k = t.lo; k < t.hi;) {  // each child's keys
                const uint8_t c = (uint8_t)keys[k].first[t.d];
                size_t end = k;
                while (end < t.hi && (uint8_t)keys[end].first[t.d] == c) end++;
                todo.push_back({base + c, k, end, t.d + 1});
                k = end;
            }
        }
    }

    // The lowest base at which every label of labels_ lands on a free node, those nodes taken. The
    // search walks the list of free nodes, so a dense array costs nothing to pass over.
    uint32_t find_base() {
        const uint8_t first = labels_[0];
        for (uint32_t pos = head_;; pos = next_free_[pos]) {
            if (pos == NIL) {
                pos = (uint32_t)nodes_.size();
                grow(nodes_.size() * 2);
            }
            if (pos < (uint32_t)first + 1) continue;
            const uint32_t base = pos - first;
            if (base + 256 > nodes_.size()) grow(nodes_.size() * 2);
            bool fits = true;
            for (uint8_t c : labels_) fits = fits && nodes_[base + c].check == FREE;
            if (!fits) continue;
            for (uint8_t c : labels_) take(base + c);
            last_ = std::max<uint32_t>(last_, base + labels_.back());
            return base;
        }
    }

    // Adds free nodes up to `size`, at the end of the free list.
    void grow(size_t size) {
        const size_t old = nodes_.size();
        nodes_.resize(size, Node{0, FREE, -1});
        next_free_.resize(size, NIL);
        prev_free_.resize(size, NIL);
        for (size_t i = old; i < size; i++) {
            prev_free_[i] = tail_;
            if (tail_ == NIL) head_ = (uint32_t)i;
            else next_free_[tail_] = (uint32_t)i;
            tail_ = (uint32_t)i;
        }
    }

    // Takes node i off the free list (its check is set by the caller).
    void take(uint32_t i) {
        const uint32_t p = prev_free_[i], q = next_free_[i];
        if (p == NIL) head_ = q;
        else next_free_[p] = q;
        if (q == NIL) tail_ = p;
        else prev_free_[q] = p;
    }

    static constexpr uint32_t NIL = 0xFFFFFFFFu;
    std::vector<Node> nodes_;
    std::vector<uint8_t> labels_;
    std::vector<uint32_t> next_free_, prev_free_;  // the free nodes, in order (while building)
    uint32_t head_ = NIL, tail_ = NIL;
    uint32_t last_ = 0;  // the highest node taken
};

}  // namespace tokkit
