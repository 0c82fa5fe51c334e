"""Training speed and memory: tokkit's three trainers against `tokenizers`, `sentencepiece`, `bpeasy`.

Each contender trains in its own process on the same files with the same vocab size and thread
count; we time the whole process (imports and file writing included) and sample the peak RSS
of its process tree every 20 ms.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

from tokkit.bench.harness import measure_alternating, python_cmd

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# Each contender snippet reads: argv[1] = output folder, argv[2] = vocab size, argv[3:] = corpus files
# (tokkit's: argv[3] = algo, argv[4] = workers, argv[5:] = files).
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
from tokkit.pretokenize import GPT2_PATTERN
def lines():
    for path in sys.argv[3:]:
        with open(path, encoding="utf-8") as f:
            yield from f
vocab = bpeasy.train_bpe(lines(), GPT2_PATTERN, 128, int(sys.argv[2]))
open(sys.argv[1] + "/vocab.txt", "w").write(str(len(vocab)))
"""

TOKKIT = """
import sys
from tokkit.cli import main
main(["train", "--algo", sys.argv[3], "--vocab-size", sys.argv[2], "--workers", sys.argv[4], "-q", "--force",
      "-o", sys.argv[1] + "/out", *sys.argv[5:]])
"""


def contenders(algo: str) -> dict[str, tuple[str, str | None]]:
    """name -> (snippet, module it needs); the first entry is tokkit."""
    table = {
        "bytelevel": {"tokenizers": (TOKENIZERS_BYTELEVEL, "tokenizers"),
                      "sentencepiece (bpe, not byte-level)": (SENTENCEPIECE_BPE, "sentencepiece"),
                      "bpeasy": (BPEASY, "bpeasy")},
        "bpe": {"tokenizers": (TOKENIZERS_CHAR_BPE, "tokenizers")},
        "wordpiece": {"tokenizers": (TOKENIZERS_WORDPIECE, "tokenizers")},
    }
    return table[algo]


def run_train_suite(files: list[str], *, algos=("bytelevel", "bpe", "wordpiece"), vocab_size=32000, workers=2,
                    repeat=3, log=print) -> list[dict]:
    """Measure every algorithm against its installed contenders; return one row per (algo, contender)."""
    rows = []
    env = dict(os.environ, RAYON_NUM_THREADS=str(workers), OMP_NUM_THREADS=str(workers))
    for algo in algos:
        with tempfile.TemporaryDirectory(prefix="tokkit-bench-") as tmp:
            commands = {"tokkit": python_cmd(TOKKIT) + [tmp, str(vocab_size), algo, str(workers), *files]}
            notes = {}
            for name, (code, module) in contenders(algo).items():
                if importlib.util.find_spec(module) is None:
                    notes[name] = f"skipped: {module} is not installed"
                    continue
                commands[name] = python_cmd(code) + [tmp, str(vocab_size), *files]
            log(f"train {algo}: vocab {vocab_size}, {workers} threads, {len(files)} files")
            results = measure_alternating(commands, repeat=repeat, env=env, log=log)
        base = results["tokkit"]
        for name, res in results.items():
            row = {"suite": "train", "algo": algo, **res.as_dict()}
            if name != "tokkit" and res.times and base.times:
                row["tokkit_ratio"] = base.median / res.median
                row["tokkit_rss_ratio"] = base.peak_rss_mb / res.peak_rss_mb
            rows.append(row)
        rows.extend({"suite": "train", "algo": algo, "name": n, "note": note} for n, note in notes.items())
    return rows


def format_rows(rows: list[dict]) -> str:
    """A plain-text table: times in s, RSS in MB, ratio tokkit / contender (time and RSS)."""
    head = f"{'algo':<10} {'contender':<36} {'min':>7} {'median':>7} {'max':>7} {'RSS MB':>7} {'tokkit/x':>9} {'RSS/x':>6}"
    out = [head, "-" * len(head)]
    for r in rows:
        if "median" not in r or not r.get("times"):
            out.append(f"{r['algo']:<10} {r['name']:<36} {r.get('note', '')}")
            continue
        ratio = f"{r['tokkit_ratio']:.2f}x" if "tokkit_ratio" in r else ""
        rss = f"{r['tokkit_rss_ratio']:.2f}" if "tokkit_rss_ratio" in r else ""
        out.append(f"{r['algo']:<10} {r['name']:<36} {r['min']:7.2f} {r['median']:7.2f} {r['max']:7.2f} "
                   f"{r['peak_rss_mb']:7.0f} {ratio:>9} {rss:>6}")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use benchmarks/bench_train.py or `tokkit bench --suite train`")
