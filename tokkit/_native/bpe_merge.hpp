// BPE merging by rank over one piece's symbols, in tokenizers' order (lowest rank first, leftmost
// of equal ranks), for the fast paths (encode.pyx) and the general path (pipeline_model.hpp).
//
// Short pieces use a plain scan for the best pair; long ones (a 1,000,000-letter word is one GPT-2
// piece) a heap over a linked list, so the time stays n log n.
#pragma once
#include <cstdint>
#include <queue>
#include <vector>

#include "vocab_tables.hpp"

namespace tokkit {

constexpr size_t BPE_SHORT = 24;  // up to this many symbols, scanning beats the heap's bookkeeping

// ranks[i]: the packed (rank, merged id) of the pair (i, i + 1), -1 when it is no merge. Only the
// neighbours of a merge need a new lookup, so a piece costs O(n) lookups.
inline void bpe_merge_short(const PairTable& merges, std::vector<Tok>& syms) {
    size_t n = syms.size();
    int64_t ranks[BPE_SHORT];
    for (size_t i = 0; i + 1 < n; i++) ranks[i] = merges.get(syms[i].id, syms[i + 1].id);
    while (n > 1) {
        int64_t best = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            // packed rank << 32 | id: comparing packed values compares ranks (ranks are unique)
            if (ranks[i] >= 0 && (best < 0 || ranks[i] < best)) {
                best = ranks[i];
                at = i;
            }
        }
        if (best < 0) break;
        syms[at].id = (int32_t)(uint32_t)best;
        syms[at].end = syms[at + 1].end;
        syms.erase(syms.begin() + at + 1);
        n--;
        for (size_t i = at + 1; i + 1 < n; i++) ranks[i] = ranks[i + 1];
        if (at + 1 < n) ranks[at] = merges.get(syms[at].id, syms[at + 1].id);
        if (at > 0) ranks[at - 1] = merges.get(syms[at - 1].id, syms[at].id);
    }
}

inline void bpe_merge_long(const PairTable& merges, std::vector<Tok>& syms) {
    size_t n = syms.size();
    std::vector<int64_t> prev(n), next(n);
    std::vector<char> alive(n, 1);
    for (size_t i = 0; i < n; i++) {
        prev[i] = (int64_t)i - 1;
        next[i] = i + 1 < n ? (int64_t)i + 1 : -1;
    }
    // a min-heap on (rank, position) through negated keys in a max-heap
    std::priority_queue<int64_t> heap;
    auto queue = [&](int64_t i, int64_t v) {
        if (v >= 0) heap.push(-(((v >> 32) << 32) | i));
    };
    for (size_t i = 0; i + 1 < n; i++) queue((int64_t)i, merges.get(syms[i].id, syms[i + 1].id));
    while (!heap.empty()) {
        int64_t top = -heap.top();
        heap.pop();
        int64_t rank = top >> 32, i = (int64_t)(uint32_t)top;
        if (!alive[i] || next[i] < 0) continue;
        int64_t nx = next[i];
        int64_t v = merges.get(syms[i].id, syms[nx].id);
        if (v < 0 || (v >> 32) != rank) continue;  // stale: this pair changed since it was queued
        syms[i].id = (int32_t)(uint32_t)v;
        syms[i].end = syms[nx].end;
        alive[nx] = 0;
        next[i] = next[nx];
        if (next[nx] >= 0) prev[next[nx]] = i;
        if (prev[i] >= 0) queue(prev[i], merges.get(syms[prev[i]].id, syms[i].id));
        if (next[i] >= 0) queue(i, merges.get(syms[i].id, syms[next[i]].id));
    }
    size_t k = 0;
    for (size_t j = 0; j < n; j++)
        if (alive[j]) syms[k++] = syms[j];
    syms.resize(k);
}

// Merges syms in place; each symbol's (start, end) is merged alongside (a merged symbol spans both).
inline void bpe_merge(const PairTable& merges, std::vector<Tok>& syms) {
    if (syms.size() <= BPE_SHORT) bpe_merge_short(merges, syms);
    else bpe_merge_long(merges, syms);
}

// bpe_merge for the nogil kernels, where nothing may throw: false when memory ran out (a long piece's
// heap), syms then half merged.
inline bool bpe_merge_nothrow(const PairTable& merges, std::vector<Tok>& syms) noexcept {
    try {
        bpe_merge(merges, syms);
        return true;
    } catch (...) {
        return false;
    }
}

}  // namespace tokkit
