// Checks of the compiled code's one hash table (tokkit/_native/hash_table.hpp) and the tables built
// on it, against std::unordered_map, compiled and run by tests/test_hash_table.py.
//
// Usage: hash_table_check SEED; prints "ok" and exits 0, or prints the first failure and exits 1.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "added_tokens.hpp"
#include "hash_table.hpp"
#include "short_keys.hpp"
#include "trie.hpp"
#include "vocab_tables.hpp"

using namespace tokkit;

static int failures = 0;
#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            std::printf("FAIL line %d: %s\n", __LINE__, #cond);                  \
            if (++failures > 10) std::exit(1);                                   \
        }                                                                        \
    } while (0)

// A slot whose hash the test chooses: `spread` = 1 sends every key to one home (one probe run
// holding everything, wrapping past the array's end), larger values spread them.
static uint64_t spread = 1;
struct TestSlot {
    uint64_t key1;  // key + 1; 0: free
    int64_t value;
    bool empty() const { return key1 == 0; }
    uint64_t hash() const { return home_of(key1 - 1); }
    static uint64_t home_of(uint64_t key) { return spread == 1 ? ~0ULL : hash_int(key) % spread + (key % 2) * 5; }
};

struct Model {
    HashTable<TestSlot> table{4};
    std::unordered_map<uint64_t, int64_t> want;

    TestSlot* find(uint64_t key) {
        uint64_t k1 = key + 1;
        return table.find(TestSlot::home_of(key), [k1](const TestSlot& s) { return s.key1 == k1; });
    }
    void put(uint64_t key, int64_t value) {
        bool added;
        uint64_t k1 = key + 1;
        TestSlot* s = table.find_or_claim(TestSlot::home_of(key), [k1](const TestSlot& x) { return x.key1 == k1; },
                                          &added);
        CHECK(s != nullptr);
        CHECK(added == (want.count(key) == 0));
        *s = TestSlot{k1, value};
        want[key] = value;
    }
    void erase(uint64_t key) {
        TestSlot* s = find(key);
        CHECK((s != nullptr) == (want.count(key) == 1));
        if (s) table.erase(s);
        want.erase(key);
    }
    void check_all(uint64_t universe) {
        CHECK(table.size() == want.size());
        size_t cap = table.capacity();
        CHECK(cap == 0 || (cap & (cap - 1)) == 0);         // a power of two
        CHECK(table.size() * 2 <= cap || table.size() == 0);  // at most half full
        size_t used = 0;
        for (size_t i = 0; i < cap; i++) used += !table.at(i)->empty();
        CHECK(used == table.size());
        for (uint64_t key = 0; key < universe; key++) {
            TestSlot* s = find(key);
            auto it = want.find(key);
            CHECK((s != nullptr) == (it != want.end()));
            if (s && it != want.end()) CHECK(s->value == it->second);
        }
    }
};

static void random_operations(std::mt19937_64& rng, uint64_t spread_, int steps, uint64_t universe) {
    spread = spread_;
    Model m;
    for (int step = 0; step < steps; step++) {
        uint64_t key = rng() % universe;
        if (rng() % 3) m.put(key, (int64_t)(rng() % 1000) - 500);
        else m.erase(key);
        if (step % 97 == 0) m.check_all(universe);
    }
    m.check_all(universe);
    for (uint64_t key = 0; key < universe; key++) m.erase(key);  // erase everything, in key order
    m.check_all(universe);
    CHECK(m.table.size() == 0);
}

static void capped_table() {
    spread = 1 << 20;
    HashTable<TestSlot> t(16);
    t.set_max_slots(64);
    bool full = false;
    size_t got = 0;
    for (uint64_t key = 0; key < 100 && !full; key++) {
        TestSlot* s = t.claim(TestSlot::home_of(key), &full);
        if (s) {
            *s = TestSlot{key + 1, 0};
            got++;
        }
    }
    CHECK(full);
    CHECK(got == 32);  // half of the 64 slots it may grow to
    CHECK(t.capacity() == 64);
    t.clear();
    CHECK(t.size() == 0 && t.capacity() == 0);
}

