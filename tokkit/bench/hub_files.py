"""Hub-style SentencePiece tokenizer files for the hub benchmark, made the way the Hub makes them.

`sentencepiece` trains a model on the training text, then transformers' converter writes the
tokenizer.json the Hub would ship beside it:

- "xlmr": a Unigram model converted as XLM-R is (`XLMRobertaTokenizer(vocab_file=...)` then
  `convert_slow_tokenizer`): Precompiled normalizer + Metaspace, `<s> <pad> </s> <unk>` first and
  every other piece one id later than in the .model (fairseq's offset), `<mask>` last;
- "llama": a SentencePiece BPE model with byte fallback, converted as Llama 2 is
  (`LlamaTokenizer.from_pretrained` on a folder holding tokenizer.model): Metaspace, byte fallback.

The converters assume the family's special ids, so both models are trained with sentencepiece's
own layout, `<unk>`=0, `<s>`=1, `</s>`=2, no pad: XLM-R's converter puts its four specials in
front of piece 3 onwards, Llama's keeps ids 0-2. In transformers 5 the `LlamaTokenizer(vocab_file=...)`
constructor does not read the .model (its file has no merges and encodes every text to []) and
`convert_slow_tokenizer` fails on SentencePiece BPE; `from_pretrained` on the folder reads the
model and generates the merges. Every written file is checked before it is kept: `tokenizers`
must encode a sample of the training lines to the ids the sentencepiece package gives, mapped
to the Hub's ids.

The training text is en/wiki 000-019 plus the Tatoeba and Korean Wikipedia files of the shared
corpus (about 30 MB), or the same line-aligned fraction of each file (`train_mb`), so a small
slice keeps every language. Files are built once per (kind, vocab size, training size) into a
workdir and reused.

>>> hub_ids("xlmr", [0, 3, 17]), hub_ids("llama", [0, 3, 17])
([3, 4, 18], [0, 3, 17])
"""
from __future__ import annotations

import glob
import io
import json
import os
import shutil
from pathlib import Path

from tokkit._files import atomic_dir
from tokkit.bench.contenders import sentencepiece_model, tokenizers_file
from tokkit.errors import TokkitError

KINDS = ("xlmr", "llama")
TITLES = {"xlmr": "XLM-R-style Unigram", "llama": "Llama-2-style SentencePiece BPE"}
MODEL_NAMES = {"xlmr": "sentencepiece.bpe.model", "llama": "tokenizer.model"}
VOCAB_SIZE = 16000
TRAIN_MB = 4.0  # the default training slice: 16k models on 30 MB take about 45 s each
SPECIAL_IDS = dict(unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
TRAIN_OPTIONS = {
    "xlmr": dict(model_type="unigram", character_coverage=0.9995),
    # Llama 2's trainer settings: no normalization, spaces kept as they are, digits one by one.
    "llama": dict(model_type="bpe", byte_fallback=True, split_digits=True, normalization_rule_name="identity",
                  remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, character_coverage=0.99995),
}
XLMR_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
CHECK_LINES = 300


def hub_ids(kind: str, ids) -> list[int]:
    """The sentencepiece package's ids as the kind's tokenizer.json numbers them."""
    if kind != "xlmr":
        return list(ids)
    return [3 if i == 0 else i + 1 for i in ids]  # fairseq: <unk> moves to 3, the rest shift by one


# ------------------------------------------------------------------------------ training text
def training_files(corpus: str) -> list[str]:
    """en/wiki/000-019.txt, multilingual/tatoeba/* and multilingual/ko_wikipedia/* under `corpus`."""
    parts = [[os.path.join(corpus, "en", "wiki", f"{i:03d}.txt") for i in range(20)],
             sorted(glob.glob(os.path.join(corpus, "multilingual", "tatoeba", "*"))),
             sorted(glob.glob(os.path.join(corpus, "multilingual", "ko_wikipedia", "*")))]
    missing = [p for p in parts[0] if not os.path.isfile(p)] + [name for name, got in
                                                                (("multilingual/tatoeba", parts[1]),
                                                                 ("multilingual/ko_wikipedia", parts[2])) if not got]
    if missing:
        raise TokkitError(f"{corpus}: the hub files need the shared corpus; missing {missing[0]}")
    return [p for part in parts for p in part]


def fraction_lines(paths: list[str], nbytes: int | None) -> list[str]:
    """The non-empty lines of the same line-aligned fraction of every file, about `nbytes` in all
    (every file whole when None): a small slice keeps each file's language in it."""
    total = sum(os.path.getsize(p) for p in paths)
    share = 1.0 if nbytes is None or nbytes >= total else nbytes / total
    lines = []
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        if share < 1.0:
            data = data[: data.rfind(b"\n", 0, int(len(data) * share) + 1) + 1]
        lines += [line for line in data.decode("utf-8").split("\n") if line.strip()]
    return lines


# ------------------------------------------------------------------------------ building
def train_model(lines: list[str], kind: str, vocab_size: int) -> bytes:
    """A SentencePiece model of `kind` trained on `lines` (one thread, so the bytes repeat)."""
    import sentencepiece as spm

    out = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, vocab_size=vocab_size,
                                       num_threads=1, minloglevel=2, max_sentence_length=16384,
                                       **SPECIAL_IDS, **TRAIN_OPTIONS[kind])
    except RuntimeError as exc:  # e.g. too little text for the vocabulary size
        why = str(exc).strip().splitlines()[-1].split("] ")[-1]
        raise TokkitError(f"sentencepiece could not train the {kind} model: {why}") from None
    return out.getvalue()


