"""The compiled BPE merge loop and hash tables against plain-Python references."""
from hypothesis import given, settings
from hypothesis import strategies as st

from tokkit._native.encode_tables import PairMap, StrMap, merge_ids


def reference_merge(table, symbols):
    """Lowest rank first, leftmost on ties, until no adjacent pair is a merge."""
    symbols = list(symbols)
    while True:
        best = None
        for i in range(len(symbols) - 1):
            hit = table.get((symbols[i], symbols[i + 1]))
            if hit is not None and (best is None or hit[0] < best[0]):
                best = (hit[0], i, hit[1])
        if best is None:
            return symbols
        _, i, new = best
        symbols[i:i + 2] = [new]


@st.composite
def merge_tables(draw):
    pairs, table, nxt = [], {}, 4
    for _ in range(draw(st.integers(1, 30))):
        pair = (draw(st.integers(0, nxt - 1)), draw(st.integers(0, nxt - 1)))
        if pair not in table:
            table[pair] = (len(pairs), nxt)
            pairs.append(pair)
            nxt += 1
    return pairs, table


@settings(max_examples=300, deadline=None)
@given(merge_tables(), st.lists(st.integers(0, 3), max_size=80))
def test_merge_equals_reference(tables, symbols):
    # words up to 24 symbols take the scan, longer ones the heap: both are covered
    pairs, table = tables
    pm = PairMap(pairs, [table[p][1] for p in pairs])
    assert merge_ids(pm, symbols) == reference_merge(table, symbols)


def test_long_runs_are_linear_enough():
    pm = PairMap([(1, 1), (2, 2)], [2, 3])
    out = merge_ids(pm, [1] * 200_001)
    assert out == [3] * 50_000 + [1]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=20), max_size=60, unique=True), st.binary(max_size=20))
def test_strmap_equals_dict(keys, probe):
    values = [i if i % 2 else -2 - i for i in range(len(keys))]  # negative values are legal (prefix marks)
    m = StrMap(keys, values)
    expected = dict(zip(keys, values))
    for k in keys + [probe]:
        assert m.lookup(k) == expected.get(k, -1)
    assert len(m) == len(keys)
