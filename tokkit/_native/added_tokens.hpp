// Added tokens: found in a text in one pass, with tokenizers' rules (AddedVocabulary::find_matches).
//
// Matches are leftmost-longest and do not overlap: from where the last match ended, the first
// position where some token starts, and there the longest token. A trie over the tokens' contents
// (trie.hpp) finds the longest token at a position in as many steps as it matches, and a bitmap of
// the tokens' first units (or memchr, when they share one byte) skips the positions where none
// starts, so thousands of tokens cost about what a handful do. Then each token's flags:
//   - a special token, when special tokens are split (split_special_tokens), is passed over: its
//     text stays ordinary text, and no match starts inside it;
//   - single_word: only with no word char (\w) right before and right after it, else passed over;
//   - lstrip / rstrip: the whitespace before / after it joins its span (lstrip never reaches back
//     past the previous match; the search goes on after what rstrip took).
// The same code serves the fast paths (encode.pyx: next_both over the code units of a str or its
// UTF-8) and the general path (pipeline.hpp: raw and normalized text, every flag). The flags'
// whitespace and word chars come from one table, the general path's class bits (CharClass).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pipeline_text.hpp"
#include "trie.hpp"
#include "utf8.hpp"
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TOKKIT_NO_SIMD)
#include <emmintrin.h>
#define TOKKIT_ADDED_SSE2 1
#endif

namespace tokkit {

// The first i' >= i with p[i'] one of the k (1 to 4) bytes of `set`, or n: the UTF-8 scan for the
// first bytes of a few added tokens ([CLS], <|endoftext|>, ...), 16 bytes at a time where SSE2 is.
inline size_t find_any_of(const uint8_t* p, size_t i, size_t n, const uint8_t* set, int k) {
#ifdef TOKKIT_ADDED_SSE2
    const __m128i b0 = _mm_set1_epi8((char)set[0]), b1 = _mm_set1_epi8((char)set[k > 1 ? 1 : 0]);
    const __m128i b2 = _mm_set1_epi8((char)set[k > 2 ? 2 : 0]), b3 = _mm_set1_epi8((char)set[k > 3 ? 3 : 0]);
    for (; i + 16 <= n; i += 16) {
        const __m128i x = _mm_loadu_si128((const __m128i*)(p + i));
        const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, b0), _mm_cmpeq_epi8(x, b1)),
                                         _mm_or_si128(_mm_cmpeq_epi8(x, b2), _mm_cmpeq_epi8(x, b3)));
        const unsigned bits = (unsigned)_mm_movemask_epi8(hit);
        if (bits) return i + (size_t)__builtin_ctz(bits);
    }
#endif
    for (; i < n; i++)
        for (int j = 0; j < k; j++)
            if (p[i] == set[j]) return i;
    return n;
}

struct AddedToken {
    std::u32string content;  // as matched: already normalized for a `normalized` token
    int32_t id;
    bool single_word, lstrip, rstrip, normalized, special;
};

// Finds the leftmost-longest token in a sequence of units (code points, or UTF-8 bytes).
class UnitMatcher {
  public:
    template <class Unit>
    void add(const Unit* u, size_t n, int32_t index) {
        if (!n) return;  // an empty token never matches
        int32_t node = trie_.insert(u, n);
        if (trie_.value(node) == CodeTrie::NONE) trie_.set_value(node, index);  // the first of equal tokens wins
        uint32_t c = (uint32_t)u[0];
        if (c >= first_.size() * 8) first_.resize(c / 8 + 1, 0);
        if (!((first_[c >> 3] >> (c & 7)) & 1) && few_count_ >= 0) {  // a new first unit
            if (c < 256 && few_count_ < 4) few_[few_count_++] = (uint8_t)c;
            else few_count_ = -1;  // too many, or not a byte: the bitmap alone
        }
        first_[c >> 3] |= (uint8_t)(1 << (c & 7));
        only_first_ = only_first_ == NO_UNIT || only_first_ == (int64_t)c ? (int64_t)c : SEVERAL;
    }

    bool empty() const { return only_first_ == NO_UNIT; }

    // The longest token at u[i] (of u[0:n]): its length in units (0: none) and index in *index.
    template <class Unit>
    inline size_t longest_at(const Unit* u, size_t i, size_t n, int32_t* index) const {
        size_t best = 0;
        int32_t node = 0;
        for (size_t j = i; j < n; j++) {
            CodeTrie::Step to = trie_.step(node, (uint32_t)u[j]);
            if (to.node == CodeTrie::NONE) break;
            node = to.node;
            if (to.value != CodeTrie::NONE) {
                best = j + 1 - i;
                *index = to.value;
            }
        }
        return best;
    }

