"""Files `tokenizers` (or transformers) loads, made as the Hub makes them, load in tokkit with the same ids.

- T5- and ALBERT-style files converted by transformers from a sentencepiece model trained with its
  default ids (unk 0, bos 1, eos 2): their template names a special token with an id other than the
  vocabulary's, or one the vocabulary lacks, and tokenizers writes the template's ids.
- OpenAI-style byte-level files (cl100k, o200k as transformers.js models ship them) leave ids unused
  below their special tokens.
- A vocab.txt line is a token unless it is empty: only the line ending is taken off, so a line that
  holds U+2028 alone (bert-base-chinese has one) is that token.
"""
from __future__ import annotations

import json
import shutil

import pytest
from helpers.hub_files import texts, train_spm

import tokkit

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402
from transformers.models.bert.tokenization_bert import load_vocab  # noqa: E402

LINES = texts(2)
SPECIAL_LINES = ["<s> hello </s> world", "</s>", "[CLS] x [SEP] y", "a<|endoftext|>b<|endofprompt|>",
                 "<|endoftext|><|endoftext|> ", "<eos><pad> z", ""]


def template_row(tok, *parts: list[int]) -> tuple[list[int], list[int]]:
    """The ids and type ids tokkit's template puts around encoded texts (what tokkit.encode lays out)."""
    ids, types = [], []
    for name, type_id in tok.template.parts(pair=len(parts) == 2):
        run = parts[name == "$B"] if name in ("$A", "$B") else [tok.template.id_of(name)]
        ids += run
        types += [type_id] * len(run)
    return ids, types


def assert_same_ids(tok, hf: Tokenizer, lines=LINES + SPECIAL_LINES):
    for line in lines:
        want = hf.encode(line, add_special_tokens=False)
        got = tok.encode_with_offsets(line)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), line
        assert tok.decode(got.ids) == hf.decode(got.ids, skip_special_tokens=False), line
    want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert tok.encode_batch(lines, num_threads=2) == want


# ------------------------------------------------------------------------------ template ids
@pytest.fixture(scope="module")
def default_ids_model(tmp_path_factory):
    """A sentencepiece Unigram model trained with its default ids: <unk> 0, <s> 1, </s> 2, no <pad>."""
    return train_spm(tmp_path_factory.mktemp("spm") / "spiece.model")


def converted(model, folder, cls_name: str, edit=None, **options):
    """transformers' converter writes tokenizer.json for the model (as Hub folders were made)."""
    folder.mkdir()
    shutil.copy(model, folder / "spiece.model")
    getattr(transformers, cls_name).from_pretrained(str(folder), **options).save_pretrained(str(folder))
    (folder / "spiece.model").unlink()  # tokenizer.json is read first anyway; keep the folder to one file
    if edit is not None:
        data = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
        edit(data)
        (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def drop_added(*names):
    return lambda data: data.__setitem__("added_tokens", [a for a in data["added_tokens"] if a["content"] not in names])


CONVERTED = {
    # the template names </s> with the id of <eos>, which transformers adds past the pieces
    "t5-eos": ("T5Tokenizer", None, dict(eos_token="<eos>")),
    # the template names [CLS] and [SEP] with the ids of <s> and </s>; the vocabulary holds them elsewhere ...
    "albert-cls-s": ("AlbertTokenizer", None, dict(cls_token="<s>", sep_token="</s>")),
    # ... or not at all
    "albert-no-cls": ("AlbertTokenizer", drop_added("[CLS]", "[SEP]"), dict(cls_token="<s>", sep_token="</s>")),
}


@pytest.mark.parametrize("name", sorted(CONVERTED))
def test_converted_files_use_the_templates_ids(name, default_ids_model, tmp_path):
    cls_name, edit, options = CONVERTED[name]
    folder = converted(default_ids_model, tmp_path / name, cls_name, edit, **options)
    hf = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = tokkit.load(folder)
    assert_same_ids(tok, hf)
    named = tok.template.tokens()
    assert any(hf.token_to_id(t) != tok.template.id_of(t) for t in named)  # the case at hand
    for a, b in [("Hello world", "and more"), ("", "x"), ("naïve café", "")]:
        want = hf.encode(a)
        assert template_row(tok, tok.encode(a)) == (want.ids, want.type_ids)
        want = hf.encode(a, b)
        assert template_row(tok, tok.encode(a), tok.encode(b)) == (want.ids, want.type_ids)
    for t in named:
        assert tok.token_to_id(t) == hf.token_to_id(t)
        assert tok.template.id_of(t) < tok.vocab_size
    saved = tok.save(tmp_path / "saved")  # written back as tokenizers would: the same ids again
    assert_same_ids(tokkit.load(saved), Tokenizer.from_file(str(saved / "tokenizer.json")), LINES[:20])
    assert json.loads((saved / "tokenizer.json").read_text())["post_processor"] == \
        json.loads((folder / "tokenizer.json").read_text())["post_processor"]


# ------------------------------------------------------------------------------ unused ids
OPENAI_SPECIALS = ["<|endoftext|>", "<|endofprompt|>"]


@pytest.fixture(scope="module")
def byte_level_json() -> dict:
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(LINES, trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                      show_progress=False))
    return json.loads(hf.to_str())