def convert(kind: str, folder: str) -> None:
    """Write folder/tokenizer.json from the .model in `folder`, as transformers converts the kind."""
    import transformers
    from tokenizers import AddedToken
    from transformers.convert_slow_tokenizer import convert_slow_tokenizer

    model = os.path.join(folder, MODEL_NAMES[kind])
    if kind == "xlmr":
        tok = convert_slow_tokenizer(transformers.XLMRobertaTokenizer(vocab_file=model))
        # the Hub's file lists the five specials as added tokens, as transformers saves them
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in XLMR_SPECIALS])
    else:
        tok = transformers.LlamaTokenizer.from_pretrained(folder, local_files_only=True).backend_tokenizer
    tok.save(os.path.join(folder, "tokenizer.json"))


def check_file(kind: str, folder: str, lines: list[str]) -> None:
    """Refuse a converted file whose ids are empty or differ from sentencepiece's on `lines`.

    Lines starting with whitespace are left out: Llama's Metaspace (prepend_scheme "first") adds
    no "▁" before a text that already starts with one, where sentencepiece adds its dummy prefix.
    """
    sample = [line for line in lines if line[:1].strip()]
    step = max(1, len(sample) // CHECK_LINES)
    sample = sample[::step][:CHECK_LINES]
    got = [e.ids for e in tokenizers_file(folder).encode_batch(sample, add_special_tokens=False)]
    sp = sentencepiece_model(os.path.join(folder, MODEL_NAMES[kind]))
    want = [hub_ids(kind, ids) for ids in sp.encode(sample, num_threads=1)]
    if not any(got):
        raise TokkitError(f"{kind}: the converted tokenizer.json encodes every text to no ids")
    for text, a, b in zip(sample, got, want):
        if a != b:
            raise TokkitError(f"{kind}: the converted tokenizer.json disagrees with sentencepiece on "
                              f"{text[:60]!r}: {a[:8]} vs {b[:8]}")


def folder_name(kind: str, vocab_size: int, train_mb: float | None) -> str:
    """'xlmr-16000-4mb'; 'full' when trained on the whole training text."""
    return f"{kind}-{vocab_size}-{'full' if train_mb is None else f'{train_mb:g}mb'}"


def build_files(corpus: str, workdir: str, *, kinds=KINDS, vocab_size: int = VOCAB_SIZE,
                train_mb: float | None = TRAIN_MB, log=print) -> dict[str, str]:
    """{kind: folder holding the .model and tokenizer.json}, built into `workdir` unless there already."""
    folders = {kind: os.path.join(workdir, folder_name(kind, vocab_size, train_mb)) for kind in kinds}
    todo = [k for k, f in folders.items() if not os.path.isfile(os.path.join(f, "tokenizer.json"))]
    if not todo:
        return folders
    lines = fraction_lines(training_files(corpus), None if train_mb is None else int(train_mb * 1e6))
    mb = sum(len(line.encode("utf-8")) for line in lines) / 1e6
    os.makedirs(workdir, exist_ok=True)
    for kind in todo:
        log(f"training {kind} {vocab_size} on {mb:.1f} MB ({len(lines):,} lines)")
        with atomic_dir(folders[kind], marker_files={MODEL_NAMES[kind], "tokenizer.json"}, force=True) as tmp:
            Path(tmp, MODEL_NAMES[kind]).write_bytes(train_model(lines, kind, vocab_size))
            convert(kind, tmp)
            check_file(kind, tmp, lines)
            _keep_only(tmp, {MODEL_NAMES[kind], "tokenizer.json"})
    return folders


def _keep_only(folder: str, names: set) -> None:
    """Drop whatever else a converter left beside the two files (caches, configs)."""
    for name in os.listdir(folder):
        if name not in names:
            path = os.path.join(folder, name)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def vocab_size_of(folder: str) -> int:
    """Entries of a tokenizer.json's model vocabulary plus added tokens outside it."""
    with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
        spec = json.load(f)
    vocab = spec["model"]["vocab"]
    ids = set(vocab.values()) if isinstance(vocab, dict) else set(range(len(vocab)))
    return len(ids | {t["id"] for t in spec.get("added_tokens", [])})
