"""Unigram training side by side: tokkit vs sentencepiece vs tokenizers' UnigramTrainer.

    python benchmarks/bench_unigram.py                                # en/wiki 000-009 (~10 MB), vocab 32,000
    python benchmarks/bench_unigram.py --corpus some/dir --vocab-size 8000 --repeat 1

Each contender trains in its own process on the same files with the same vocabulary size and
thread count (whole process timed, imports and file writing included; peak RSS of the process
tree sampled every 20 ms, tokkit.bench.harness), alternating, one warm-up round then --repeat
rounds. Then each trained tokenizer encodes the held-out lines (--heldout, never in training)
and the table gains tokens per word (words = whitespace runs, the same for everyone).
"""
import argparse
import sys
import tempfile
from pathlib import Path

from tokkit.bench.corpus_slice import corpus_mb
from tokkit.bench.harness import measure_alternating, python_cmd
from tokkit.bench.report import format_table, group_rows, write_json
from tokkit.errors import TokkitError

WIKI = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki"
DEFAULT = [str(WIKI / f"{k:03d}.txt") for k in range(10)]
HELDOUT = str(WIKI / "096.txt")

# argv[1] = output folder, argv[2] = vocab size, argv[3] = threads, argv[4:] = corpus files
TOKKIT = """
import sys
from tokkit.cli import main
main(["train", "--algo", "unigram", "--vocab-size", sys.argv[2], "--workers", sys.argv[3], "-q", "--force",
      "-o", sys.argv[1] + "/tokkit", *sys.argv[4:]])
"""

SENTENCEPIECE = """
import sys
import sentencepiece as spm
spm.SentencePieceTrainer.train(input=",".join(sys.argv[4:]), model_prefix=sys.argv[1] + "/spm",
    vocab_size=int(sys.argv[2]), model_type="unigram", num_threads=int(sys.argv[3]), character_coverage=0.9995,
    max_sentence_length=1 << 20, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, minloglevel=2)
"""

TOKENIZERS = """
import sys
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
tok = Tokenizer(models.Unigram())
tok.normalizer = normalizers.NFKC()
tok.pre_tokenizer = pre_tokenizers.Metaspace()
tr = trainers.UnigramTrainer(vocab_size=int(sys.argv[2]), special_tokens=["<pad>", "</s>", "<unk>"],
    unk_token="<unk>", show_progress=False, max_piece_length=16, shrinking_factor=0.75, n_sub_iterations=2)
tok.train(sys.argv[4:], tr)
tok.save(sys.argv[1] + "/tokenizer.json")
"""

CONTENDERS = {"tokkit": TOKKIT, "sentencepiece": SENTENCEPIECE, "tokenizers UnigramTrainer": TOKENIZERS}


def encoders(out: str) -> dict:
    """name -> encode(text) -> list of ids, for each contender whose output exists (imported here, lazily)."""
    found = {}
    if Path(out, "tokkit", "tokenizer.json").exists():
        import tokkit

        found["tokkit"] = tokkit.load(Path(out, "tokkit")).encode
    if Path(out, "spm.model").exists():
        import sentencepiece

        found["sentencepiece"] = sentencepiece.SentencePieceProcessor(model_file=str(Path(out, "spm.model"))).encode
    if Path(out, "tokenizer.json").exists():
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(str(Path(out, "tokenizer.json")))
        found["tokenizers UnigramTrainer"] = lambda text: hf.encode(text).ids
    return found


def tokens_per_word(out: str, heldout: str, max_lines: int) -> dict[str, float]:
    """Tokens per whitespace word on the first `max_lines` non-empty held-out lines."""
    with open(heldout, encoding="utf-8") as f:
        lines = [line for line in (next(f, "") for _ in range(max_lines * 2)) if line.strip()][:max_lines]
    words = sum(len(line.split()) for line in lines)
    return {name: sum(len(encode(line)) for line in lines) / words for name, encode in encoders(out).items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=DEFAULT)
    parser.add_argument("--heldout", default=HELDOUT, help="held-out text for tokens per word (not in --corpus)")
    parser.add_argument("--heldout-lines", type=int, default=5000)
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-run progress lines on stderr")
    args = parser.parse_args(argv)
    try:
        files, mb = corpus_mb(args.corpus)
    except TokkitError as exc:
        parser.error(str(exc))
    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="tokkit-bench-unigram-") as tmp:
        commands = {name: python_cmd(code) + [tmp, str(args.vocab_size), str(args.threads), *files]
                    for name, code in CONTENDERS.items()}
        log(f"train unigram: vocab {args.vocab_size}, {args.threads} threads, {len(files)} files")
        results = measure_alternating(commands, repeat=args.repeat, log=log)
        fertility = tokens_per_word(tmp, args.heldout, args.heldout_lines)
    group = f"train unigram, vocab {args.vocab_size}, {args.threads} threads"
    remarks = {name: f"{fertility[name]:.4f} tokens per word held out" for name in fertility if name != "tokkit"}
    rows = group_rows("train", group, results, baseline="tokkit", work=mb, unit="MB/s", remarks=remarks,
                      extra={"algo": "unigram", "tokens_per_word": fertility})
    print(format_table(rows))
    if "tokkit" in fertility:
        print(f"tokkit: {fertility['tokkit']:.4f} tokens per word held out")
    if args.json:
        write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