def openai_style(data: dict, in_model: bool) -> dict:
    """Special tokens at ids past a gap (one unused id, then the second 18 further on, as o200k's
    <|endoftext|> 199999 and <|endofprompt|> 200018), in the model's vocabulary too or only added."""
    data = json.loads(json.dumps(data))
    n = len(data["model"]["vocab"])
    ids = [n + 1, n + 20]
    data["added_tokens"] = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True} for i, t in zip(ids, OPENAI_SPECIALS)]
    if in_model:
        data["model"]["vocab"].update(zip(OPENAI_SPECIALS, ids))
    return data


@pytest.mark.parametrize("in_model", [True, False], ids=["in-model", "added-only"])
def test_unused_ids_below_special_tokens(byte_level_json, in_model, tmp_path):
    data = openai_style(byte_level_json, in_model)
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tok = tokkit.load(tmp_path)
    assert_same_ids(tok, hf)
    n = len(byte_level_json["model"]["vocab"])
    for t in OPENAI_SPECIALS:
        assert tok.token_to_id(t) == hf.token_to_id(t)
    if in_model:  # the model's ids, unused ones between
        assert tok.id_to_token(n) is None and hf.id_to_token(n) is None
        assert tok.decode([5, n, 6]) == hf.decode([5, n, 6])  # an unused id decodes to nothing
    else:  # tokenizers gives added tokens outside the model the next ids, whatever the file says
        assert [tok.token_to_id(t) for t in OPENAI_SPECIALS] == [n, n + 1]
    assert tok.vocab_size == 1 + max(hf.token_to_id(t) for t in OPENAI_SPECIALS)
    tok.save(tmp_path / "saved")
    again = Tokenizer.from_file(str(tmp_path / "saved" / "tokenizer.json"))
    assert_same_ids(tokkit.load(tmp_path / "saved"), again, LINES[:20] + SPECIAL_LINES)
    assert [again.token_to_id(t) for t in OPENAI_SPECIALS] == [hf.token_to_id(t) for t in OPENAI_SPECIALS]


def test_unused_ids_inside_a_wordpiece_vocabulary(tmp_path):
    """A WordPiece vocabulary with gaps in its ids (a tokenizer.json object of token -> id)."""
    hf = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.train_from_iterator(LINES, trainers.WordPieceTrainer(vocab_size=500, special_tokens=["[UNK]"],
                                                            show_progress=False))
    data = json.loads(hf.to_str())
    data["model"]["vocab"] = {t: 3 * i for t, i in data["model"]["vocab"].items()}
    data["added_tokens"][0]["id"] = 0
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    hf = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    tok = tokkit.load(tmp_path)
    assert_same_ids(tok, hf)
    assert tok.id_to_token(1) is None and tok.vocab_size == 3 * (len(data["model"]["vocab"]) - 1) + 1


# ------------------------------------------------------------------------------ vocab.txt lines
def test_vocab_txt_line_of_a_line_separator_is_a_token(tmp_path):
    """Only the line ending is taken off: U+2028 or U+2029 alone is a token at its line's id, as
    transformers' reader of vocab.txt reads it (BERT's split never makes such a word, so its
    encoder gives the ids of the other tokens)."""
    hf = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer()  # no control characters in the vocabulary
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.train_from_iterator(LINES, trainers.WordPieceTrainer(
        vocab_size=600, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    vocab = [t for t, _ in sorted(hf.get_vocab().items(), key=lambda kv: kv[1])]
    vocab[10:10] = ["\u2028", "\u2029"]
    (tmp_path / "vocab.txt").write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
    tok = tokkit.load(tmp_path)
    assert tok.get_vocab() == dict(load_vocab(str(tmp_path / "vocab.txt")))
    assert [tok.token_to_id(t) for t in ("\u2028", "\u2029")] == [10, 11]
    reference = transformers.BertTokenizer.from_pretrained(str(tmp_path))
    for line in LINES + ["a\u2028b", "end of the line", "[CLS] x [SEP]"]:
        assert tok.encode(line) == reference(line, add_special_tokens=False)["input_ids"], line
