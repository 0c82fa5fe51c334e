"""Today's byte-level tokenizer files, trained and written by `tokenizers` as the Hub's files are made.

Five kinds, each a BPE over the 256 byte symbols (ByteLevel alphabet) with the kind's pipeline:

- "gpt2": ByteLevel pre-tokenizer (GPT-2's pattern inside it), no normalizer;
- "modernbert": NFC + ByteLevel, `[CLS] A [SEP]` (ModernBERT, OLMo);
- "llama3": Split with the cl100k pattern + ByteLevel(use_regex=False), BPE ignore_merges;
- "qwen2": NFC + Split with Qwen2's pattern (digits one by one) + ByteLevel(use_regex=False);
- "o200k": Split with the o200k pattern + ByteLevel(use_regex=False), no normalizer.

The training text is en/wiki 000-019 of the shared corpus (~20 MB), or a line-aligned prefix of
it (`train_mb`). Each file is built once per (kind, vocab size, training size) into a workdir and
reused; a folder appears only once its tokenizer.json is complete.

>>> folder_name("qwen2", 32000, None), folder_name("o200k", 500, 0.25)
('qwen2-32000', 'o200k-500-0.25mb')
"""
from __future__ import annotations

import os

from tokkit._files import atomic_dir
from tokkit._native.patterns import CL100K_PATTERN, O200K_PATTERN, QWEN2_PATTERN
from tokkit.errors import TokkitError

KINDS = ("gpt2", "modernbert", "llama3", "qwen2", "o200k")
TITLES = {"gpt2": "GPT-2 (ByteLevel)", "modernbert": "ModernBERT/OLMo (NFC + ByteLevel)",
          "llama3": "Llama 3 (cl100k Split, ignore_merges)", "qwen2": "Qwen2 (NFC + Qwen2 Split)",
          "o200k": "o200k (o200k Split)"}
SPLIT_PATTERNS = {"llama3": CL100K_PATTERN, "qwen2": QWEN2_PATTERN, "o200k": O200K_PATTERN}
SPECIALS = {"gpt2": ["<|endoftext|>"], "modernbert": ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "<|endoftext|>"],
            "llama3": ["<|begin_of_text|>", "<|end_of_text|>"], "qwen2": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
            "o200k": ["<|endoftext|>"]}
NFC_KINDS = ("modernbert", "qwen2")
VOCAB_SIZE = 32000
TRAIN_FILES = 20  # en/wiki 000-019


def folder_name(kind: str, vocab_size: int, train_mb: float | None) -> str:
    return f"{kind}-{vocab_size}" + ("" if train_mb is None else f"-{train_mb:g}mb")


def training_files(corpus: str) -> list[str]:
    """en/wiki/000-019.txt under `corpus`, all of them present."""
    paths = [os.path.join(corpus, "en", "wiki", f"{i:03d}.txt") for i in range(TRAIN_FILES)]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise TokkitError(f"{corpus}: the pattern files are trained on en/wiki 000-019; missing {missing[0]}")
    return paths


def text_prefix(paths, nbytes: int) -> str:
    """The first `nbytes` of the files read in order, cut back to a line end."""
    parts, size = [], 0
    for path in paths:
        with open(path, "rb") as f:
            parts.append(f.read(nbytes - size))
        size += len(parts[-1])
        if size >= nbytes:
            break
    raw = b"".join(parts)
    return raw[: raw.rfind(b"\n") + 1].decode("utf-8")


def training_prefix(paths: list[str], nbytes: int) -> list[str]:
    """The lines of text_prefix(paths, nbytes)."""
    return text_prefix(paths, nbytes).splitlines()


def pipeline(kind: str):
    """An untrained `tokenizers.Tokenizer` with the kind's normalizer, pre-tokenizer, model and decoder."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.BPE(ignore_merges=kind == "llama3"))
    if kind in NFC_KINDS:
        tok.normalizer = normalizers.NFC()
    if kind in SPLIT_PATTERNS:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(SPLIT_PATTERNS[kind]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def post_processor(kind: str, tok):
    """The post-processor the kind's Hub files carry (templates add specials only when asked)."""
    from tokenizers import processors

    def ids(*names):
        return [(t, tok.token_to_id(t)) for t in names]
    if kind == "modernbert":
        return processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                             special_tokens=ids("[CLS]", "[SEP]"))
    if kind == "llama3":
        template = processors.TemplateProcessing(
            single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
            special_tokens=ids("<|begin_of_text|>"))
        return processors.Sequence([processors.ByteLevel(trim_offsets=False), template])
    return processors.ByteLevel(trim_offsets=False, add_prefix_space=False, use_regex=False)


def train_file(kind: str, paths: list[str], vocab_size: int, out: str, train_mb: float | None = None) -> None:
    """Train the kind's BPE on the files (or their first `train_mb` MB) and write out/tokenizer.json."""
    from tokenizers import pre_tokenizers, trainers

    tok = pipeline(kind)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS[kind], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    if train_mb is None:
        tok.train(paths, trainer)
    else:
        tok.train_from_iterator(training_prefix(paths, int(train_mb * 1e6)), trainer)
    tok.post_processor = post_processor(kind, tok)
    tok.save(os.path.join(out, "tokenizer.json"))


def build_files(corpus: str, workdir: str, *, kinds=KINDS, vocab_size: int = VOCAB_SIZE,
                train_mb: float | None = None, log=print) -> dict[str, str]:
    """{kind: folder holding its tokenizer.json}, trained into `workdir` unless there already."""
    folders = {kind: os.path.join(workdir, folder_name(kind, vocab_size, train_mb)) for kind in kinds}
    todo = [k for k, f in folders.items() if not os.path.isfile(os.path.join(f, "tokenizer.json"))]
    if todo:
        paths = training_files(corpus)
        os.makedirs(workdir, exist_ok=True)
    for kind in todo:
        size = "en/wiki 000-019" if train_mb is None else f"{train_mb:g} MB of en/wiki 000-019"
        log(f"training {kind} {vocab_size:,} on {size}")
        with atomic_dir(folders[kind], marker_files={"tokenizer.json"}, force=True) as tmp:
            train_file(kind, paths, vocab_size, tmp, train_mb)
    return folders
