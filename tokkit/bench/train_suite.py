"""Training speed and memory: tokkit's three trainers against `tokenizers`, `gigatoken`, `sentencepiece`, `bpeasy`.

Each contender trains in its own process on the same files with the same vocab size and thread
count; we time the whole process (imports and file writing included) and sample the peak RSS
of its process tree every 20 ms.
"""
from __future__ import annotations

import os
import sys
import tempfile

from tokkit._native.patterns import O200K_PATTERN
from tokkit.bench.contenders import skip_note
from tokkit.bench.harness import measure_alternating, python_cmd
from tokkit.bench.report import group_rows

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# Each contender snippet reads: argv[1] = output folder, argv[2] = vocab size, argv[3:] = corpus files
# (tokkit's: argv[3] = algo, argv[4] = workers, argv[5:] = TOKKIT_OPTIONS[algo], then the files).
TOKENIZERS_BYTELEVEL = f"""
import sys
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tr = trainers.BpeTrainer(vocab_size=int(sys.argv[2]), min_frequency=2, show_progress=False,
    special_tokens={[t for t in SPECIALS if t != "[UNK]"]!r}, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train(sys.argv[3:], tr)
tok.save(sys.argv[1] + "/tokenizer.json")
"""

# The same with the o200k Split before a byte-only ByteLevel, as the Hub's o200k files have it.
TOKENIZERS_BYTELEVEL_O200K = f"""
import sys
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex({O200K_PATTERN!r}), behavior="isolated"),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
tr = trainers.BpeTrainer(vocab_size=int(sys.argv[2]), min_frequency=2, show_progress=False,
    special_tokens={[t for t in SPECIALS if t != "[UNK]"]!r}, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train(sys.argv[3:], tr)
tok.save(sys.argv[1] + "/tokenizer.json")
"""

TOKENIZERS_CHAR_BPE = f"""
import sys
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
tok = Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                            lowercase=False)
tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
tr = trainers.BpeTrainer(vocab_size=int(sys.argv[2]), min_frequency=2, show_progress=False,
    special_tokens={SPECIALS!r}, limit_alphabet=1000, end_of_word_suffix="</w>")
tok.train(sys.argv[3:], tr)
tok.save(sys.argv[1] + "/tokenizer.json")
"""

TOKENIZERS_WORDPIECE = f"""
import sys
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
tok.normalizer = normalizers.BertNormalizer(lowercase=True)
tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
tr = trainers.WordPieceTrainer(vocab_size=int(sys.argv[2]), min_frequency=2, show_progress=False,
    special_tokens={SPECIALS!r}, limit_alphabet=1000)
tok.train(sys.argv[3:], tr)
tok.save(sys.argv[1] + "/tokenizer.json")
"""

SENTENCEPIECE_BPE = """
import sys
import sentencepiece as spm
spm.SentencePieceTrainer.train(input=",".join(sys.argv[3:]), model_prefix=sys.argv[1] + "/spm",
    vocab_size=int(sys.argv[2]), model_type="bpe", num_threads=2, character_coverage=0.9995,
    max_sentence_length=1 << 20, minloglevel=2)
"""

BPEASY = """
import sys, bpeasy
# The GPT-2 pattern as released (bpeasy compiles it with fancy-regex).
GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
def lines():
    for path in sys.argv[3:]:
        with open(path, encoding="utf-8") as f:
            yield from f
vocab = bpeasy.train_bpe(lines(), GPT2_PATTERN, 128, int(sys.argv[2]))
open(sys.argv[1] + "/vocab.txt", "w").write(str(len(vocab)))
"""

# gigatoken reads the same files itself (each file one document, on its own threads) and returns the
# vocabulary and merges; writing the merges keeps the comparison honest about producing a result.
GIGATOKEN_BYTELEVEL = """
import sys, gigatoken
vocab, merges = gigatoken.train_bpe(gigatoken.TextFileSource(sys.argv[3:]), int(sys.argv[2]), ["<|endoftext|>"])
with open(sys.argv[1] + "/merges.txt", "wb") as f:
    f.writelines(a + b" " + b + b"\\n" for a, b in merges)
"""

TOKKIT = """
import sys
from tokkit.cli import main
main(["train", "--algo", sys.argv[3].split("-")[0], "--vocab-size", sys.argv[2], "--workers", sys.argv[4], "-q",
      "--force", "-o", sys.argv[1] + "/out", *sys.argv[5:]])
"""

