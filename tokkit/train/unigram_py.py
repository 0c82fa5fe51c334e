"""The unigram trainer's loops in plain Python: seed substrings, Viterbi, forward-backward, second-best paths.

This is the readable twin of the compiled `tokkit._native.unigram_train`: the fallback when the
extension is missing (or TOKKIT_PURE_PYTHON=1), and the oracle the tests hold the kernel to. Both
take the same arrays and return the same numbers.

Pieces and words are code points: `piece_cps[piece_offsets[i]:piece_offsets[i + 1]]` is piece i,
`word_cps[word_offsets[w]:word_offsets[w + 1]]` is word w, seen `counts[w]` times. A position no
one-character piece covers gets an unknown node scored `unk_score`; it is never counted.

>>> import numpy as np
>>> pieces = np.array([97, 98, 97, 98], dtype=np.int32)            # "a", "b", "ab"
>>> p_off = np.array([0, 1, 2, 4]); scores = np.log([0.25, 0.25, 0.5])
>>> words = np.array([97, 98, 98], dtype=np.int32); w_off = np.array([0, 2, 3]); counts = np.array([3, 1])
>>> viterbi_counts(pieces, p_off, scores, words, w_off, counts, unk_score=-20.0).tolist()
[0.0, 1.0, 3.0]
"""
from __future__ import annotations

import math

import numpy as np

_NO_PIECE = -1  # the id of an unknown node
E_CHUNKS = 8  # the E-step sums this many fixed word ranges apart, then adds them in order
LINEAR_FLOOR = -600.0  # a word whose every path scores above this runs its forward-backward in probabilities


def _table(piece_cps, piece_offsets) -> tuple[dict[tuple, int], int]:
    """{piece as a tuple of code points: id} and the longest piece's length."""
    table, longest = {}, 1
    for i in range(len(piece_offsets) - 1):
        piece = tuple(piece_cps[piece_offsets[i]:piece_offsets[i + 1]].tolist())
        table[piece] = i
        longest = max(longest, len(piece))
    return table, longest


def _nodes(word: list[int], table: dict, longest: int) -> list[list[tuple[int, int]]]:
    """For each start position, the (end, piece id) of every piece found there; unknown when no single one."""
    n = len(word)
    starts = []
    for i in range(n):
        here = []
        single = False
        for j in range(i + 1, min(n, i + longest) + 1):
            pid = table.get(tuple(word[i:j]))
            if pid is not None:
                here.append((j, pid))
                single = single or j == i + 1
        if not single:
            here.insert(0, (i + 1, _NO_PIECE))
        starts.append(here)
    return starts


def _score(pid: int, scores, unk_score: float) -> float:
    return unk_score if pid == _NO_PIECE else float(scores[pid])


def _viterbi(word: list[int], table, longest, scores, unk_score, banned: int = -2) -> list[int]:
    """The best path's piece ids (unknown = -1); ties go to the node found first. `banned` never takes part."""
    n = len(word)
    best = [-math.inf] * (n + 1)
    back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
    best[0] = 0.0
    for i, here in enumerate(_nodes(word, table, longest)):
        if best[i] == -math.inf:
            continue
        for j, pid in here:
            if pid == banned:
                continue
            s = best[i] + _score(pid, scores, unk_score)
            if s > best[j]:
                best[j], back[j] = s, (i, pid)
    if best[n] == -math.inf:
        return []
    path, j = [], n
    while j > 0:
        i, pid = back[j]
        path.append(pid)
        j = i
    return path[::-1]


def _logaddexp(x: float, y: float) -> float:
    """log(exp(x) + exp(y)), with -inf as the empty sum."""
    if x == -math.inf:
        return y
    hi, lo = (x, y) if x > y else (y, x)
    return hi + math.log1p(math.exp(lo - hi))


