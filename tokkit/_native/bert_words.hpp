// BERT's ASCII words straight to WordPiece ids through a thread's piece table (short_keys.hpp), for
// the fast encoder's id-only outputs: normalization, pre-tokenization and the lookup in one pass.
//
// A word is a run of word characters (letters and digits under BertNormalizer's ASCII actions); its
// key is its lowercased bytes, built from one or two loads of the text, not character by character.
// Words go in batches: the keys of a batch are hashed and their table slots prefetched first, then
// looked up, so the lookups' cache misses overlap. A word not in the table yet goes through WordPiece
// (wordpiece.hpp) here, and its ids into the table, as the per-character path would put them. The
// kernel stops at the first word it leaves to that path: one of more than 16 bytes, or one that runs
// into a dropped or non-ASCII character.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "grow.hpp"
#include "hash_table.hpp"
#include "short_keys.hpp"
#include "vocab_tables.hpp"
#include "wordpiece.hpp"

namespace tokkit {

class BertWords {
  public:
    enum Class : uint8_t { WORD, SPACE, PUNCT, STOP };
    static constexpr size_t BATCH = 64;  // words hashed and prefetched before their lookups

    // From the ASCII actions of BertNormalizer + BertPreTokenizer (text.pxd: act codes word 0, drop 1,
    // split 2, punct 3; out, the character kept) and WordPiece's word-initial and continuing tokens
    // (kept by reference: the encoder owns them). A
    // punctuation character is a word of its own: its token, else unk (also when max_chars, WordPiece's
    // max_input_chars_per_word, is under 1), or the per-character path when there is no unk. Usable
    // only when every kept word character is itself or its lowercase.
    void init(const uint8_t* act, const uint8_t* out, const TokenTable& first, const TokenTable& cont, int32_t unk,
              int32_t max_chars) {
        bool alnum_only = true;
        first_ = &first;
        cont_ = &cont;
        unk_ = unk;
        max_chars_ = max_chars;
        usable_ = true;
        lower_ = out['A'] == 'a';
        for (int c = 0; c < 256; c++) {
            cls_[c] = c < 128 ? class_of(act[c]) : STOP;
            if (c >= 128) continue;
            punct_id_[c] = -1;
            bool alnum = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
            if (cls_[c] == WORD && out[c] != fold(c)) usable_ = false;
            if ((cls_[c] == WORD) != alnum) alnum_only = false;
            if (cls_[c] == PUNCT) {
                int32_t id = max_chars >= 1 ? first.get(&out[c], 1) : -1;
                punct_id_[c] = id >= 0 ? id : unk;
                if (punct_id_[c] < 0) cls_[c] = STOP;
            }
        }
        simd_ok_ = alnum_only;
        mode_ = simd_ok_ ? 1 : 0;
    }

    bool usable() const { return usable_; }
    // 1: word ends found 16 bytes at a time (SSE2), 0: one byte at a time; both give the same ids.
    int set_mode(int mode) {
#if defined(__SSE2__)
        mode_ = mode && simd_ok_ ? 1 : 0;
#else
        mode_ = 0;
#endif
        return mode_;
    }

    // The ids of the words of p[i:end) (code units of 1, 2 or 4 bytes) pushed onto ids, words counting
    // them; p may be read up to p[readable - 1]. Returns where it stopped: end, or the start of a word
    // (or of a dropped or non-ASCII character between words) that the caller takes on. `oom`: memory
    // ran out. toks: the thread's scratch for WordPiece.
    template <class Unit>
    size_t run(const Unit* p, size_t i, size_t end, size_t readable, PieceTable& table, std::vector<int32_t>& ids,
               std::vector<Tok>& toks, int32_t* words, bool* oom) const noexcept {
        Item items[BATCH];
        while (i < end) {
            size_t count = 0;
            bool stop = gather(p, i, end, readable, table, items, &count);
            if (!emit(items, count, table, ids, toks)) {
                *oom = true;
                return i;
            }
            *words += (int32_t)count;
            if (stop) return i;
        }
        return end;
    }

  private:
    struct Item {
        uint64_t k0, k1, h;
        size_t start;
        uint32_t n;  // bytes of the word; 0: a punctuation character, its id in `id`
        int32_t id;
    };

