"""tiktoken rank files: the ids of `tiktoken` itself on the same ranks, pattern and specials.

The rank files here are written from a byte-level BPE that tokkit trains (as a rank file is: every
multi-byte token the merge of two tokens of lower rank), then read twice: by tokkit.load and into a
`tiktoken.Encoding` built from the same ranks.
"""
import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokkit
from tokkit._native.patterns import NAMED
from tokkit.errors import TokkitError
from tokkit.tokenizer.tiktoken_file import ranks_from_vocab
from tokkit.text.default_corpus import default_texts

tiktoken = pytest.importorskip("tiktoken")

TEXTS = ["Hello, world! It's 2026.", "  leading spaces\tand tabs\r\n\n", "naïve café — Привет мир 你好世界 🙂🙂",
         "don'T SHOUT'S 12345678 x=y+1;", "", " ", "\n\n\n", "<|endoftext|> inside <|endoftext|>text",
         "日本語のテキストと English mixed ١٢٣", "a" * 300, "\u200b\u00a0zero width"]


def ranks_of(tok) -> dict:
    """token bytes -> rank, renumbered from 0 in the id order of a byte-level vocabulary without its specials."""
    by_id = ranks_from_vocab(tok.spec.pipeline.model.ids, tok.special_tokens)
    return {token: r for r, token in enumerate(sorted(by_id, key=by_id.get))}


def write_ranks(path, ranks) -> None:
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))


@pytest.fixture(scope="module")
def ranks():
    lines = [line for _, line in zip(range(20000), default_texts())]
    return ranks_of(tokkit.train(texts=lines, algo="bytelevel", vocab_size=1200))


@pytest.fixture(scope="module", params=["cl100k", "o200k", "gpt2"])
def pair(request, ranks, tmp_path_factory):
    """(tokkit's tokenizer, tiktoken's Encoding) for one pattern, with one special token."""
    path = tmp_path_factory.mktemp("ranks") / "small.tiktoken"
    write_ranks(path, ranks)
    specials = {"<|endoftext|>": len(ranks)}
    ours = tokkit.load(path, pattern=request.param, special_tokens=specials)
    theirs = tiktoken.Encoding(name="small", pat_str=NAMED[request.param], mergeable_ranks=ranks,
                               special_tokens=specials)
    return ours, theirs


@pytest.mark.parametrize("text", TEXTS)
def test_ids_equal_tiktoken(pair, text):
    ours, theirs = pair
    want = theirs.encode(text, allowed_special="all")
    assert ours.encode(text) == want
    assert ours.encode_to_numpy(text).tolist() == want
    assert ours.decode(want) == text


def test_batches_equal_tiktoken(pair):
    ours, theirs = pair
    flat, offsets = ours.encode_batch_flat(TEXTS)
    assert [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(len(TEXTS))] == \
        theirs.encode_batch(TEXTS, allowed_special="all")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_any_text_equals_tiktoken(pair, text):
    ours, theirs = pair
    assert ours.encode(text) == theirs.encode(text, allowed_special="all")


def test_known_encoding_inferred_from_its_rank_count(tmp_path):
    # A rank file of cl100k's size gets cl100k's pattern and specials without being told
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"tok%05d" % i: 256 + i for i in range(100256 - 256)})
    path = tmp_path / "cl100k_base.tiktoken"
    write_ranks(path, ranks)
    tok = tokkit.load(path)
    assert tok.token_to_id("<|endoftext|>") == 100257 and tok.token_to_id("<|endofprompt|>") == 100276
    theirs = tiktoken.Encoding(name="c", pat_str=NAMED["cl100k"], mergeable_ranks=ranks,
                               special_tokens={"<|endoftext|>": 100257})
    text = "tok00001tok12345 x<|endoftext|>"
    assert tok.encode(text) == theirs.encode(text, allowed_special="all")


def test_llama3_tokenizer_model_is_read_as_a_rank_file(ranks, tmp_path):
    folder = tmp_path / "original"
    folder.mkdir()
    write_ranks(folder / "tokenizer.model", ranks)
    tok = tokkit.load(folder, pattern="llama3", special_tokens={"<|begin_of_text|>": len(ranks)})
    theirs = tiktoken.Encoding(name="l", pat_str=NAMED["llama3"], mergeable_ranks=ranks, special_tokens={})
    assert tok.encode(TEXTS[2]) == theirs.encode(TEXTS[2])
    assert tok.encode("<|begin_of_text|>") == [len(ranks)]


@pytest.mark.parametrize("content, message", [
    (b"YQ== 0\nYQ== 1\n", "listed twice"),
    (b"YQ== 0\nYg== 0\n", "share a rank"),
    (b"YQ== 0\nYg== x\n", "line 2 is not"),
    (b"YQ== 0\nYg==\n", "line 2 is not"),
    (b"YQ== 0\n!!!! 1\n", "line 2 is not"),
    (b"YQ== 0\nY 1\n", "line 2: the token is not base64"),
    (b"YQ== 0\nYg== 99999999999\n", "line 2 is not"),
])
def test_bad_rank_files_are_one_error(tmp_path, content, message):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(TokkitError, match=message):
        tokkit.load(path, pattern="gpt2")


def test_unknown_size_needs_a_pattern_and_pattern_needs_a_rank_file(ranks, tmp_path, oracle_paths):
    path = tmp_path / "small.tiktoken"
    write_ranks(path, ranks)
    with pytest.raises(TokkitError, match="give its split pattern"):
        tokkit.load(path)
    with pytest.raises(TokkitError, match="rank file only"):
        tokkit.load(next(iter(oracle_paths.values())), pattern="gpt2")
    with pytest.raises(TokkitError, match="past the ranks"):
        tokkit.load(path, pattern="gpt2", special_tokens={"<|x|>": 3})
