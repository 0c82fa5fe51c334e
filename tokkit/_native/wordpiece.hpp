// WordPiece over one word, for the fast paths (encode.pyx) and the general path
// (pipeline_model.hpp): greedy longest-match-first, as tokenizers' WordPiece::tokenize.
#pragma once
#include <cstdint>
#include <vector>

#include "vocab_tables.hpp"

namespace tokkit {

// The tokens of the word whose UTF-8 is p, bpos[k] being the byte offset of its char k (bpos[n] the
// total), appended to out as (id, first char, end char); false (out as it was) when some part
// starts no token: the word is then one unknown token, which the caller writes.
//
// find(first, q, m) is the vocabulary's slot (TokenTable::Slot) for the m bytes at q, looked up
// among the word-initial tokens (first) or the continuing ones (without their "##"-style prefix),
// or nullptr. The vocabulary holds every proper prefix of its tokens too (TokenTable::add), so after
// trying the whole rest, a forward scan stops at the first part that starts no token and keeps
// the longest token seen: the answer of trying lengths from the longest down.
template <class Find>
inline bool wordpiece_word(const Find& find, const uint8_t* p, const int32_t* bpos, size_t n, std::vector<Tok>& out) {
    size_t mark = out.size(), start = 0;
    while (start < n) {
        const uint8_t* head = p + bpos[start];
        bool first = start == 0;
        size_t end = n;
        const TokenTable::Slot* s = find(first, head, (size_t)(bpos[n] - bpos[start]));
        int32_t found = s ? s->id : -1;
        if (found < 0) {
            for (size_t k = start + 1; k <= n; k++) {
                s = find(first, head, (size_t)(bpos[k] - bpos[start]));
                if (!s) break;
                if (s->id >= 0) {
                    found = s->id;
                    end = k;
                }
                if (!s->more) break;
            }
        }
        if (found < 0) {
            out.resize(mark);
            return false;
        }
        out.push_back(Tok{found, (uint32_t)start, (uint32_t)end});
        start = end;
    }
    return true;
}

// wordpiece_word with the word-initial tokens in `first` and the continuing ones, without their
// prefix, in `cont` (the fast paths' two tables: no key is built to look a part up).
inline bool wordpiece_two(const TokenTable& first, const TokenTable& cont, const uint8_t* p, const int32_t* bpos,
                          size_t n, std::vector<Tok>& out) {
    auto find = [&](bool initial, const uint8_t* q, size_t m) { return (initial ? first : cont).find(q, m); };
    return wordpiece_word(find, p, bpos, n, out);
}

// wordpiece_two for the nogil kernels, where nothing may throw: 1 found, 0 unknown, -1 out of memory
// (out as it was in both last cases).
inline int wordpiece_two_nothrow(const TokenTable& first, const TokenTable& cont, const uint8_t* p,
                                 const int32_t* bpos, size_t n, std::vector<Tok>& out) noexcept {
    size_t mark = out.size();
    try {
        return wordpiece_two(first, cont, p, bpos, n, out) ? 1 : 0;
    } catch (...) {
        out.resize(mark);
        return -1;
    }
}

}  // namespace tokkit