    static Class class_of(uint8_t act) { return act == 0 ? WORD : act == 1 ? STOP : act == 2 ? SPACE : PUNCT; }
    template <class Unit>
    Class class_at(const Unit* p, size_t i) const { return p[i] < 128 ? (Class)cls_[p[i]] : STOP; }
    uint8_t fold(int c) const { return lower_ && c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : (uint8_t)c; }

    // The next words and punctuation of p[i:end) into items (at most BATCH), their slots prefetched;
    // i moves past them. True when the scan met what the caller must take on (at the new i).
    template <class Unit>
    bool gather(const Unit* p, size_t& i, size_t end, size_t readable, const PieceTable& table, Item* items,
                size_t* count) const {
        size_t c = 0;
        while (c < BATCH && i < end) {
            Class k = class_at(p, i);
            if (k == SPACE) {
                i++;
                continue;
            }
            if (k == STOP) break;
            Item& it = items[c];
            it.start = i;
            if (k == PUNCT) {
                it.n = 0;
                it.id = punct_id_[p[i++]];
                c++;
                continue;
            }
            size_t n = word_length(p, i, end, readable, &it.k0, &it.k1);
            if (n == 0 || (i + n < end && class_at(p, i + n) == STOP)) break;  // long, or goes on past a stop
            it.n = (uint32_t)n;
            it.h = hash_words(it.k0, it.k1, n);
            prefetch_line(table.slot_address(it.h));
            i += n;
            c++;
        }
        *count = c;
        return c < BATCH && i < end;
    }

    // Pushes the ids of items[0:count] onto ids; false when memory ran out. Room for three ids an item
    // is made first: a word with at most three ids in the table (most words) is one copy of three.
    bool emit(const Item* items, size_t count, PieceTable& table, std::vector<int32_t>& ids,
              std::vector<Tok>& toks) const {
        int32_t buf[3 * BATCH];  // the batch's ids, appended at once: no zero-filled resize per batch
        int32_t* w = buf;
        for (size_t q = 0; q < count; q++) {
            const Item& it = items[q];
            if (it.n == 0) {
                *w++ = it.id;
                continue;
            }
            const PieceEntry* e = table.find_in(it.k0, it.k1, it.n, it.h);
            if (e && e->count <= 3) {
                std::memcpy(w, e->ids, 3 * sizeof(int32_t));  // a branch on the count costs more than the copy
                w += e->count;
                continue;
            }
            if (!grow_append(ids, (const int32_t*)buf, (const int32_t*)w)) return false;
            w = buf;
            if (!(e ? push_ids(table.ids_of(e), e->count, ids) : split(it, table, ids, toks))) return false;
        }
        return grow_append(ids, (const int32_t*)buf, (const int32_t*)w);
    }

    static bool push_ids(const int32_t* src, size_t n, std::vector<int32_t>& ids) {
        size_t at = ids.size();
        if (!grow_resize(ids, at + n)) return false;
        std::memcpy(ids.data() + at, src, n * sizeof(int32_t));
        return true;
    }

    // WordPiece over a word not in the table (its key's bytes are its normalized UTF-8), its ids pushed
    // and remembered: greedy longest match, one unk when some part starts no token or the word has
    // more than max_chars characters.
    bool split(const Item& it, PieceTable& table, std::vector<int32_t>& ids, std::vector<Tok>& toks) const {
        static const int32_t ident[17] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        uint8_t word[16];
        uint64_t key[2] = {it.k0, it.k1};
        std::memcpy(word, key, 16);  // (little-endian: the bytes in order)
        toks.clear();
        int found = (int64_t)it.n > max_chars_ ? 0 : wordpiece_two_nothrow(*first_, *cont_, word, ident, it.n, toks);
        if (found < 0) return false;
        size_t at = ids.size();
        if (!grow_resize(ids, at + (found ? toks.size() : 1))) return false;
        if (found) {
            for (size_t k = 0; k < toks.size(); k++) ids[at + k] = toks[k].id;
        } else {
            ids[at] = unk_;
        }
        table.insert(it.k0, it.k1, it.n, it.h, ids.data() + at, ids.size() - at);  // (a word it cannot keep is split again)
        return true;
    }

