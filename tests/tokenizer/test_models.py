"""The models against tokenizers: the JSON each writes, and the twin's ids and offsets on the same pieces.

The oracle's offsets are what a Tokenizer made of the model alone reports (characters of the piece):
`Model.tokenize` gives bytes, and the pipeline widens a span that cuts a character to that character.
"""
import io
import json
import random
import re

import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from tokkit.errors import TokkitError
from tokkit.tokenizer.models import BPE, Unigram, WordLevel, WordPiece, model_from_json, model_to_json
from tokkit.tokenizer.models.bpe import byte_token
from tokkit.tokenizer.models.unigram import serde_float

SYLLABLES = ["ka", "to", "ri", "ne", "su", "mo", "é", "ça", "ü", "中", "文", "字", "😀", "👍🏽", "e\u0301", "n\u0303",
             "ß", "ø", "th", "ing", "ed", "er", "qu", "x", "▁"]
HARD = ["", "a", "ééé", "中文字中文字", "😀😀😀👍🏽", "e\u0301\u0301\u0301", "x" * 300, "é" * 120, "\x00\x7f\x80",
        "\U0010ffff\ue000", "ab" * 50, "thinged", "<unk>", "<unk>☃", "☃<unk>☃", "<0x41>", "▁ka▁to", "☃☃x☃"]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def corpus(n=300, seed=0):
    rng = random.Random(seed)
    return [" ".join("".join(rng.choice(SYLLABLES[:-1]) for _ in range(rng.randint(1, 4)))
                     for _ in range(rng.randint(3, 12))) for _ in range(n)]


def pieces():
    """Pieces made of the corpus' syllables, of any code point but surrogates, or both."""
    any_char = st.characters(blacklist_categories=("Cs",))
    syllable = st.sampled_from(SYLLABLES) | any_char
    return st.lists(syllable, max_size=12).map("".join) | st.text(any_char, max_size=8) | st.sampled_from(HARD)


def oracle(tok: Tokenizer, piece: str) -> list[tuple[int, int, int]]:
    if not piece:  # the pipeline never hands the model an empty piece; WordLevel still makes a token of it
        return [(t.id, *t.offsets) for t in tok.model.tokenize(piece)]
    enc = tok.encode(piece, add_special_tokens=False)
    assert enc.ids == [t.id for t in tok.model.tokenize(piece)]
    return [(i, s, e) for i, (s, e) in zip(enc.ids, enc.offsets)]


def oracle_tokenizer(model_text: str) -> Tokenizer:
    """A tokenizers Tokenizer of the model alone, read from the model object's JSON text."""
    data = json.loads(Tokenizer(models.WordLevel({"x": 0}, unk_token="x")).to_str())
    data["model"] = "MODEL"
    return Tokenizer.from_str(json.dumps(data).replace('"MODEL"', model_text))


def both(model_obj: dict):
    """The tokkit model and a tokenizers Tokenizer made of the same JSON object."""
    return model_from_json(model_obj, "t.json"), oracle_tokenizer(json.dumps(model_obj))


def written(tok: Tokenizer) -> dict:
    return json.loads(tok.to_str())["model"]


def assert_round_trip(obj: dict) -> None:
    """Read and written back: the same object, keys in the same order (tokenizers' own output)."""
    assert json.dumps(model_to_json(model_from_json(obj, "t.json"))) == json.dumps(obj)


def variant(obj: dict, **changes) -> dict:
    return {**obj, **changes}


def with_bytes(obj: dict, keep=range(256)) -> dict:
    vocab = dict(obj["vocab"])
    for b in keep:
        vocab.setdefault(byte_token(b), len(vocab))
    return {**obj, "vocab": vocab}


# ----------------------------------------------------------------------------------------------- BPE
def train_bpe(**options) -> dict:
    tok = Tokenizer(models.BPE(unk_token="<unk>", **options))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(vocab_size=260, special_tokens=["<unk>"], show_progress=False,
                                                          **options))
    return written(tok)