    // The first token at or after u[i]: its start, length and index; false when there is none.
    template <class Unit>
    inline bool next(const Unit* u, size_t i, size_t n, size_t* start, size_t* len, int32_t* index) const {
        if (only_first_ == NO_UNIT) return false;
        if (sizeof(Unit) < 4 && only_first_ >= ((int64_t)1 << (8 * sizeof(Unit)))) return false;  // no unit is it
        size_t bits = first_.size() * 8;
        const uint8_t* first = first_.data();
        while (i < n) {
            if (sizeof(Unit) == 1 && only_first_ >= 0) {
                // every token starts with one byte: memchr finds the candidates
                const void* hit = std::memchr(u + i, (int)only_first_, n - i);
                if (!hit) return false;
                i = (size_t)((const Unit*)hit - u);
            } else if (sizeof(Unit) == 1 && few_count_ > 0) {  // a few first bytes: 16 at a time
                i = find_any_of((const uint8_t*)u, i, n, few_, few_count_);
                if (i == n) return false;
            } else if (only_first_ >= 0) {  // one first unit: compare with it alone
                const Unit only = (Unit)only_first_;
                while (i < n && u[i] != only) i++;
                if (i == n) return false;
            } else {
                uint32_t c = (uint32_t)u[i];
                if (c >= bits || !((first[c >> 3] >> (c & 7)) & 1)) {
                    i++;
                    continue;
                }
            }
            size_t m = longest_at(u, i, n, index);
            if (m) {
                *start = i;
                *len = m;
                return true;
            }
            i++;
        }
        return false;
    }

  private:
    static constexpr int64_t NO_UNIT = -1, SEVERAL = -2;
    CodeTrie trie_;
    std::vector<uint8_t> first_;  // bitmap of the tokens' first units
    int64_t only_first_ = NO_UNIT;  // the one first unit they share, or NO_UNIT / SEVERAL
    uint8_t few_[4] = {0, 0, 0, 0};  // the distinct first units while they are up to 4 bytes
    int few_count_ = 0;              // how many; -1: more than 4, or one above 255
};

// Where find_matches is in a text: the next position to search and the end of the last match.
struct AddedCursor {
    size_t i = 0, start_offset = 0;
};

// A match with its flags applied: units [a, b) are the token `index` of AddedTokens::tokens, and
// [from, a) the ordinary text before it (none when from >= a).
struct AddedSpan {
    size_t from, a, b;
    int32_t index;
};

// The flags' predicates: a bit of the per-code-point class table (pipeline_text.hpp's FlagMap), F_WHITESPACE
// (Rust's char::is_whitespace) for lstrip and rstrip, F_WORD (\w: letters, marks, digits, connector
// punctuation, as tokenizers' single_word reads a word char) for single_word.
struct CharClass {
    const pipe::FlagMap* flags;
    uint16_t bit;
    bool operator()(char32_t c) const { return (flags->get(c) & bit) != 0; }
};

// Predicates for UTF-8 bytes, where no token has single_word, lstrip or rstrip: never asked.
struct NoFlags {
    bool operator()(char32_t) const { return false; }
};

// Where next_both is in a text: the raw pass's cursor, and the stretch [a, b) before the next raw
// match (`after`, when raw_left) that the normalized pass is searching with its own cursor.
struct AddedPasses {
    AddedCursor raw, gap;
    size_t a = 0, b = 0;
    bool in_stretch = false, raw_left = false, done = false;
    AddedSpan after{0, 0, 0, 0};
};

class AddedTokens {
  public:
    void add(const uint32_t* c, size_t n, int32_t id, bool single_word, bool lstrip, bool rstrip, bool normalized,
             bool special) {
        int32_t index = (int32_t)tokens_.size();
        tokens_.push_back(AddedToken{std::u32string((const char32_t*)c, n), id, single_word, lstrip, rstrip,
                                     normalized, special});
        std::vector<uint8_t> utf8;  // lone surrogates in their 3-byte form, as the encoder writes them
        for (size_t k = 0; k < n; k++) {
            uint8_t b[4];
            utf8.insert(utf8.end(), b, b + utf8_encode((char32_t)c[k], b));
        }
        (normalized ? normalized_utf8_ : raw_utf8_).add(utf8.data(), utf8.size(), index);
        (normalized ? normalized_ : raw_).add(c, n, index);
        reads_neighbours_ = reads_neighbours_ || single_word || lstrip || rstrip;
    }

