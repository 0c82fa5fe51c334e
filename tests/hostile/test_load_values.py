"""Values of a tokenizer.json checked at load, within the ranges tokenizers accepts: a file that
loads encodes, and one that would fail on every encode (or that tokkit cannot hold) is one error
naming the field, at load and from the CLI."""
import json
import subprocess
import sys

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, processors

import tokkit
from tokkit.errors import TokkitError

pytestmark = pytest.mark.hostile


def wordlevel() -> dict:
    tok = Tokenizer(models.WordLevel({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "a": 4}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return json.loads(tok.to_str())


def written(tmp_path, edit) -> str:
    data = wordlevel()
    edit(data)
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return str(tmp_path)


TRUNC = {"max_length": 4, "strategy": "LongestFirst", "stride": 0, "direction": "Right"}
PAD = {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0, "pad_type_id": 0,
       "pad_token": "[PAD]"}


def sets(key, value):
    return lambda d: d.__setitem__(key, value)


BAD = [
    (sets("truncation", dict(TRUNC, stride=-3)), "truncation.stride' must be an integer from 0"),
    (sets("truncation", dict(TRUNC, stride=4)), r"truncation.stride \(4\) must be below truncation.max_length"),
    (sets("truncation", dict(TRUNC, stride=1)), r"minus the template's special tokens \(1\)"),
    (sets("truncation", dict(TRUNC, max_length=10**30)), "truncation.max_length' must be an integer from 1"),
    (sets("truncation", dict(TRUNC, max_length=0)), "truncation.max_length' must be an integer from 1"),
    (sets("padding", dict(PAD, strategy={"Fixed": 10**12})), "padding.strategy.Fixed' must be an integer from 1"),
    (sets("padding", dict(PAD, pad_to_multiple_of=-2)), "padding.pad_to_multiple_of' must be an integer from 0"),
    (sets("padding", dict(PAD, pad_id=2**40)), "padding.pad_id' must be an integer from 0"),
    (lambda d: d["post_processor"]["pair"][3]["Sequence"].__setitem__("type_id", 2**31),
     "type ids above 2147483647 are not supported"),
]


@pytest.mark.parametrize("edit, message", BAD, ids=[m for _, m in BAD])
def test_out_of_range_values_are_one_error_at_load_and_from_the_cli(tmp_path, edit, message):
    folder = written(tmp_path, edit)
    with pytest.raises(TokkitError, match=message):
        tokkit.load(folder)
    (tmp_path / "in.txt").write_text("a a\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "tokkit.cli", "encode", "-t", folder, str(tmp_path / "in.txt")],
                          capture_output=True)
    lines = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("tokkit: error:"), proc.stderr


def test_pad_to_multiple_of_zero_means_none_as_in_tokenizers(tmp_path):
    folder = written(tmp_path, sets("padding", dict(PAD, pad_to_multiple_of=0)))
    hf = Tokenizer.from_file(f"{folder}/tokenizer.json")
    got = tokkit.encode(tokkit.load(folder), ["a a a", "a"])
    assert got["input_ids"].tolist() == [e.ids for e in hf.encode_batch(["a a a", "a"])]


def test_a_stride_below_max_length_and_the_largest_type_id_load(tmp_path):
    folder = written(tmp_path, sets("truncation", dict(TRUNC, max_length=6, stride=2)))
    assert tokkit.encode(tokkit.load(folder), ["a a a a a a"])["input_ids"].shape[1] == 6
    edit = lambda d: d["post_processor"]["pair"][3]["Sequence"].__setitem__("type_id", 2**31 - 1)  # noqa: E731
    got = tokkit.encode(tokkit.load(written(tmp_path, edit)), ["a"], ["a"])
    assert got["token_type_ids"].max() == 2**31 - 1


def test_a_long_wordpiece_token_in_a_tokenizer_json_costs_linear_memory(tmp_path):
    from tokenizers import decoders, normalizers
    long = "x" * 200_000
    tok = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, long: 2}, unk_token="[UNK]", max_input_chars_per_word=10**6))
    tok.normalizer, tok.pre_tokenizer = normalizers.BertNormalizer(), pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.save(str(tmp_path / "tokenizer.json"))
    loaded = tokkit.load(tmp_path)  # its prefixes point into its own bytes: not 200,000**2 / 2 bytes
    assert loaded.encode("a " + long) == [1, 2] == tok.encode("a " + long).ids


def test_a_long_unigram_piece_is_refused_at_load(tmp_path):
    tok = Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0), ("y" * 5000, -2.0)], unk_id=0))
    tok.save(str(tmp_path / "tokenizer.json"))
    with pytest.raises(TokkitError, match="a piece of 5,000 characters"):
        tokkit.load(tmp_path)
