"""tokkit.encode(is_split_into_words=True) equal to transformers' fast tokenizer on the same tokenizer.json."""
import json
import random

import numpy as np
import pytest
from helpers.oracles import sample_lines

import tokkit
from tokkit.inputs.words import adds_word_space

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

ODD_WORDS = ["", " ", " the", "Atlanta's", "``", "''", "naïve", "[MASK]", "x\u200by", "\u200b", "😀👍🏽", "a b",
             "don't", "3.14", "中文字符", "e\u0301cole", "[SEP]x", "\t", "U.S."]


def hf_tokenizer(backend):
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]",
                                                cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


@pytest.fixture(scope="module", params=["wordpiece", "bpe", "bytelevel", "bytelevel-prefix-space"])
def pair(request, oracle_paths, tmp_path_factory):
    """tokkit and transformers on one file; for byte-level files without add_prefix_space, transformers
    reads split words with the pre-tokenizer's add_prefix_space on (what RoBERTa's and GPT-2's
    tokenizers need for split words), which tokkit does by itself."""
    kind = request.param.split("-")[0]
    path = oracle_paths[kind] / "tokenizer.json"
    if request.param == "bytelevel-prefix-space":  # RoBERTa's form: prefix space, trimmed offsets
        obj = json.loads(path.read_text(encoding="utf-8"))
        obj["pre_tokenizer"]["add_prefix_space"] = True
        ids = {t["content"]: t["id"] for t in obj["added_tokens"]}
        obj["post_processor"] = {"type": "RobertaProcessing", "sep": ["[SEP]", ids["[SEP]"]],
                                 "cls": ["[CLS]", ids["[CLS]"]], "trim_offsets": True, "add_prefix_space": True}
        path = tmp_path_factory.mktemp("roberta") / "tokenizer.json"
        path.write_text(json.dumps(obj), encoding="utf-8")
    backend = tokenizers.Tokenizer.from_file(str(path))
    if request.param == "bytelevel":
        backend.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=True)
    return tokkit.load(path), hf_tokenizer(backend)


@pytest.fixture(scope="module")
def word_rows():
    rng = random.Random(7)
    rows = [line.split() for line in sample_lines(10) if line.strip()]
    rows = [r for r in rows if r][:300]
    for row in rows[::5]:
        row.insert(rng.randint(0, len(row)), rng.choice(ODD_WORDS))
    return rows + [[], ODD_WORDS]


def expected(enc, i):
    return {"input_ids": enc["input_ids"][i], "token_type_ids": enc["token_type_ids"][i],
            "special_tokens_mask": enc["special_tokens_mask"][i],
            "word_ids": [-1 if w is None else w for w in enc.word_ids(i)],
            "sequence_ids": [-1 if s is None else s for s in enc.sequence_ids(i)],
            "offsets": [list(o) for o in enc["offset_mapping"][i]]}


def check_rows(ours, enc, rows):
    for i in range(rows):
        for key, value in expected(enc, i).items():
            assert ours[key][i].tolist() == value, (i, key)


OPTIONS = dict(return_offsets_mapping=True, return_special_tokens_mask=True, return_token_type_ids=True,
               is_split_into_words=True)


def test_split_words_equal_transformers(pair, word_rows):
    tok, hf = pair
    enc = hf(word_rows, **OPTIONS)
    out = tokkit.encode(tok, word_rows, is_split_into_words=True, return_offsets=True, padding=None,
                        truncation=None)
    check_rows(out, enc, len(word_rows))


@pytest.mark.parametrize("strategy", ["longest_first", "only_second"])
def test_split_word_pairs_equal_transformers(pair, word_rows, strategy):
    tok, hf = pair
    rng = random.Random(strategy)
    for _ in range(10):
        a = [rng.choice(word_rows) for _ in range(8)]
        b = [rng.choice(word_rows) for _ in range(8)]
        max_length = rng.randint(40, 120)
        try:
            enc = hf(a, b, truncation=strategy, max_length=max_length, **OPTIONS)
        except Exception:  # a first text too long for only_second: tokkit refuses it too
            with pytest.raises(ValueError, match=r"text_pairs\[\d+\]"):
                tokkit.encode(tok, a, b, is_split_into_words=True, truncation=strategy, max_length=max_length)
            continue
        out = tokkit.encode(tok, a, b, is_split_into_words=True, return_offsets=True, padding=None,
                            truncation=strategy, max_length=max_length)
        check_rows(out, enc, len(a))


