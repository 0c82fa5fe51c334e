"""Added tokens as tokenizers reads them: every combination of special, normalized, single_word,
lstrip and rstrip, tokens already in the model's vocabulary and tokens past it, for every kind of
tokenizer file, by hypothesis against tokenizers on the same file."""
import json
import unicodedata

import pytest
from helpers.hub_files import hub_folder
from helpers.trained import bytelevel, wordpiece
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken, Tokenizer

import tokkit

pytestmark = pytest.mark.hostile

CONTENTS = ["<x>", "Hello", "hello", "wor", "ÉCOLE", "[new]", "a b", "ld", "😀", "<|eot|>"]
WORDS = ["Hello", "hello", "world", " ", "  ", "\t", "école", "ÉCOLE", "<x>", "[new]", "a b", "ab", "😀", ",",
         "<|eot|>", "HELLO", "wor", "ld"]
LINES = ["hello world, école", "the world of hello", "a b ab abc", "x y z 😀"] * 30




@pytest.fixture(scope="module", params=["wordpiece", "bytelevel", "xlmr", "llama"])
def base(request, tmp_path_factory) -> str:
    if request.param == "wordpiece":
        return wordpiece(LINES).to_str()
    if request.param == "bytelevel":
        return bytelevel(LINES).to_str()
    return (hub_folder(request.param, tmp_path_factory) / "tokenizer.json").read_text(encoding="utf-8")


FLAGS = st.fixed_dictionaries({k: st.booleans() for k in ("single_word", "lstrip", "rstrip", "normalized", "special")})
ADDED = st.lists(st.tuples(st.sampled_from(CONTENTS), FLAGS), min_size=1, max_size=4, unique_by=lambda t: t[0])
TEXTS = st.lists(st.lists(st.sampled_from(WORDS), max_size=10).map("".join), min_size=1, max_size=4)


def _fold(text: str) -> str:
    """What the normalizers under test may make of an added token: cased, accented and NFKC forms alike."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(added=ADDED, texts=TEXTS)
def test_added_tokens_encode_as_tokenizers(base, tmp_path, added, texts):
    # Two normalized added tokens that normalize alike ("Hello", "hello" under a lowercasing
    # normalizer): tokenizers keeps one by hash-map order, another from one load of the same file to
    # the next, so there is no answer to agree with
    folded = [_fold(content) for content, flags in added if flags["normalized"]]
    assume(len(set(folded)) == len(folded))
    hf = Tokenizer.from_str(base)
    for content, flags in added:
        token = AddedToken(content, single_word=flags["single_word"], lstrip=flags["lstrip"],
                           rstrip=flags["rstrip"], normalized=flags["normalized"], special=flags["special"])
        (hf.add_special_tokens if flags["special"] else hf.add_tokens)([token])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = tokkit.load(path)
    for text in texts:
        want = hf.encode(text, add_special_tokens=False)
        assert tok.encode(text) == want.ids, (text, json.loads(hf.to_str())["added_tokens"])
        assert tok.encode_with_offsets(text).ids == want.ids