    // Code units of the word starting at p[i] (word characters, up to end) with its key, folded to
    // its kept characters; 0 when it is longer than 16 units (then more than 16 bytes).
    template <class Unit>
    size_t word_length(const Unit* p, size_t i, size_t end, size_t readable, uint64_t* k0, uint64_t* k1) const {
        size_t n = 0;
#if defined(__SSE2__)
        if (mode_ == 1 && i + 16 <= readable) {
            __m128i v = load16(p + i);
            n = alnum_run(v);
            if (n == 16 && i + 16 < end && class_at(p, i + 16) == WORD) return 0;
            if (n > end - i) n = end - i;
            key_of(v, n, k0, k1);
            return n;
        }
#endif
        uint64_t w[2] = {0, 0};
        for (; i + n < end && class_at(p, i + n) == WORD; n++) {
            if (n == 16) return 0;
            w[n / 8] |= (uint64_t)p[i + n] << (8 * (n % 8));
        }
        *k0 = fold_upper(w[0]);
        *k1 = fold_upper(w[1]);
        return n;
    }

#if defined(__SSE2__)
    // How many of the 16 bytes of v, from the first on, are ASCII letters or digits.
    static size_t alnum_run(__m128i v) {
        __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));  // letters of either case as lowercase
        __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(low, _mm_set1_epi8('a' - 1)),
                                      _mm_cmpgt_epi8(_mm_set1_epi8('z' + 1), low));
        __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                      _mm_cmpgt_epi8(_mm_set1_epi8('9' + 1), v));
        unsigned other = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(alpha, digit)) & 0xFFFF;
        return other ? (size_t)__builtin_ctz(other) : 16;
    }

    // 16 code units as 16 bytes, a unit above 255 as 255 (no word character).
    static __m128i load16(const uint8_t* p) { return _mm_loadu_si128((const __m128i*)p); }
    static __m128i load16(const uint16_t* p) {
        return _mm_packus_epi16(_mm_loadu_si128((const __m128i*)p), _mm_loadu_si128((const __m128i*)(p + 8)));
    }
    static __m128i load16(const uint32_t* p) {  // code points fit in 31 bits: the signed pack keeps them apart
        const __m128i* q = (const __m128i*)p;
        return _mm_packus_epi16(_mm_packs_epi32(_mm_loadu_si128(q), _mm_loadu_si128(q + 1)),
                                _mm_packs_epi32(_mm_loadu_si128(q + 2), _mm_loadu_si128(q + 3)));
    }

    // The first n (1 to 16) bytes of v as a key: two zero-padded little-endian words, folded.
    void key_of(__m128i v, size_t n, uint64_t* k0, uint64_t* k1) const {
        if (lower_) {  // A-Z to a-z, 16 bytes at once
            __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)),
                                          _mm_cmpgt_epi8(_mm_set1_epi8('Z' + 1), v));
            v = _mm_or_si128(v, _mm_and_si128(upper, _mm_set1_epi8(0x20)));
        }
        uint64_t a = (uint64_t)_mm_cvtsi128_si64(v), b = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
        *k0 = a & KEY_MASKS[n][0];  // no branch on the length, which varies word to word
        *k1 = b & KEY_MASKS[n][1];
    }
#endif

    // A-Z to a-z in the eight ASCII bytes of a key word at once, when lowercasing: a byte gets 0x20
    // where adding 0x3F carries into its top bit (>= 'A') and adding 0x25 does not (<= 'Z').
    uint64_t fold_upper(uint64_t x) const {
        const uint64_t ones = 0x0101010101010101ULL;
        uint64_t upper = (x + ones * (0x80 - 'A')) & ~(x + ones * (0x80 - 'Z' - 1)) & (ones * 0x80);
        return lower_ ? x | (upper >> 2) : x;
    }

    uint8_t cls_[256];
    int32_t punct_id_[128];
    const TokenTable* first_ = nullptr;
    const TokenTable* cont_ = nullptr;
    int32_t unk_ = -1, max_chars_ = 0;
    bool lower_ = false, usable_ = false, simd_ok_ = false;
    int mode_ = 0;
};

}  // namespace tokkit
