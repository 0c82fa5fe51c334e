"""Every route the planner has for a pipeline gives tokenizers' ids and offsets.

Pipelines are built and saved by tokenizers itself (helpers/routes.py: BERT, char BPE, byte-level,
SentencePiece-like and mixed shapes, trained by its trainers, with random added tokens and flags); for each,
tokkit.tokenizer.encoders.routes gives the planned encoder and the general path with each lane as planned
and off, and every one must give tokenizers' ids by encode, encode_numpy, encode_flat and encode_many,
and its ids and offsets by encode_full, on hostile and multilingual text. Hypothesis runs derandomized
(tests/conftest.py); benchmarks/fuzz_routes.py runs the same check for as long as it is given.
"""
from __future__ import annotations

import tokenizers
from helpers.routes import (CONTENTS, FLAGS, SHAPES, TEXT_ATOMS, VARIANTS, Case, build, corpus, describe,
                            disagreements, with_added_forms)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import normalizers, pre_tokenizers, trainers

import tokkit
from tokkit.tokenizer.plan import plan
from tokkit.tokenizer.encoders import routes

PLAIN, SPECIAL = (False,) * len(FLAGS), (True,) + (False,) * (len(FLAGS) - 1)
# tokens without flags often, and any flags
FLAG_SETS = st.one_of(st.just(PLAIN), st.just(SPECIAL), st.tuples(*[st.booleans()] * len(FLAGS)))
ADDED = st.lists(st.tuples(st.sampled_from(CONTENTS), FLAG_SETS),
                 max_size=4, unique_by=lambda t: t[0]).map(tuple)
CASES = st.builds(Case, st.sampled_from(SHAPES), st.integers(0, VARIANTS - 1), ADDED)
# added tokens without flags but `special`: their files keep the fast routes
FAST_CASES = st.builds(Case, st.sampled_from(SHAPES), st.integers(0, VARIANTS - 1),
                       st.lists(st.tuples(st.sampled_from(CONTENTS), st.sampled_from([PLAIN, SPECIAL])),
                                max_size=4, unique_by=lambda t: t[0]).map(tuple))
# the fast engines' shapes (WordPiece, char BPE, byte-level with or without NFC and add_prefix_space)
# with tokens of random flags: lstrip, rstrip and single_word read the chars around a token, and a
# normalized token is matched after the raw ones
FAST_SHAPES = ("bert", "charbpe", "bytelevel")
FLAGGED_FAST_CASES = st.builds(Case, st.sampled_from(FAST_SHAPES), st.integers(0, VARIANTS - 1),
                               st.lists(st.tuples(st.sampled_from(CONTENTS), st.tuples(*[st.booleans()] * len(FLAGS))),
                                        min_size=1, max_size=4, unique_by=lambda t: t[0]).map(tuple))
TEXTS = st.lists(st.lists(st.sampled_from(TEXT_ATOMS), max_size=14).map("".join), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=CASES, texts=TEXTS)
def test_every_route_gives_tokenizers_ids_and_offsets(tmp_path_factory, case, texts):
    _check(tmp_path_factory, case, texts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=FAST_CASES, texts=TEXTS)
def test_every_route_of_files_the_fast_engines_take(tmp_path_factory, case, texts):
    _check(tmp_path_factory, case, texts)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=FLAGGED_FAST_CASES, texts=TEXTS)
def test_every_route_of_fast_shapes_with_flagged_tokens(tmp_path_factory, case, texts):
    _check(tmp_path_factory, case, texts)


def _check(tmp_path_factory, case: Case, texts: list[str]) -> None:
    oracle, tok = build(case, tmp_path_factory.mktemp("routes"))
    if tok is None:  # refused at load as documented, or tokenizers' answer changes from run to run
        return
    assert disagreements(oracle, tok, with_added_forms(case, texts)) == [], describe(case)


def test_the_routes_cover_the_fast_paths_and_the_lanes(tmp_path):
    """The shapes reach the fast engines and the general path with both lanes, so each is checked."""
    seen = set()
    for k, shape in enumerate(SHAPES):
        for variant in range(VARIANTS):
            _, tok = build(Case(shape, variant, ()), tmp_path / f"{k}{variant}")
            seen.add(plan(tok.spec).engine)
            seen.update(routes(tok.spec))
    assert {"wordpiece", "bpe", "bytelevel", "general"} <= seen
    assert {"planned", "general", "general+utf8", "general+chunks+utf8"} <= seen


def test_nfc_and_prefix_space_lanes_together_give_numpy_ids(tmp_path):
    """A byte-level file with NFC and add_prefix_space runs the fast encoder inside both lanes: a text
    NFC changes reaches encode_numpy through the prefix-space lane, which takes the normalized str."""
    built = tokenizers.Tokenizer(tokenizers.models.BPE())
    built.normalizer = normalizers.NFC()
    built.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    built.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=400,
                                                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    built.save(str(tmp_path / "tokenizer.json"))
    tok = tokkit.load(tmp_path / "tokenizer.json")
    the_plan = plan(tok.spec)
    assert (the_plan.engine, the_plan.nfc, the_plan.prefix_space) == ("bytelevel", True, True)
    for text in ["e\u0301cole", "a e\u0301", "A\u030a\u0301 x", "plain"]:
        assert tok.encode_to_numpy(text).tolist() == tok.encode(text) == built.encode(text).ids, text
