// The general encode path: compiled scanners for Split regexes made of character classes, as
// Oniguruma (tokenizers' regex engine) matches them, leftmost first, each alternative tried in order.
// They cover DeepSeek V3's pre-tokenizer, a Sequence of three Isolated Splits:
//
//   SCAN_DIGITS3    \p{N}{1,3}
//   SCAN_KANA_HAN   [一-龥぀-ゟ゠-ヿ]+   (U+4E00-U+9FA5, hiragana U+3040-U+309F, katakana U+30A0-U+30FF)
//   SCAN_DEEPSEEK   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+ | [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ |
//                   " ?[\p{P}\p{S}]+[\r\n]*" | \s*[\r\n]+ | \s+(?!\S) | \s+
//
// Why each alternative's end is what the scanner computes (a char none of them matches is skipped,
// as the regex search moves on):
//   - [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+: the optional char is taken only when a [\p{L}\p{M}] follows
//     it; a mark (no letter, punctuation nor symbol) is matched by either branch with the same end;
//   - " ?[\p{P}\p{S}]+": a space is kept only before punctuation or a symbol (a space is neither);
//   - \s*[\r\n]+: \s* gives back chars until a [\r\n] follows, so the match ends after the last \r or
//     \n of the run of white space (the char after the run is no white space, so no \r or \n);
//   - \s+(?!\S): the whole run at the end of the text, else the run less its last char, if that leaves
//     one (the last char of the run is white space, so no \S follows the shorter match).
//
// The classes: \p{L}, \p{N} and \s from the family scanners' table (PatternClasses, tokenizers'
// engine's), \p{M} as the chars in both of o200k's case sets that are no letter (those sets are
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}]), and [\p{P}\p{S}] from a table of
// its own (ClassScan::punct_symbol, planes 0 and 1: the other planes hold neither).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "pattern_scan.hpp"

namespace tokkit {
namespace pipe {

enum ScanKind { SCAN_DIGITS3, SCAN_KANA_HAN, SCAN_DEEPSEEK };

struct ClassScan {
    const uint8_t* code = nullptr;          // PatternClasses' bits of every code point
    const uint8_t* punct_symbol = nullptr;  // 1 for [\p{P}\p{S}], code points below punct_symbol_end
    size_t punct_symbol_end = 0;

    bool letter(char32_t c) const { return c < 0x110000 && (code[c] & PAT_L); }
    bool number(char32_t c) const { return c < 0x110000 && (code[c] & PAT_N); }
    bool space(char32_t c) const { return c < 0x110000 && (code[c] & PAT_S); }
    bool letter_or_mark(char32_t c) const {
        if (c >= 0x110000) return false;
        const uint8_t k = code[c];
        return (k & PAT_L) || (k & PAT_CASED) == PAT_CASED;
    }
    bool punct_or_symbol(char32_t c) const { return c < punct_symbol_end && punct_symbol[c]; }
};

inline bool is_newline(char32_t c) { return c == U'\r' || c == U'\n'; }
inline bool is_ascii_alpha(char32_t c) { return (c | 0x20) >= U'a' && (c | 0x20) <= U'z'; }
inline bool is_ascii_punct(char32_t c) {
    return (c >= U'!' && c <= U'/') || (c >= U':' && c <= U'@') || (c >= U'[' && c <= U'`') || (c >= U'{' && c <= U'~');
}
inline bool is_kana_han(char32_t c) { return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x3040 && c <= 0x30FF); }

// The end of the run of chars from i on that `in` holds.
template <class In>
inline size_t run_end(const char32_t* c, size_t i, size_t n, In in) {
    while (i < n && in(c[i])) i++;
    return i;
}

// \s*[\r\n]+ | \s+(?!\S) | \s+ at i (a white space char): the match's end.
inline size_t deepseek_space(const ClassScan& k, const char32_t* c, size_t i, size_t n) {
    const size_t j = run_end(c, i, n, [&](char32_t x) { return k.space(x); });
    for (size_t p = j; p > i; p--)
        if (is_newline(c[p - 1])) return p;
    if (j == n || j - i < 2) return j;
    return j - 1;
}

// The end of DeepSeek's pattern's match at i, or i when no alternative matches there.
inline size_t deepseek_match(const ClassScan& k, const char32_t* c, size_t i, size_t n) {
    const char32_t x = c[i];
    const bool more = i + 1 < n;
    if (is_ascii_punct(x) && more && is_ascii_alpha(c[i + 1]))
        return run_end(c, i + 2, n, is_ascii_alpha);
    auto lm = [&](char32_t y) { return k.letter_or_mark(y); };
    if (lm(x)) return run_end(c, i + 1, n, lm);
    const bool ps = k.punct_or_symbol(x);
    if (!is_newline(x) && !ps && !k.letter(x) && more && lm(c[i + 1])) return run_end(c, i + 2, n, lm);
    size_t j = (x == U' ' && more && k.punct_or_symbol(c[i + 1])) ? i + 1 : i;
    if (j > i || ps) {
        j = run_end(c, j + 1, n, [&](char32_t y) { return k.punct_or_symbol(y); });
        return run_end(c, j, n, is_newline);
    }
    if (k.space(x)) return deepseek_space(k, c, i, n);
    return i;
}

// The matches of scanner `kind` in c[0:n], in order, as (start, end) pairs.
inline void class_scan_matches(const ClassScan& k, int kind, const char32_t* c, size_t n,
                               std::vector<std::pair<size_t, size_t>>& out) {
    size_t i = 0;
    while (i < n) {
        size_t end = i;
        if (kind == SCAN_DIGITS3) {
            while (end < n && end - i < 3 && k.number(c[end])) end++;
        } else if (kind == SCAN_KANA_HAN) {
            end = run_end(c, i, n, is_kana_han);
        } else {
            end = deepseek_match(k, c, i, n);
        }
        if (end > i) out.push_back({i, end});
        i = end > i ? end : i + 1;
    }
}

}  // namespace pipe
}  // namespace tokkit