    const std::vector<AddedToken>& tokens() const { return tokens_; }
    size_t size() const { return tokens_.size(); }
    bool any_raw() const { return !raw_.empty(); }
    bool any_normalized() const { return !normalized_.empty(); }
    const UnitMatcher& raw() const { return raw_; }
    const UnitMatcher& normalized() const { return normalized_; }
    // Some token reads the chars around it (single_word, lstrip, rstrip): its predicates need code
    // points, so the fast encoder finds the tokens in a str's code units, never in UTF-8 bytes.
    bool reads_neighbours() const { return reads_neighbours_; }

    // The next match of `m`'s tokens in c[0:n] from the cursor on, with the flags applied; false
    // when there is none (the ordinary text left then starts at cur.start_offset). split_specials:
    // special tokens are ordinary text (split_special_tokens); is_ws / is_word: whitespace and \w,
    // for the flags.
    template <class Unit, class Space, class Word>
    bool next(const UnitMatcher& m, const Unit* c, size_t n, bool split_specials, AddedCursor& cur,
              const Space& is_ws, const Word& is_word, AddedSpan* out) const {
        size_t start, len;
        int32_t index;
        while (m.next(c, cur.i, n, &start, &len, &index)) {
            const AddedToken& t = tokens_[index];
            size_t stop = start + len;
            cur.i = stop;
            if (split_specials && t.special) continue;
            if (t.single_word) {
                bool left_ok = start == 0 || !is_word((char32_t)c[start - 1]);
                bool right_ok = stop == n || !is_word((char32_t)c[stop]);
                if (!left_ok || !right_ok) continue;
            }
            if (t.lstrip) {
                size_t s2 = start;
                while (s2 > 0 && is_ws((char32_t)c[s2 - 1])) s2--;
                start = s2 > cur.start_offset ? s2 : cur.start_offset;
            }
            // the search goes on from the match's own end, also when rstrip took the spaces after
            // it (as tokenizers' find_matches): a token of spaces may then match among them again
            if (t.rstrip) while (stop < n && is_ws((char32_t)c[stop])) stop++;
            size_t from = cur.start_offset;
            cur.start_offset = stop;
            if (start >= stop) continue;  // lstrip left nothing of it (it is dropped)
            *out = AddedSpan{from, start, stop, index};
            return true;
        }
        return false;
    }

    // Both passes of next() over a text its normalizer leaves as it is (the fast paths), in text
    // order: the raw tokens, then the normalized ones in each stretch between raw matches (tokenizers'
    // order; the normalized stretches are the raw ones here). Each stretch is a text of its own to
    // the flags, as tokenizers matches the normalized tokens in each split apart.
    template <class Unit, class Space, class Word>
    bool next_both(const UnitMatcher& raw, const UnitMatcher& norm, const Unit* c, size_t n, bool split_specials,
                   AddedPasses& st, const Space& is_ws, const Word& is_word, AddedSpan* out) const {
        if (st.done) return false;
        if (!st.in_stretch) {
            st.raw_left = next(raw, c, n, split_specials, st.raw, is_ws, is_word, &st.after);
            st.a = st.raw_left ? st.after.from : st.raw.start_offset;
            st.b = st.raw_left ? st.after.a : n;
            st.gap = AddedCursor();
            st.in_stretch = true;
        }
        AddedSpan m;
        if (st.b > st.a && next(norm, c + st.a, st.b - st.a, split_specials, st.gap, is_ws, is_word, &m)) {
            *out = AddedSpan{st.a + m.from, st.a + m.a, st.a + m.b, m.index};
            return true;
        }
        st.in_stretch = false;
        if (!st.raw_left) {
            st.done = true;
            return false;
        }
        *out = st.after;
        out->from = st.a + st.gap.start_offset;
        return true;
    }

    // next_both over a str's code units (code points), with the class table's predicates.
    template <class Unit>
    inline bool next_in_units(const Unit* c, size_t n, bool split_specials, const pipe::FlagMap& flags,
                              AddedPasses& st, AddedSpan* out) const {
        return next_both(raw_, normalized_, c, n, split_specials, st, CharClass{&flags, pipe::F_WHITESPACE},
                         CharClass{&flags, pipe::F_WORD}, out);
    }
    // next_both over UTF-8, for tokens that do not read the chars around them (!reads_neighbours()).
    inline bool next_in_utf8(const uint8_t* p, size_t n, bool split_specials, AddedPasses& st,
                             AddedSpan* out) const {
        return next_both(raw_utf8_, normalized_utf8_, p, n, split_specials, st, NoFlags(), NoFlags(), out);
    }
    int32_t id_of(const AddedSpan& s) const { return tokens_[s.index].id; }

  private:
    std::vector<AddedToken> tokens_;
    UnitMatcher raw_, normalized_, raw_utf8_, normalized_utf8_;
    bool reads_neighbours_ = false;
};

}  // namespace tokkit
