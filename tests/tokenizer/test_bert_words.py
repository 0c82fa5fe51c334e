"""The WordPiece id-only path's ASCII word kernel (bert_words.hpp) gives tokenizers' ids: both ways of
finding word ends, texts of 1-, 2- and 4-byte code units, cold and warm piece tables, and the words it
hands back to the per-character path (long, running into dropped or non-ASCII characters)."""
import platform

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokkit
from tokkit._native.encode import bert_words_mode
from tokkit.tokenizer.plan import plan

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

LINES = ["The quick brown fox jumps over the lazy dog, again and again.",
         "Anarchism is a political philosophy; it holds the state undesirable (1840s-1900s).",
         "internationalization counterrevolutionaries 1234567890 3.14159 don't stop!",
         "Words: alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu."] * 20

WORD_ENDS = [  # word lengths around the 16-byte key, at the end of the text and before an added token
    "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnopq", "x" * 32 + " y", "a" * 16 + ".", "Z" * 17,
    "ends with a sixteen-byte word abcdefghijklmnop", "thequickbrownfox", "THEQUICKBROWNFOX!", "q",
    "abcQQQdef", "QQQabcdefghijklmnopqrstQQQ", "internationalizationQQQ", "a1b2c3d4e5f6g7h8i9",
]
AROUND = [  # dropped control characters and non-ASCII ones next to and inside ASCII words
    "ab\x01cd ef", "ab \x01cd", "\x7fstart end\x7f", "caf\u00e9 au lait", "\u00e9t\u00e9 ete", "a.\u00e9b",
    "naïve word – dash", "emoji 😀 inside words😀here", "中文 and ascii", "x\u0300y z", "tab\tand\nnewline\r",
    "\u00a0nbsp ascii", "[SEP] not special here", "a" * 150 + " b",
]


def train(tmp_path, name, *, lowercase=True, clean_text=True, max_chars=100, size=300):
    """A tokenizers-trained WordPiece, saved; returns (tokkit's, tokenizers')."""
    ref = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=max_chars))
    ref.normalizer = normalizers.BertNormalizer(lowercase=lowercase, clean_text=clean_text)
    ref.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    ref.train_from_iterator(LINES, trainers.WordPieceTrainer(vocab_size=size, special_tokens=["[UNK]", "QQQ"]))
    path = tmp_path / name
    path.mkdir()
    ref.save(str(path / "tokenizer.json"))
    return tokkit.load(path), ref


VARIANTS = {"bert": {}, "cased": {"lowercase": False}, "unclean": {"clean_text": False},
            "short-words": {"max_chars": 5}, "tiny-vocab": {"size": 60}}


@pytest.fixture(scope="module", params=list(VARIANTS))
def pair(request, tmp_path_factory):
    return train(tmp_path_factory.mktemp("wp"), request.param, **VARIANTS[request.param])


def wide(texts, suffix):
    """The texts with a character that makes each str 2 or 4 bytes a code unit (ASCII words unchanged)."""
    return [t + suffix for t in texts]


def check(tok, ref, texts):
    assert plan(tok._spec).engine == "wordpiece", plan(tok._spec).reason
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    for mode in (0, 1):
        bert_words_mode(tok._encoder, mode)
        for _ in range(2):  # a cold piece table, then a warm one
            assert tok.encode_batch(texts, num_threads=1) == want, mode
        ids, offsets = tok.encode_batch_flat(texts, num_threads=2)
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want, mode


@pytest.mark.parametrize("suffix", ["", " \u2013", " 😀"])
def test_word_ends_and_added_tokens(pair, suffix):
    check(*pair, wide(WORD_ENDS + LINES[:4], suffix))


@pytest.mark.parametrize("suffix", ["", " \u2013", " 😀"])
def test_words_next_to_dropped_and_non_ascii_characters(pair, suffix):
    check(*pair, wide(AROUND, suffix))


def test_modes_offered(pair, request):
    """Word ends 16 bytes at a time only on x86-64 and where word characters are letters and digits."""
    tok, _ = pair
    simd = platform.machine().lower() in ("x86_64", "amd64") and request.node.callspec.params["pair"] != "unclean"
    assert bert_words_mode(tok._encoder, 0) == 0
    assert bert_words_mode(tok._encoder, 1) == int(simd)


TEXT = st.text(st.sampled_from(list("abcXYZ019 .,-'\t\x01\x7f\u00e9\u2013😀Q")), max_size=80)


def test_hypothesis_ascii_heavy_text(pair):
    tok, ref = pair

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(TEXT, min_size=1, max_size=4))
    def run(texts):
        check(tok, ref, texts)

    run()