def test_padded_split_words_keep_minus_one_outside_words(pair, word_rows):
    tok, _ = pair
    out = tokkit.encode(tok, word_rows[:20], is_split_into_words=True, max_length=32)
    real = out["attention_mask"].astype(bool) & (out["special_tokens_mask"] == 0)
    assert (out["word_ids"][~real] == -1).all() and (out["sequence_ids"][~real] == -1).all()
    assert (out["sequence_ids"][real] == 0).all()
    for i, row in enumerate(word_rows[:20]):  # word ids never decrease and stay inside the row's words
        kept = out["word_ids"][i][real[i]]
        assert (np.diff(kept) >= 0).all() and (kept < max(len(row), 1)).all()


def test_which_tokenizers_get_a_word_space(oracle_paths, tmp_path):
    assert adds_word_space(tokkit.load(oracle_paths["bytelevel"]))
    assert not adds_word_space(tokkit.load(oracle_paths["wordpiece"]))
    obj = json.loads((oracle_paths["bytelevel"] / "tokenizer.json").read_text(encoding="utf-8"))
    obj["pre_tokenizer"]["add_prefix_space"] = True
    (tmp_path / "tokenizer.json").write_text(json.dumps(obj), encoding="utf-8")
    assert not adds_word_space(tokkit.load(tmp_path / "tokenizer.json"))


def test_bad_word_rows_are_refused(pair):
    tok, _ = pair
    with pytest.raises(TypeError, match=r"texts\[1\] must be a list of words"):
        tokkit.encode(tok, [["a"], "b c"], is_split_into_words=True)
    with pytest.raises(TypeError, match=r"text_pairs\[0\]\[1\] must be str, not int"):
        tokkit.encode(tok, [["a"]], [["b", 3]], is_split_into_words=True)
    with pytest.raises(TypeError, match="not a single str"):
        tokkit.encode(tok, "a b", is_split_into_words=True)
    with pytest.raises(ValueError, match="text_pairs has 2"):
        tokkit.encode(tok, [["a"]], [["b"], ["c"]], is_split_into_words=True)


def spaced_reference(obj: dict) -> dict:
    """A tokenizer.json object that `tokenizers` reads as tokkit reads split words: a ByteLevel
    pre-tokenizer gets add_prefix_space; after a Split (Llama 3, Qwen2, GPT-4o), where that option
    would space every piece, a Prepend(" ") normalizer spaces each text part instead."""
    pre = obj["pre_tokenizer"]
    if pre["type"] == "ByteLevel":
        pre["add_prefix_space"] = True
    elif pre["type"] == "Sequence" and any(p["type"] == "ByteLevel" for p in pre["pretokenizers"]):
        prepend = {"type": "Prepend", "prepend": " "}
        norm = obj["normalizer"]
        obj["normalizer"] = prepend if norm is None else {"type": "Sequence", "normalizers": [norm, prepend]}
    return obj


@pytest.mark.parametrize("kind", ["modernbert", "llama3", "qwen2", "o200k", "xlmr", "t5", "albert", "wordlevel"])
def test_split_words_equal_transformers_on_hub_kinds(kind, word_rows, tmp_path_factory):
    """The Hub's pipelines: NFC + byte-level, Split + ByteLevel sequences, Metaspace (SentencePiece
    conversions, whose "first" scheme prepends to every word), WordLevel."""
    from helpers.hub_files import hub_folder, tokenizer_json

    folder = hub_folder(kind, tmp_path_factory)
    tok = tokkit.load(folder / "tokenizer.json")
    backend = tokenizers.Tokenizer.from_str(json.dumps(spaced_reference(tokenizer_json(folder))))
    hf = transformers.PreTrainedTokenizerFast(tokenizer_object=backend)
    # Prepend(" ") also spaces a word that starts with one, where add_prefix_space does not
    rows = [[w for w in row if not w.startswith(" ")] for row in word_rows[:150] + [ODD_WORDS]]
    enc = hf(rows, **OPTIONS)
    out = tokkit.encode(tok, rows, is_split_into_words=True, return_offsets=True, padding=None, truncation=None)
    check_rows(out, enc, len(rows))
