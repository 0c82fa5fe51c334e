# Included by _text.pyx (same module: it reads FLAGS and implements gpt2_pieces from _text.pxd).
# ---------------------------------------------------------------- GPT-2 pattern
# 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# One left-to-right pass: at each position the first alternative that matches wins, each + run is
# maximal, and the only backtrack (\s+(?!\S) giving back one space) moves by one character.

cdef inline void push_piece(vector[Piece]& out, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Piece p
    p.norm_start = a
    p.norm_end = b
    p.start = a
    p.end = b
    out.push_back(p)


cdef inline Py_ssize_t contraction(const char_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """Length of 's 't 're 've 'm 'll 'd at s[i] (which is an apostrophe), or 0."""
    if i + 1 >= end:
        return 0
    cdef uint32_t d = s[i + 1]
    if d == CH_s or d == CH_t or d == CH_m or d == CH_d:
        return 2
    if i + 2 < end:
        if (d == CH_r or d == CH_v) and s[i + 2] == CH_e:
            return 3
        if d == CH_l and s[i + 2] == CH_l:
            return 3
    return 0


cdef void gpt2_scan(const char_t* s, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& out,
                    const uint8_t* classes) noexcept nogil:
    cdef Py_ssize_t i = begin, j, start, k
    cdef uint8_t cls, nxt
    while i < end:
        if s[i] == CH_APOS:
            k = contraction(s, i, end)
            if k:
                push_piece(out, i, i + k)
                i += k
                continue
        cls = classes[s[i]] & 7
        start = i
        if s[i] == CH_SPACE and i + 1 < end:
            nxt = classes[s[i + 1]] & 7
            if nxt != G_S:        # " ?" takes the space into the following letter/number/other run
                cls = nxt
                i += 1
        j = i + 1
        if cls != G_S:
            while j < end and (classes[s[j]] & 7) == cls:
                j += 1
            push_piece(out, start, j)
        else:
            while j < end and (classes[s[j]] & 7) == G_S:
                j += 1
            if j < end and j - start > 1:
                j -= 1            # \s+(?!\S): leave the last space for the next word
            push_piece(out, start, j)
        i = j


cdef void gpt2_run(TextView text, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& pieces,
                   const uint8_t* classes) noexcept nogil:
    if text.kind == 1:
        gpt2_scan(<const uint8_t*>text.data, begin, end, pieces, classes)
    elif text.kind == 2:
        gpt2_scan(<const uint16_t*>text.data, begin, end, pieces, classes)
    else:
        gpt2_scan(<const uint32_t*>text.data, begin, end, pieces, classes)


cdef void gpt2_pieces(TextView text, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& pieces) noexcept nogil:
    gpt2_run(text, begin, end, pieces, FLAGS)


cdef void gpt2_pieces_tokenizers(TextView text, Py_ssize_t begin, Py_ssize_t end,
                                 vector[Piece]& pieces) noexcept nogil:
    gpt2_run(text, begin, end, pieces, TKCLS)