def e_step(piece_cps, piece_offsets, scores, word_cps, word_offsets, counts, *, unk_score: float, threads: int = 1):
    """Expected piece counts over every word's lattice (forward-backward) and the objective.

    Returns (expected float64[n_pieces], sum of count * log Z). The words are summed in E_CHUNKS
    fixed ranges that are then added in order, as the compiled kernel does on its threads
    (`threads` is accepted and ignored here).
    """
    table, longest = _table(piece_cps, piece_offsets)
    parts = np.zeros((E_CHUNKS, len(piece_offsets) - 1), dtype=np.float64)
    objectives = [0.0] * E_CHUNKS
    n_words = len(counts)
    lowest = min([unk_score] + [float(x) for x in scores])
    probs = [math.exp(float(x)) for x in scores]
    for c in range(E_CHUNKS):
        for w in range(n_words * c // E_CHUNKS, n_words * (c + 1) // E_CHUNKS):
            word = word_cps[word_offsets[w]:word_offsets[w + 1]].tolist()
            if len(word) * lowest > LINEAR_FLOOR:
                objectives[c] += _linear_forward_backward(word, float(counts[w]), table, longest, probs,
                                                          math.exp(unk_score), parts[c])
            else:
                objectives[c] += _forward_backward(word, float(counts[w]), table, longest, scores, unk_score,
                                                   parts[c])
    expected = np.zeros(len(piece_offsets) - 1, dtype=np.float64)
    objective = 0.0
    for c in range(E_CHUNKS):
        expected += parts[c]
        objective += objectives[c]
    return expected, objective


def _linear_forward_backward(word, freq, table, longest, probs, unk_prob, expected) -> float:
    """_forward_backward in probabilities, for a word too short for any path to underflow."""
    starts = _nodes(word, table, longest)
    n = len(word)
    alpha = [0.0] * (n + 1)
    alpha[0] = 1.0
    for i in range(n):
        for j, pid in starts[i]:
            alpha[j] += alpha[i] * (unk_prob if pid == _NO_PIECE else probs[pid])
    beta = [0.0] * (n + 1)
    beta[n] = 1.0
    for i in range(n - 1, -1, -1):
        for j, pid in starts[i]:
            beta[i] += beta[j] * (unk_prob if pid == _NO_PIECE else probs[pid])
    scale = freq / alpha[n]
    for i in range(n):
        for j, pid in starts[i]:
            if pid != _NO_PIECE:
                expected[pid] += scale * (alpha[i] * probs[pid] * beta[j])
    return freq * math.log(alpha[n])


def _forward_backward(word, freq, table, longest, scores, unk_score, expected) -> float:
    """Add freq x each piece's posterior count in `word` to `expected`; return freq * log Z."""
    starts = _nodes(word, table, longest)
    n = len(word)
    alpha = [-math.inf] * (n + 1)
    alpha[0] = 0.0
    for i in range(n):
        for j, pid in starts[i]:
            alpha[j] = _logaddexp(alpha[j], alpha[i] + _score(pid, scores, unk_score))
    beta = [-math.inf] * (n + 1)
    beta[n] = 0.0
    for i in range(n - 1, -1, -1):
        for j, pid in starts[i]:
            beta[i] = _logaddexp(beta[i], beta[j] + _score(pid, scores, unk_score))
    z = alpha[n]
    for i in range(n):
        for j, pid in starts[i]:
            if pid != _NO_PIECE:
                expected[pid] += freq * math.exp(alpha[i] + float(scores[pid]) + beta[j] - z)
    return freq * z


def viterbi_counts(piece_cps, piece_offsets, scores, word_cps, word_offsets, counts, *, unk_score: float,
                   threads: int = 1):
    """How often each piece is on the words' best paths, weighted by the words' counts (float64).

    The counts are whole numbers, so the order of additions does not matter (`threads` is ignored).
    """
    table, longest = _table(piece_cps, piece_offsets)
    freq = np.zeros(len(piece_offsets) - 1, dtype=np.float64)
    for w in range(len(counts)):
        word = word_cps[word_offsets[w]:word_offsets[w + 1]].tolist()
        for pid in _viterbi(word, table, longest, scores, unk_score):
            if pid != _NO_PIECE:
                freq[pid] += float(counts[w])
    return freq


def alternatives(piece_cps, piece_offsets, scores, *, unk_score: float):
    """What each piece splits into when it is removed: the best path over its own text without it.

    Returns (kind int8[n], alt_ids int32, alt_offsets int64[n + 1]): kind 0 = its own best path is
    split (removable), 1 = it has no other path, or only one through an unknown character (keep),
    2 = it is its own best path and `alt_ids[alt_offsets[i]:alt_offsets[i + 1]]` is the alternative.
    """
    table, longest = _table(piece_cps, piece_offsets)
    n = len(piece_offsets) - 1
    kind = np.zeros(n, dtype=np.int8)
    alt: list[int] = []
    alt_offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        word = piece_cps[piece_offsets[i]:piece_offsets[i + 1]].tolist()
        if len(_viterbi(word, table, longest, scores, unk_score)) >= 2:
            kind[i] = 0
        else:
            other = _viterbi(word, table, longest, scores, unk_score, banned=i)
            if not other or _NO_PIECE in other:
                kind[i] = 1
            else:
                kind[i] = 2
                alt.extend(other)
        alt_offsets[i + 1] = len(alt)
    return kind, np.array(alt, dtype=np.int32), alt_offsets


BAD, MARKER, ALONE = -1, -2, -3  # classes: never in a piece, only first, only alone (see count_substrings)


def count_substrings(word_cps, word_offsets, counts, classes, *, max_length: int, min_count: int):
    """Count every substring of 2 to max_length characters a piece may be, weighted by the words' counts.

    classes[k] is word_cps[k]'s class: -1 never in a piece, -2 only first, -3 only alone, 0 joins any
    script, s > 0 a script (a piece holds one). Returns (cps int32, offsets int64, counts int64) of
    those seen at least min_count times.
    """
    seen: dict[tuple, int] = {}
    cps, cls = word_cps.tolist(), classes.tolist()
    for w in range(len(counts)):
        start, end, c = int(word_offsets[w]), int(word_offsets[w + 1]), int(counts[w])
        for i in range(start, end):
            script = 0
            for j in range(i, min(end, i + max_length)):
                k = cls[j]
                if k == BAD or (j > i and (k == MARKER or k == ALONE or cls[i] == ALONE)):
                    break
                if k > 0:
                    if script == 0:
                        script = k
                    elif k != script:
                        break
                if j > i:
                    key = tuple(cps[i:j + 1])
                    seen[key] = seen.get(key, 0) + c
    kept = [(key, c) for key, c in seen.items() if c >= min_count]
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum([len(key) for key, _ in kept], out=offsets[1:])
    flat = np.array([cp for key, _ in kept for cp in key], dtype=np.int32)
    return flat, offsets, np.array([c for _, c in kept], dtype=np.int64)
