"""Files and options that used to end in a traceback, or to fail only later (on save, on the last
batch): each is one TokkitError when it is met, and one `tokkit: error:` line with exit code 2 from
the CLI.

- Sequence components nested deeper than tokenizers reads (MAX_JSON_DEPTH levels of JSON; a
  RecursionError at a few hundred levels, below what the JSON reader refuses);
- `tokkit encode --max-length` with a tokenizer that has no template;
- truncation "only_first" / "only_second" with a pair whose other side alone fills max_length;
- a lone surrogate in a vocabulary (the file loaded, and saving it failed on the UTF-8 encoding):
  tokenizers refuses such a file too.
"""
from __future__ import annotations

import json

import pytest
import tokenizers

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer.component_json import MAX_JSON_DEPTH

from .conftest import one_error_line

WORDLEVEL = {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1, "[CLS]": 2, "[SEP]": 3, "[PAD]": 4},
             "unk_token": "[UNK]"}
TEMPLATE = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                               "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}}


def _doc(**fields) -> dict:
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
           "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": None, "decoder": None,
           "model": WORDLEVEL}
    doc.update(fields)
    return doc


def _folder(tmp_path, doc, name="tok"):
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    text = doc if isinstance(doc, str) else json.dumps(doc)
    (folder / "tokenizer.json").write_text(text, encoding="utf-8")
    return folder