static void keys_and_hashes(std::mt19937_64& rng) {
    uint8_t buf[64];
    for (int round = 0; round < 200; round++) {
        for (auto& b : buf) b = (uint8_t)rng();
        for (size_t n = 0; n <= 16; n++) {
            uint64_t want0 = 0, want1 = 0, a0, a1, b0, b1;
            std::memcpy(&want0, buf, n < 8 ? n : 8);
            if (n > 8) std::memcpy(&want1, buf + 8, n - 8);
            key_words(buf, n, true, &a0, &a1);
            key_words(buf, n, false, &b0, &b1);
            CHECK(a0 == want0 && a1 == want1);
            CHECK(b0 == want0 && b1 == want1);
            CHECK(hash_bytes(buf, n) == hash_words(want0, want1, n));
        }
        PrefixHash prefix(buf);
        GrowingKey growing(buf);
        for (size_t n = 0; n <= 64; n++) {
            CHECK(prefix.at(n) == hash_bytes(buf, n));
            BytesKey k = growing.at(n), want = bytes_key(buf, n);
            CHECK(k.h == want.h && k.head == want.head);
        }
        // longer keys: every byte and the length count
        for (size_t n = 17; n <= 40; n++) {
            uint64_t h = hash_bytes(buf, n);
            CHECK(h != hash_bytes(buf, n - 1));
            buf[n - 1] ^= 1;
            CHECK(h != hash_bytes(buf, n));
            buf[n - 1] ^= 1;
            buf[0] ^= 0x80;
            CHECK(h != hash_bytes(buf, n));
            buf[0] ^= 0x80;
        }
    }
    // the slot index takes every key bit: keys differing in any one bit land in the same one of
    // 1,024 slots about as rarely as random keys would
    for (int bit = 0; bit < 64; bit++) {
        size_t same_int = 0, same_words = 0;
        for (uint64_t k = 1; k <= 1000; k++) {
            uint64_t key = k * 0x9E3779B97F4A7C15ULL >> (k % 40);
            same_int += (hash_int(key) & 1023) == (hash_int(key ^ (1ULL << bit)) & 1023);
            same_words += (hash_words(key, 0, 8) & 1023) == (hash_words(key ^ (1ULL << bit), 0, 8) & 1023);
            same_words += (hash_words(0, key, 16) & 1023) == (hash_words(0, key ^ (1ULL << bit), 16) & 1023);
        }
        CHECK(same_int <= 10);
        CHECK(same_words <= 20);
    }
}

static void token_table() {
    TokenTable t;
    const char* words[] = {"ab", "abcd", "a", "##b", "é", "éa"};
    for (int i = 0; i < 6; i++) t.add((const uint8_t*)words[i], std::strlen(words[i]), i, true);
    t.add((const uint8_t*)"ab", 2, 99, true);  // the first id of a key stays
    auto get = [&](const char* s) { return t.get((const uint8_t*)s, std::strlen(s)); };
    auto more = [&](const char* s) {
        const TokenTable::Slot* x = t.find((const uint8_t*)s, std::strlen(s));
        return x ? x->more : -1;
    };
    CHECK(get("ab") == 0 && get("abcd") == 1 && get("a") == 2 && get("##b") == 3);
    CHECK(get("abc") == -1 && more("abc") == 1);  // a prefix only
    CHECK(more("ab") == 1 && more("abcd") == 0 && more("a") == 1);
    CHECK(get("#") == -1 && more("##") == 1 && get("x") == -1 && more("x") == -1);
    CHECK(more("é") == 1 && get("\xc3") == -1 && more("\xc3") == -1);  // prefixes end at characters
    CHECK(t.longest() == 4);
    // a long token's prefixes share its bytes: memory in proportion to its length
    TokenTable big;
    std::string x(200000, 'x');
    big.add((const uint8_t*)x.data(), x.size(), 5, true);
    CHECK(big.size() == x.size());
    CHECK(big.get((const uint8_t*)x.data(), x.size()) == 5 && big.get((const uint8_t*)x.data(), 1000) == -1);
    const TokenTable::Slot* half = big.find((const uint8_t*)x.data(), 100000);
    CHECK(half && half->more == 1 && half->id == -1);
}