@pytest.fixture(scope="module")
def bpe_objects():
    plain = train_bpe()
    prefixed = train_bpe(continuing_subword_prefix="##")
    suffixed = train_bpe(end_of_word_suffix="</w>")
    partial = with_bytes(plain, keep=[0x41, 0xC3, 0xA9, 0xE2, 0x98])  # "é" falls back, "☃" lacks a byte
    return {
        "plain": plain, "prefix": prefixed, "suffix": suffixed, "both": variant(prefixed, end_of_word_suffix="</w>"),
        "fuse": variant(plain, fuse_unk=True), "no_unk": variant(plain, unk_token=None),
        "bytes": variant(with_bytes(plain), byte_fallback=True),
        "bytes_partial": variant(partial, byte_fallback=True), "bytes_partial_fused": variant(partial, byte_fallback=True,
                                                                                              fuse_unk=True),
        "ignore": variant(plain, ignore_merges=True), "ignore_prefix": variant(prefixed, ignore_merges=True),
        "ignore_suffix": variant(suffixed, ignore_merges=True), "dropout0": variant(plain, dropout=0.0),
        "legacy": variant(plain, merges=[" ".join(m) for m in plain["merges"]]),
    }


@pytest.fixture(scope="module")
def bpe_pairs(bpe_objects):
    return {name: both(obj) for name, obj in bpe_objects.items()}


@SETTINGS
@given(piece=pieces())
def test_bpe_twin_matches_tokenizers(bpe_pairs, piece):
    for name, (model, tok) in bpe_pairs.items():
        assert model.tokenize(piece) == oracle(tok, piece), name


@pytest.mark.parametrize("piece", HARD)
def test_bpe_hard_pieces(bpe_pairs, piece):
    for name, (model, tok) in bpe_pairs.items():
        assert model.tokenize(piece) == oracle(tok, piece), name


def test_bpe_json_round_trip(bpe_objects, bpe_pairs):
    for name, obj in bpe_objects.items():
        model, tok = bpe_pairs[name]
        assert model_to_json(model) == written(tok), name  # the legacy "a b" merges come back as pairs
        assert_round_trip(written(tok))


def test_bpe_built_by_tokenizers_round_trips():
    vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "b c": 4, "ab c": 5}
    built = models.BPE(vocab, [("a", "b"), ("a", "b c")], unk_token="<unk>", fuse_unk=True, byte_fallback=True,
                       ignore_merges=True, dropout=0.0)
    assert_round_trip(written(Tokenizer(built)))
    prefixed = {"a": 0, "@@b": 1, "ab": 2}
    assert_round_trip(written(Tokenizer(models.BPE(prefixed, [("a", "@@b")], continuing_subword_prefix="@@",
                                                   end_of_word_suffix="</w>"))))


def test_bpe_known_answers():
    model = BPE(vocab=("<unk>", "a", "b", "c", "ab", "bc", "abc"), merges=(("b", "c"), ("a", "b"), ("a", "bc")),
                unk_token="<unk>")
    assert model.tokenize("abc") == [(6, 0, 3)]  # b+c has the lower rank, then a+bc
    assert model.tokenize("abab") == [(4, 0, 2), (4, 2, 4)]
    assert model.tokenize("a?c") == [(1, 0, 1), (0, 1, 2), (3, 2, 3)]


def test_bpe_byte_fallback_leaves_an_unknown_run_open():
    """A character whose bytes are all tokens is placed before the unknown run it interrupts."""
    vocab = {"<unk>": 0, "a": 1, "<0x78>": 2}
    obj = written(Tokenizer(models.BPE(vocab, [], unk_token="<unk>", fuse_unk=True, byte_fallback=True)))
    model, tok = both(obj)
    assert model.tokenize("☃x☃a") == oracle(tok, "☃x☃a") == [(2, 0, 1), (0, 0, 3), (1, 3, 4)]


