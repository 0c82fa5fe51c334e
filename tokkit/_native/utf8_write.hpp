// One code point to UTF-8: the added-token matcher and the general path's text steps both write it.
#pragma once

#include <cstdint>

namespace tokkit {

// Writes `c` to `out` (room for 4 bytes) and returns the bytes written.
inline int utf8_encode(char32_t c, uint8_t* out) {
    if (c < 0x80) { out[0] = (uint8_t)c; return 1; }
    if (c < 0x800) { out[0] = 0xC0 | (c >> 6); out[1] = 0x80 | (c & 0x3F); return 2; }
    if (c < 0x10000) {
        out[0] = 0xE0 | (c >> 12); out[1] = 0x80 | ((c >> 6) & 0x3F); out[2] = 0x80 | (c & 0x3F);
        return 3;
    }
    out[0] = 0xF0 | (c >> 18); out[1] = 0x80 | ((c >> 12) & 0x3F);
    out[2] = 0x80 | ((c >> 6) & 0x3F); out[3] = 0x80 | (c & 0x3F);
    return 4;
}

}  // namespace tokkit