static void token_memo() {
    TokenMemo m(3, 1 << 20);
    Tok toks[2] = {{5, 0, 1}, {6, 1, 2}};
    const char* keys[] = {"one", "two", "three", "a key longer than sixteen bytes"};
    for (int i = 0; i < 3; i++) m.add((const uint8_t*)keys[i], std::strlen(keys[i]), bytes_key((const uint8_t*)keys[i], std::strlen(keys[i])), toks, i);
    size_t count = 9;
    const Tok* got = m.find((const uint8_t*)"two", 3, bytes_key((const uint8_t*)"two", 3), &count);
    CHECK(got != nullptr && count == 1 && got[0].id == 5);
    got = m.find((const uint8_t*)"one", 3, bytes_key((const uint8_t*)"one", 3), &count);
    CHECK(got != nullptr && count == 0);  // a hit of no tokens is no miss
    CHECK(m.size() == 3);
    // a fourth piece passes max_entries: the memo starts again
    m.add((const uint8_t*)keys[3], std::strlen(keys[3]), bytes_key((const uint8_t*)keys[3], std::strlen(keys[3])), toks, 2);
    CHECK(m.size() == 1);
    CHECK(m.find((const uint8_t*)"one", 3, bytes_key((const uint8_t*)"one", 3), &count) == nullptr);
    got = m.find((const uint8_t*)keys[3], std::strlen(keys[3]), bytes_key((const uint8_t*)keys[3], std::strlen(keys[3])), &count);
    CHECK(got != nullptr && count == 2 && got[1].id == 6);
    // bounded in bytes too
    TokenMemo small(1 << 20, 4096);
    std::vector<uint8_t> key(100);
    for (int i = 0; i < 1000; i++) {
        std::memcpy(key.data(), &i, sizeof i);
        small.add(key.data(), key.size(), bytes_key(key.data(), key.size()), toks, 2);
        CHECK(small.nbytes() <= 3 * 4096);
    }
}

static void word_table(std::mt19937_64& rng) {
    WordTable t;
    std::unordered_map<std::string, int64_t> want;
    for (int i = 0; i < 50000; i++) {
        std::string w(rng() % 30 + 1, 'a');
        for (auto& c : w) c = (char)('a' + rng() % 3);
        int64_t c = (int64_t)(rng() % 5) + 1;
        CHECK(t.add((const uint8_t*)w.data(), w.size(), c));
        want[w] += c;
    }
    CHECK(t.size() == want.size());
    for (size_t e = 0; e < t.size(); e++) {
        std::string w((const char*)t.arena.data() + t.offs[e], t.offs[e + 1] - t.offs[e]);
        CHECK(want.count(w) && want[w] == t.counts[e]);
    }
}

static void trie_and_added_tokens(std::mt19937_64& rng) {
    CodeTrie trie;
    uint32_t ab[] = {'a', 'b'}, abc[] = {'a', 'b', 'c'};
    int32_t n1 = trie.insert(ab, 2), n2 = trie.insert(abc, 3);
    trie.set_value(n1, 7);
    CHECK(trie.child(trie.child(0, 'a'), 'b') == n1 && trie.child(n1, 'c') == n2);
    CHECK(trie.value(n1) == 7 && trie.value(n2) == CodeTrie::NONE && trie.child(n2, 'd') == CodeTrie::NONE);
    CHECK(trie.nodes() == 4 && trie.depth() == 3);

    // leftmost-longest against a plain scan, thousands of tokens over a small alphabet
    AddedTokens added;
    std::vector<std::u32string> tokens;
    for (int i = 0; i < 3000; i++) {
        std::u32string t(rng() % 6 + 1, U'a');
        for (auto& c : t) c = U"abcé"[rng() % 4];
        tokens.push_back(t);
        added.add((const uint32_t*)t.data(), t.size(), i, false, false, false, false, false);
    }
    for (int round = 0; round < 200; round++) {
        std::u32string text(rng() % 40, U'a');
        for (auto& c : text) c = U"abcéd"[rng() % 5];
        AddedCursor cur;
        AddedSpan m{0, 0, 0, -1};
        size_t i = 0;
        while (true) {
            // the plain way: the first position where a token starts, there the longest (first added wins)
            size_t best = 0, at = i;
            int32_t which = -1;
            for (; at < text.size() && which < 0; at++) {
                for (size_t k = 0; k < tokens.size(); k++) {
                    const std::u32string& t = tokens[k];
                    if (t.size() > best && text.compare(at, t.size(), t) == 0) {
                        best = t.size();
                        which = (int32_t)k;
                    }
                }
                if (which >= 0) break;
            }
            bool found = added.next(added.raw(), text.data(), text.size(), false, cur, NoFlags(), NoFlags(), &m);
            CHECK(found == (which >= 0));
            if (!found || which < 0) break;
            CHECK(m.a == at && m.b == at + best);
            CHECK(added.tokens()[m.index].id == which);
            i = at + best;
        }
    }
}

int main(int argc, char** argv) {
    std::mt19937_64 rng(argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1);
    random_operations(rng, 1, 300, 40);          // every key in one probe run, wrapping the array's end
    random_operations(rng, 7, 3000, 200);        // long runs that overlap
    random_operations(rng, 1 << 30, 20000, 5000);  // spread out: growth from 4 slots to thousands
    capped_table();
    keys_and_hashes(rng);
    token_table();
    token_memo();
    word_table(rng);
    trie_and_added_tokens(rng);
    if (failures) return 1;
    std::printf("ok\n");
    return 0;
}