def test_bpe_duplicate_merge_keeps_its_last_rank():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
    obj = written(Tokenizer(models.BPE(vocab, [("a", "b"), ("b", "c")])))
    obj["merges"] = [["a", "b"], ["b", "c"], ["a", "b"]]
    model, tok = both(obj)
    assert model.tokenize("abc") == oracle(tok, "abc") == [(0, 0, 1), (4, 1, 3)]
    assert model_to_json(model)["merges"] == written(tok)["merges"] == [["b", "c"], ["a", "b"]]


def test_bpe_prefix_cut_from_every_right_side():
    """With a prefix, tokenizers cuts its length from the right token even where it is not there."""
    vocab = {"a": 0, "##b": 1, "ab": 2, "cd": 3, "c": 4}
    obj = written(Tokenizer(models.BPE(vocab, [("a", "##b"), ("c", "cd")], continuing_subword_prefix="##")))
    model, tok = both(obj)
    for piece in ("ab", "abab", "ccd"):
        assert model.tokenize(piece) == oracle(tok, piece)


BAD_BPE = [
    ({"dropout": 0.1}, "dropout"), ({"unk_token": "<nope>"}, "unk_token"), ({"fuse_unk": 1}, "fuse_unk"),
    ({"merges": [["a", "zz"]]}, "unknown token"), ({"merges": ["a b c"]}, "merges[0]"),
    ({"merges": [["a", "b"], "a b"]}, "merges[1]"), ({"merges": [["a"]]}, "merges[0]"),
    ({"vocab": {"a": 0, "b": 2}}, "vocab"), ({"vocab": {"a": 0, "b": 0}}, "vocab"), ({"vocab": []}, "vocab"),
({"continuing_subword_prefix": 3}, "continuing_subword_prefix"),
    ({"byte_fallback": True, "end_of_word_suffix": "</w>"}, "byte_fallback"),
]


@pytest.mark.parametrize("change,words", BAD_BPE)
def test_bpe_bad_json_is_one_error(change, words):
    obj = {"type": "BPE", "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3}, "merges": [["a", "b"]], **change}
    with pytest.raises(TokkitError, match=re.escape(words)) as err:
        model_from_json(obj, "t.json")
    assert str(err.value).startswith("t.json: model")
    assert "\n" not in str(err.value)


def test_a_model_of_another_type_is_refused():
    with pytest.raises(TokkitError, match="'type' must be 'BPE'"):
        BPE.from_json({"type": "Unigram", "vocab": {"a": 0}, "merges": []}, "t.json")


def test_missing_merges_or_vocab_is_an_error():
    for obj in ({"type": "BPE", "vocab": {"a": 0}}, {"type": "BPE", "merges": []}):
        with pytest.raises(TokkitError, match="is missing"):
            model_from_json(obj, "t.json")


# ------------------------------------------------------------------------------------------- Unigram
def sentencepiece_vocab(byte_fallback: bool) -> tuple[list, int]:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus(seed=1)), model_writer=out, model_type="unigram",
                                   vocab_size=400 if byte_fallback else 150, byte_fallback=byte_fallback,
                                   minloglevel=2)
    sp = spm.SentencePieceProcessor(model_proto=out.getvalue())
    return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())], sp.unk_id()


@pytest.fixture(scope="module")
def unigram_pairs():
    """Unigram models on SentencePiece-trained vocabularies, built by tokenizers from the pieces."""
    pairs = {}
    for byte_fallback in (False, True):
        vocab, unk_id = sentencepiece_vocab(byte_fallback)
        obj = written(Tokenizer(models.Unigram(vocab, unk_id, byte_fallback)))
        assert_round_trip(obj)
        pairs[byte_fallback] = both(obj)
    return pairs


@SETTINGS
@given(piece=pieces())
def test_unigram_twin_matches_tokenizers(unigram_pairs, piece):
    for name, (model, tok) in unigram_pairs.items():
        assert model.tokenize(piece) == oracle(tok, piece), name


@pytest.mark.parametrize("piece", HARD + ["▁" + line for line in corpus(20, seed=5)])
def test_unigram_hard_pieces(unigram_pairs, piece):
    for name, (model, tok) in unigram_pairs.items():
        assert model.tokenize(piece) == oracle(tok, piece), name


