"""The planner names the route of every output kind, and the fast encoder runs the route it is given."""
from __future__ import annotations

from dataclasses import replace

import pytest

from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit._native.encode import Encoder
from tokkit.tokenizer.encoders import build_encoder
from tokkit.tokenizer.plan import plan
from tokkit.tokenizer.recipes import byte_level_spec, wordpiece_spec
from tokkit.tokenizer.spec import AddedToken

KINDS = {"ids", "flat ids", "numpy", "ids with offsets"}


def _byte_level(*added):
    """A byte-level BPE of the 256 byte symbols with `added` as its added tokens (their flags kept)."""
    spec = byte_level_spec(list(bytes_to_unicode()) + [a.content for a in added], [], [a.content for a in added])
    flags = {a.content: a for a in added}
    return replace(spec, added=tuple(replace(a, lstrip=flags[a.content].lstrip) for a in spec.added))


def test_every_output_kind_has_a_route():
    for spec in (_byte_level(), wordpiece_spec(["[UNK]", "a"], ["[UNK]"])):
        assert set(plan(spec).routes()) == KINDS


def test_a_token_reading_its_neighbours_moves_byte_level_ids_to_code_points():
    plain, reading = plan(_byte_level(AddedToken(0, "<m>"))), plan(_byte_level(AddedToken(0, "<m>", lstrip=True)))
    assert (plain.engine, reading.engine) == ("bytelevel", "bytelevel")
    assert plain.routes()["numpy"] == "bytelevel over UTF-8" and plain.form.utf8_ids
    assert reading.routes()["numpy"] == "bytelevel over code points" and not reading.form.utf8_ids
    assert plain.routes()["ids with offsets"] == reading.routes()["ids with offsets"] == "bytelevel over code points"


def test_both_routes_give_the_same_ids():
    spec = _byte_level(AddedToken(0, "<m>"))
    utf8 = build_encoder(spec, False)
    units = Encoder.build(replace(plan(spec).form, utf8_ids=False))
    for text in ("ab<m>ba", "a b\u00e9<m>", "<m><m>", "\U0001F600a"):
        assert utf8.encode(text) == units.encode(text)
        assert utf8.encode_numpy(text).tolist() == units.encode_numpy(text).tolist()


def test_the_encoder_refuses_a_utf8_route_the_tokens_cannot_take():
    form = plan(_byte_level(AddedToken(0, "<m>", lstrip=True))).form
    with pytest.raises(ValueError, match="UTF-8 route"):
        Encoder.build(replace(form, utf8_ids=True))
