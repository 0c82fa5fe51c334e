"""Options that did not do what they say: whole-word masking with SentencePiece-style tokenizers,
and fine-tuning a BERT tagging folder for sentence classification."""
import numpy as np
import pytest

import tokkit
from tokkit.pretraining import MaskingCollator

from .conftest import TEXT, one_error_line  # noqa: F401
from .finetune_kit import TINY, ft_work, listing, scratch  # noqa: F401 - a fixture

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TEXTS = ["the cats sat on the lazier dogs", "a quicker brownish fox jumped over the logs"] * 8  # words in pieces


def metaspace_bpe(folder):
    """A SentencePiece-style BPE (Metaspace `▁` marks a word's start), written by tokenizers."""
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace()
    tok.decoder = tokenizers.decoders.Metaspace()
    tok.train_from_iterator(TEXT.splitlines(), tokenizers.trainers.BpeTrainer(vocab_size=60, special_tokens=SPECIALS))
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    folder.mkdir()
    tok.save(str(folder / "tokenizer.json"))
    return tokkit.load(folder)


@pytest.fixture(params=["unigram", "metaspace-bpe", "wordpiece", "bytelevel"])
def tokenizer(request, tmp_path):
    if request.param == "metaspace-bpe":
        return metaspace_bpe(tmp_path / "spbpe")
    size = 300 if request.param == "bytelevel" else 60  # byte-level holds the 256 bytes first
    return tokkit.train(texts=TEXT.splitlines(), algo=request.param, vocab_size=size, special_tokens=SPECIALS)


def test_whole_word_masking_masks_the_words_the_tokenizer_makes(tokenizer):
    enc = tokkit.encode(tokenizer, TEXTS, max_length=64, truncation=True, padding="longest")
    lengths = enc["attention_mask"].sum(axis=1)
    examples = [{"input_ids": enc["input_ids"][r, :lengths[r]], "index": r,
                 "special_tokens_mask": enc["special_tokens_mask"][r, :lengths[r]]} for r in range(len(TEXTS))]
    batch = MaskingCollator(tokenizer, seed=3, mlm_probability=0.4, whole_word=True)(examples)
    labelled = batch["labels"] != -100
    words = enc["word_ids"]
    several, partial_rows = 0, 0
    for r in range(len(TEXTS)):
        chosen = {int(w) for w in words[r][labelled[r, :words.shape[1]]]}
        assert -1 not in chosen  # special tokens are never masked
        for w in set(words[r][words[r] >= 0].tolist()):
            pieces = labelled[r, :words.shape[1]][words[r] == w]
            assert pieces.all() or not pieces.any(), (r, w, pieces)  # a word is masked whole or not at all
            several += bool(pieces.all() and pieces.size > 1)
        partial_rows += 0 < len(chosen) < len(set(words[r][words[r] >= 0].tolist()))
    assert several > 0  # some word of several pieces was masked whole (not single pieces)
    assert partial_rows > 0  # and rows are not masked as one word


def test_a_bert_tagging_folder_fine_tunes_for_classification_with_a_fresh_pooler(ft_work, cli):
    args = scratch("--task", "tag", "--arch", "bert", out="tagger")
    args[1] = "tag.jsonl"
    code, _, err = cli(*args)
    assert code == 0, err
    code, _, err = cli("finetune", "-m", "tagger", "train.jsonl", "--task", "classify", "-o", "out", "-q",
                       "--epochs", "1", "--threads", "1")
    assert code == 0, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokkit: warning: ") and "pooler" in lines[0], err
    from tokkit.bert import load_finetuned

    assert load_finetuned(ft_work / "out").task == "classify"


@pytest.mark.parametrize("extra, words", [
    (["--label-all-subtokens"], "--label-all-subtokens"),
    (["--task", "tag", "--pooling", "mean"], "--pooling"),
    (["--eval-every-seconds", "5"], "--eval"),
])
def test_options_that_would_be_ignored_are_refused(ft_work, cli, extra, words):
    args = scratch(*extra)
    if "tag" in extra:
        args[1] = "tag.jsonl"
    before = listing(ft_work)
    code, out, err = cli(*args)
    assert code == 2 and words in one_error_line(err)
    assert listing(ft_work) == before


def test_a_fine_tuned_folder_continues_with_its_own_head_weights(ft_work, cli):
    from tokkit.bert import FinetuneConfig
    from tokkit.bert.finetune_model import starting_point
    from tokkit.labelled import read_examples

    assert cli(*scratch(out="tuned"))[0] == 0
    from safetensors.torch import load_file

    saved = load_file(str(ft_work / "tuned" / "model.safetensors"))["classifier.weight"]
    cfg = FinetuneConfig(task="classify")
    start = starting_point(ft_work / "tuned", None, cfg, from_scratch=False)
    model = start.build(start.head_for(cfg, read_examples(ft_work / "train.jsonl", "classify"), "train.jsonl"))
    assert torch_equal(model.head.classifier.weight, saved)  # not a fresh head: "it continues with its own labels"


def torch_equal(a, b):
    import torch

    return torch.equal(a.detach(), b)