SMALL_UNIGRAMS = [
    ([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("abc", -2.0), ("c", -1.0)], 0, False),  # ties
    ([("a", -1.0), ("<unk>", -0.5), ("b", -2.0)], 1, False),  # the unknown token is not id 0
    ([("<unk>", 0.0), ("a", -1.0), ("<0xE2>", -3.0), ("<0x98>", -3.0), ("<0x83>", -3.0), ("<0x3C>", -1.0)], 0, True),
    ([("<unk>", 0.0), ("a", 50.0), ("☃☃", 40.0)], 0, False),  # scores above the unknown run's
    ([("<unk>", -1.0), ("", -1.0), ("ab", -3.0), ("a", -4.0)], 0, True),
]


@pytest.mark.parametrize("vocab,unk_id,byte_fallback", SMALL_UNIGRAMS)
@pytest.mark.parametrize("piece", ["", "a", "ab", "abc", "abcab", "☃", "☃☃a☃", "a<unk>☃b", "<unk>", "x<0x41>é"])
def test_small_unigrams(vocab, unk_id, byte_fallback, piece):
    obj = written(Tokenizer(models.Unigram(vocab, unk_id, byte_fallback)))
    assert_round_trip(obj)
    model, tok = both(obj)
    assert model.tokenize(piece) == oracle(tok, piece)


def test_unigram_fuses_unknown_characters_and_falls_back_to_bytes():
    model = Unigram(vocab=(("<unk>", 0.0), ("a", -1.0), *((byte_token(b), -5.0) for b in range(256))), unk_id=0,
                    byte_fallback=True)
    assert [t[0] for t in model.tokenize("a☃é")] == [1, 2 + 0xE2, 2 + 0x98, 2 + 0x83, 2 + 0xC3, 2 + 0xA9]
    assert {t[1:] for t in model.tokenize("a☃é")[1:]} == {(1, 3)}  # every byte token spans the whole run


def test_unigram_without_unk_id_fails_on_an_unknown_character():
    model, tok = both(written(Tokenizer(models.Unigram([("a", -1.0)], None, False))))
    assert model.tokenize("aa") == oracle(tok, "aa")
    with pytest.raises(Exception):
        tok.model.tokenize("b")
    with pytest.raises(TokkitError, match="unk_id"):
        model.tokenize("b")


BAD_UNIGRAM = [
    ({"unk_id": 5}, "unk_id"), ({"unk_id": -1}, "unk_id"), ({"unk_id": "0"}, "unk_id"), ({"vocab": []}, "vocab"),
    ({"vocab": [["a", "x"]]}, "vocab"), ({"vocab": [["a", -1.0], ["a", -2.0]]}, "repeats"),
    ({"vocab": [["a", float("nan")]]}, "finite"), ({"vocab": [["a", -1.0, 2]]}, "vocab"),
    ({"vocab": {"a": 0}}, "vocab"), ({"byte_fallback": None}, "byte_fallback"),
]


@pytest.mark.parametrize("change,words", BAD_UNIGRAM)
def test_unigram_bad_json_is_one_error(change, words):
    obj = {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0]], **change}
    with pytest.raises(TokkitError, match=re.escape(words)):
        model_from_json(obj, "t.json")


def test_serde_float_reads_scores_as_tokenizers_does():
    rng = random.Random(3)
    scores = [-rng.uniform(0, 20) for _ in range(3000)] + [-rng.uniform(0, 1) * 10.0 ** rng.randint(-30, 30)
                                                           for _ in range(3000)]
    texts = [repr(s) for s in scores] + ["-0.0", "1e-400", "123456789012345678901234.5", "0.000000000000000000001",
                                         "18446744073709551616.5", "-1.5E+3", "1.7e308", "5e-324"]
    body = ", ".join(f'["t{i}", {t}]' for i, t in enumerate(texts))
    text = '{"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ' + body + '], "byte_fallback": false}'
    ours = [s for _, s in json.loads(text, parse_float=serde_float)["vocab"][1:]]
    assert ours == [s for _, s in written(oracle_tokenizer(text))["vocab"][1:]]
    assert ours != [float(t) for t in texts]  # the difference this reproduces is real