# WordPiece trains with likelihood scoring, its costliest, as the published figures were measured
# (the trainer's default is frequency, the scoring tokenizers' WordPieceTrainer uses).
TOKKIT_OPTIONS = {"wordpiece": ["--scoring", "likelihood"], "bytelevel-o200k": ["--pattern", "o200k"]}


def contenders(algo: str) -> dict[str, tuple[str, str | None]]:
    """name -> (snippet, module it needs); the first entry is tokkit."""
    table = {
        "bytelevel": {"tokenizers": (TOKENIZERS_BYTELEVEL, "tokenizers"),
                      "gigatoken train_bpe": (GIGATOKEN_BYTELEVEL, "gigatoken"),
                      "sentencepiece (bpe, not byte-level)": (SENTENCEPIECE_BPE, "sentencepiece"),
                      "bpeasy": (BPEASY, "bpeasy")},
        # gigatoken trains with its own pattern: it takes no other
        "bytelevel-o200k": {"tokenizers (o200k Split)": (TOKENIZERS_BYTELEVEL_O200K, "tokenizers"),
                            "gigatoken train_bpe": (GIGATOKEN_BYTELEVEL, "gigatoken")},
        "bpe": {"tokenizers": (TOKENIZERS_CHAR_BPE, "tokenizers")},
        "wordpiece": {"tokenizers": (TOKENIZERS_WORDPIECE, "tokenizers")},
    }
    return table[algo]


ALGO_NOTES = {"bytelevel": "GPT-2 byte-level BPE", "bytelevel-o200k": "byte-level BPE, o200k pattern",
              "bpe": "char BPE with </w>", "wordpiece": "WordPiece, likelihood scoring"}


def run_train_suite(files: list[str], *, algos=("bytelevel", "bpe", "wordpiece"), vocab_size=32000, workers=2,
                    repeat=3, log=print, mb: float | None = None) -> list[dict]:
    """Measure every algorithm against its installed contenders; return rows (see tokkit.bench.report).

    Whole-process wall time (imports and file writing included) and peak RSS of the process tree;
    one warm-up round, then `repeat` rounds with the contenders alternating. With `mb` (the input
    size) the rows also carry MB/s.
    """
    rows = []
    env = dict(os.environ, RAYON_NUM_THREADS=str(workers), OMP_NUM_THREADS=str(workers))
    for algo in algos:
        with tempfile.TemporaryDirectory(prefix="tokkit-bench-") as tmp:
            commands = {"tokkit": python_cmd(TOKKIT) + [tmp, str(vocab_size), algo, str(workers),
                                                        *TOKKIT_OPTIONS.get(algo, []), *files]}
            notes = {}
            for name, (code, module) in contenders(algo).items():
                note = skip_note(module)
                if note:
                    notes[name] = note
                    continue
                commands[name] = python_cmd(code) + [tmp, str(vocab_size), *files]
            log(f"train {algo}: vocab {vocab_size}, {workers} threads, {len(files)} files")
            results = measure_alternating(commands, repeat=repeat, env=env, log=log)
        group = f"train {algo} ({ALGO_NOTES[algo]}), vocab {vocab_size}, {workers} threads"
        target = TARGETS.get(algo)
        rows += group_rows("train", group, results, baseline="tokkit", work=mb, unit="MB/s", notes=notes,
                           target=target, extra={"algo": algo}, remarks=REMARKS.get(algo))
    return rows


# Targets (measured on the 100 MB corpus): tokkit's time over tokenizers'.
TARGETS = {"bytelevel": "tokkit/tokenizers time <= 0.5",
           "bytelevel-o200k": "tokkit/tokenizers time <= 0.1, tokkit/gigatoken time <= 0.5",
           "bpe": "tokkit/tokenizers time <= 0.5",
           "wordpiece": "tokkit/tokenizers time <= 1.0"}


REMARKS = {"wordpiece": {"tokenizers": "its WordPieceTrainer scores merges by frequency (BPE), not by likelihood gain"},
           "bytelevel": {"sentencepiece (bpe, not byte-level)": "not byte-level: unicode-character BPE, "
                         "character_coverage 0.9995", "bpeasy": "byte-level, GPT-2 pattern, no special tokens"}}


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use benchmarks/bench_train.py or `tokkit bench --suite train`")