def _lines(tmp_path, text: str) -> str:
    path = tmp_path / "in.txt"
    path.write_text(text, encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------------------ nesting
DEEPEST = (MAX_JSON_DEPTH - 3) // 2  # Sequences around a leaf without objects of its own: 62
LEAVES = {"normalizer": ("normalizers", '{"type": "Lowercase"}'),
          "pre_tokenizer": ("pretokenizers", '{"type": "WhitespaceSplit"}'),
          "decoder": ("decoders", '{"type": "Fuse"}'),
          "post_processor": ("processors", '{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, '
                                           '"use_regex": true}')}


def _nested(field: str, depth: int) -> str:
    """A file whose `field` is `depth` Sequences around one leaf (json.dumps cannot write it deep)."""
    key, leaf = LEAVES[field]
    text = json.dumps(_doc(**{field: "@@"}))
    return text.replace('"@@"', ('{"type": "Sequence", "%s": [' % key) * depth + leaf + "]}" * depth)


@pytest.mark.parametrize("field", sorted(LEAVES))
@pytest.mark.parametrize("depth", [DEEPEST + 1, 300, 450])
def test_sequences_nested_past_the_limit_are_one_error(tmp_path, cli, field, depth):
    folder = _folder(tmp_path, _nested(field, depth))
    with pytest.raises(TokkitError, match="nested too deeply"):
        tokkit.load(folder)
    code, out, err = cli("encode", "-t", str(folder), _lines(tmp_path, "a a\n"))
    assert code == 2 and out == ""
    assert "nested too deeply" in one_error_line(err)


@pytest.mark.parametrize("field", sorted(LEAVES))
def test_sequences_up_to_the_limit_load_encode_and_save(tmp_path, field):
    folder = _folder(tmp_path, _nested(field, DEEPEST))
    tok = tokkit.load(folder)
    oracle = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert tok.encode("a A a") == oracle.encode("a A a", add_special_tokens=False).ids
    assert tok.decode([1, 1]) == oracle.decode([1, 1], skip_special_tokens=False)
    assert tokkit.load(tok.save(tmp_path / "saved")).encode("a A a") == tok.encode("a A a")


# ------------------------------------------------------------------------------ --max-length, no template
@pytest.mark.parametrize("options", [["--template", "--max-length", "5"], ["--format", "npz", "--max-length", "5"],
                                     ["--pairs", "--max-length", "5"]])
def test_max_length_without_a_template_is_one_error_line(tmp_path, cli, options):
    folder = _folder(tmp_path, _doc())
    if "npz" in options:
        options = options + ["-o", str(tmp_path / "out.npz")]
    code, out, err = cli("encode", "-t", str(folder), *options, _lines(tmp_path, "a a\ta\n"))
    assert code == 2 and out == ""
    assert "no [CLS]/[SEP] template" in one_error_line(err)
    assert not (tmp_path / "out.npz").exists()


# ------------------------------------------------------------------------------ truncation that cannot cut
@pytest.mark.parametrize("strategy,texts,pairs", [("only_first", ["a", "a"], ["a", "a a a a a"]),
                                                  ("only_second", ["a", "a a a a a"], ["a", "a"])])
def test_a_pair_the_strategy_cannot_cut_is_one_tokkit_error(tmp_path, strategy, texts, pairs):
    tok = tokkit.load(_folder(tmp_path, _doc(post_processor=TEMPLATE)))
    with pytest.raises(TokkitError, match=f"{strategy}.*cannot absorb the cut"):
        tokkit.encode(tok, texts, pairs, max_length=6, truncation=strategy)
    oracle = tokenizers.Tokenizer.from_file(str(tmp_path / "tok" / "tokenizer.json"))
    oracle.enable_truncation(6, strategy=strategy)
    with pytest.raises(Exception, match="Truncation error"):  # tokenizers refuses the same pair
        oracle.encode_batch(list(zip(texts, pairs)))


def test_the_files_only_first_strategy_is_one_error_line_from_the_cli(tmp_path, cli):
    trunc = {"max_length": 6, "strategy": "OnlyFirst", "stride": 0, "direction": "Right"}
    folder = _folder(tmp_path, _doc(post_processor=TEMPLATE, truncation=trunc))
    out_file = tmp_path / "out.npz"
    code, out, err = cli("encode", "-t", str(folder), "--pairs", "--format", "npz", "--max-length", "6", "-o",
                         str(out_file), _lines(tmp_path, "a a\ta\na\ta a a a a\n"))
    assert code == 2 and out == ""
    assert "texts[1]" in one_error_line(err)
    assert not out_file.exists()


# ------------------------------------------------------------------------------ lone surrogates
SURROGATE_FILES = {
    "model-vocab": lambda d: d["model"]["vocab"].__setitem__("\ud800", 5),
    "added-token": lambda d: d["added_tokens"].append({"id": 5, "content": "x\udfff", "single_word": False,
                                                       "lstrip": False, "rstrip": False, "normalized": False,
                                                       "special": True}),
    "normalizer-content": lambda d: d.__setitem__("normalizer", {"type": "Replace", "pattern": {"String": "a"},
                                                                 "content": "\udc80"}),
}


@pytest.mark.parametrize("name", sorted(SURROGATE_FILES))
def test_a_lone_surrogate_in_a_file_is_refused_at_load(tmp_path, cli, name):
    doc = _doc()
    doc["model"] = json.loads(json.dumps(WORDLEVEL))
    SURROGATE_FILES[name](doc)
    folder = _folder(tmp_path, json.dumps(doc))  # ASCII JSON: the surrogate is a \\uXXXX escape
    with pytest.raises(Exception, match="surrogate|hex escape"):
        tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    with pytest.raises(TokkitError, match="lone surrogate"):
        tokkit.load(folder)
    code, out, err = cli("encode", "-t", str(folder), _lines(tmp_path, "a\n"))
    assert code == 2 and "lone surrogate" in one_error_line(err)


def test_a_lone_surrogate_in_a_vocab_json_is_refused_at_load(tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps({"[UNK]": 0, "a": 1, "b": 2, "\ud83d": 3}), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    with pytest.raises(TokkitError, match="lone surrogate"):
        tokkit.load(tmp_path, kind="bpe")


def test_surrogate_pairs_written_as_escapes_are_one_char(tmp_path):
    doc = _doc()
    doc["model"] = {**WORDLEVEL, "vocab": {**WORDLEVEL["vocab"], "\U0001F600": 5}}
    folder = _folder(tmp_path, json.dumps(doc))  # "\\ud83d\\ude00"
    tok = tokkit.load(folder)
    assert tok.encode("a \U0001F600") == [1, 5]
    tok.save(tmp_path / "saved")


# ------------------------------------------------------------------------------ repeat counts
def _with_pattern(where: str, pattern: str) -> dict:
    regex = {"Regex": pattern}
    if where == "split":
        return _doc(pre_tokenizer={"type": "Split", "pattern": regex, "behavior": "Isolated", "invert": False})
    if where == "replace":
        return _doc(normalizer={"type": "Replace", "pattern": regex, "content": "x"})
    return _doc(decoder={"type": "Replace", "pattern": regex, "content": "x"})


@pytest.mark.parametrize("where", ["split", "replace", "decoder"])
@pytest.mark.parametrize("pattern", ["a{100001}", "a{1,100001}", "a{,100001}", "(?:ab){2147483647}", "x{99999999999}"])
def test_a_repeat_count_past_onigurumas_limit_is_one_error(tmp_path, cli, where, pattern):
    """Oniguruma refuses a count above 100,000; the `regex` package would build it (a{2147483647}
    takes all memory)."""
    folder = _folder(tmp_path, _with_pattern(where, pattern))
    with pytest.raises(Exception, match="too big number for repeat range|PyDecoderWrapper"):
        tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    with pytest.raises(TokkitError, match="above Oniguruma's limit of 100,000"):
        tokkit.load(folder)
    code, out, err = cli("encode", "-t", str(folder), _lines(tmp_path, "a\n"))
    assert code == 2 and "repeat count" in one_error_line(err)


@pytest.mark.parametrize("where", ["split", "replace", "decoder"])
def test_a_repeat_count_at_the_limit_loads(tmp_path, where):
    folder = _folder(tmp_path, _with_pattern(where, "b{100000}|a"))
    tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    assert tokkit.load(folder).decode([1, 1]) is not None


def test_a_training_pattern_past_the_limit_is_refused_before_any_counting(tmp_path, cli):
    corpus = _lines(tmp_path, "a b c\n" * 50)
    code, out, err = cli("train", "--algo", "bytelevel", "--pattern", "a{2147483647}", "--vocab-size", "300",
                         corpus, "-o", str(tmp_path / "out"))
    assert code == 2 and "repeat count" in one_error_line(err)
    assert not (tmp_path / "out").exists()