# --------------------------------------------------------------------------------- WordPiece, WordLevel
@pytest.fixture(scope="module")
def wordpiece_pairs():
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(corpus(), trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[UNK]"],
                                                                show_progress=False))
    obj = written(tok)
    return {"trained": both(obj), "short": both(variant(obj, max_input_chars_per_word=5)),
            "zero": both(variant(obj, max_input_chars_per_word=0)),
            "prefix": both(variant(obj, continuing_subword_prefix=""))}


@SETTINGS
@given(piece=pieces())
def test_wordpiece_twin_matches_tokenizers(wordpiece_pairs, piece):
    for name, (model, tok) in wordpiece_pairs.items():
        assert model.tokenize(piece) == oracle(tok, piece), name


def test_wordpiece_json_round_trip(wordpiece_pairs):
    for model, tok in wordpiece_pairs.values():
        assert model_to_json(model) == written(tok)
        assert_round_trip(written(tok))
    assert_round_trip(written(Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]",
                                                         max_input_chars_per_word=7))))


@pytest.mark.parametrize("change,words", [
    ({"unk_token": "<unk>"}, "unk_token"), ({"max_input_chars_per_word": -1}, "max_input_chars_per_word"),
    ({"max_input_chars_per_word": 1.5}, "max_input_chars_per_word"), ({"continuing_subword_prefix": None}, "prefix"),
    ({"vocab": {"[UNK]": 0, "a": 0}}, "vocab"), ({"type": "BPE"}, "merges")])
def test_wordpiece_bad_json_is_one_error(change, words):
    obj = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
           "max_input_chars_per_word": 100, "vocab": {"[UNK]": 0, "a": 1}, **change}
    with pytest.raises(TokkitError, match=re.escape(words)):
        model_from_json(obj, "t.json")


def test_wordpiece_needs_every_field():
    obj = {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0}}
    with pytest.raises(TokkitError, match="is missing"):
        model_from_json(obj, "t.json")


@given(piece=pieces())
@SETTINGS
def test_wordlevel_twin_matches_tokenizers(piece):
    model, tok = both(written(Tokenizer(models.WordLevel({"<unk>": 0, "ka": 1, "中文": 2, "": 3}, unk_token="<unk>"))))
    assert model.tokenize(piece) == oracle(tok, piece)


def test_wordlevel_round_trip_and_missing_unk():
    obj = written(Tokenizer(models.WordLevel({"<unk>": 0, "ka": 1}, unk_token="<unk>")))
    assert_round_trip(obj)
    tok = oracle_tokenizer(json.dumps(variant(obj, unk_token="[UNK]")))  # it fails on the first unknown word
    with pytest.raises(Exception):
        tok.model.tokenize("zz")
    with pytest.raises(TokkitError, match="unk_token"):
        model_from_json(variant(obj, unk_token="[UNK]"), "t.json")


def test_models_without_type_are_told_apart_by_their_keys():
    assert isinstance(model_from_json({"vocab": {"a": 0}, "merges": []}, "t"), BPE)
    assert isinstance(model_from_json({"vocab": [["a", 0.0]], "unk_id": None}, "t"), Unigram)
    assert isinstance(model_from_json({"vocab": {"a": 0}, "unk_token": "a"}, "t"), WordLevel)
    wp = {"vocab": {"a": 0}, "unk_token": "a", "continuing_subword_prefix": "##", "max_input_chars_per_word": 5}
    assert isinstance(model_from_json(wp, "t"), WordPiece)
    with pytest.raises(TokkitError, match="not supported"):
        model_from_json({"type": "Char", "vocab": {}}, "t")
    with pytest.raises(TokkitError, match="object"):
        model_from_json(["BPE"], "t")
