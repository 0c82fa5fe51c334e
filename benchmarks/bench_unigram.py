"""Unigram training side by side: tokkit vs sentencepiece vs tokenizers' UnigramTrainer.

    python benchmarks/bench_unigram.py          # en/wiki 000-019 + Tatoeba + Korean Wikipedia (~30 MB), vocab 16,000
    python benchmarks/bench_unigram.py --corpus some/dir --vocab-size 8000 --repeat 1

Each contender trains in its own process on the same files with the same vocabulary size and
thread count (whole process timed, imports and file writing included; peak RSS of the process
tree sampled every 20 ms, tokkit.bench.harness), alternating, one warm-up round then --repeat
rounds. Then each trained tokenizer encodes held-out lines (never in training): en/wiki 096.txt
and, for text in other scripts, the Japanese and Chinese books of the shared corpus. The table
gains tokens per word (words = whitespace runs, the same for everyone) and the share of tokens
that are the unknown piece, and the last lines say whether `tokenizers` reads tokkit's file with
the same ids on every held-out line.
"""
import argparse
import sys
import tempfile
from pathlib import Path

from tokkit.bench.contenders import installed, sentencepiece_model, skip_note, tokenizers_file
from tokkit.bench.corpus_slice import corpus_mb
from tokkit.bench.harness import measure_alternating, python_cmd
from tokkit.bench.report import format_table, group_rows, write_json
from tokkit.errors import TokkitError

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
WIKI = CORPUS / "en" / "wiki"
MULTI = CORPUS / "multilingual"
DEFAULT = ([str(WIKI / f"{k:03d}.txt") for k in range(20)] + sorted(map(str, MULTI.glob("tatoeba/tatoeba.*")))
           + sorted(map(str, MULTI.glob("ko_wikipedia/*.txt"))))
HELDOUT = {"en/wiki 096": [str(WIKI / "096.txt")],
           "ja + zh books": sorted(map(str, MULTI.glob("ja_aozora/*.txt"))) + sorted(map(str, MULTI.glob("zh_gutenberg/*.txt")))}
UNK = "<unk>"  # every contender's unknown piece (sentencepiece: unk_id 2, named <unk>)

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
    """name -> (encode(text) -> list of ids, unknown id), for each contender whose output exists (imported lazily)."""
    found = {}
    if Path(out, "tokkit", "tokenizer.json").exists():
        import tokkit

        tok = tokkit.load(Path(out, "tokkit"))
        found["tokkit"] = (tok.encode, tok.token_to_id(UNK))
    if Path(out, "spm.model").exists() and installed("sentencepiece"):
        sp = sentencepiece_model(Path(out, "spm.model"))
        found["sentencepiece"] = (sp.encode, sp.unk_id())
    if Path(out, "tokenizer.json").exists() and installed("tokenizers"):
        hf = tokenizers_file(out)
        found["tokenizers UnigramTrainer"] = (lambda text: hf.encode(text).ids, hf.token_to_id(UNK))
    return found


def heldout_lines(files: list[str], max_lines: int) -> list[str]:
    """The first `max_lines` non-empty lines of `files`, shared out evenly between them."""
    lines: list[str] = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            mine = [line.rstrip("\n") for line in f if line.strip()][:max(max_lines // len(files), 1)]
        lines += mine
    return lines


def quality(out: str, heldout: dict, max_lines: int) -> dict[str, dict[str, tuple[float, float]]]:
    """{contender: {held-out set: (tokens per whitespace word, share of tokens that are unknown)}}."""
    table: dict[str, dict[str, tuple[float, float]]] = {}
    sets = {name: heldout_lines(files, max_lines) for name, files in heldout.items() if files}
    for name, (encode, unk) in encoders(out).items():
        for set_name, lines in sets.items():
            ids = [i for line in lines for i in encode(line)]
            words = sum(len(line.split()) for line in lines)
            table.setdefault(name, {})[set_name] = (len(ids) / words, ids.count(unk) / max(len(ids), 1))
    return table


def interop(out: str, heldout: dict, max_lines: int) -> str:
    """Whether `tokenizers` reads tokkit's tokenizer.json with tokkit's ids on every held-out line."""
    import tokkit

    path = Path(out, "tokkit", "tokenizer.json")
    if not path.exists():
        return "no tokkit output"
    if not installed("tokenizers"):
        return skip_note("tokenizers")
    ours, theirs = tokkit.load(path.parent), tokenizers_file(path)
    lines = [line for files in heldout.values() if files for line in heldout_lines(files, max_lines)]
    differ = sum(ours.encode(line) != theirs.encode(line, add_special_tokens=False).ids for line in lines)
    return f"{len(lines) - differ:,} of {len(lines):,} held-out lines have the same ids in tokenizers"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=DEFAULT)
    parser.add_argument("--heldout", nargs="+", help="held-out files for tokens per word (not in --corpus); "
                        "default: en/wiki 096.txt, then the Japanese and Chinese books")
    parser.add_argument("--heldout-lines", type=int, default=5000, help="lines per held-out set")
    parser.add_argument("--vocab-size", type=int, default=16000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="comma-separated contenders to run (default: all): " + ", ".join(CONTENDERS))
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-run progress lines on stderr")
    args = parser.parse_args(argv)
    try:
        files, mb = corpus_mb(args.corpus)
    except TokkitError as exc:
        parser.error(str(exc))
    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="tokkit-bench-unigram-") as tmp:
        chosen = args.only.split(",") if args.only else list(CONTENDERS)
        if any(name not in CONTENDERS for name in chosen):
            parser.error(f"--only takes some of: {', '.join(CONTENDERS)}")
        commands = {name: python_cmd(CONTENDERS[name]) + [tmp, str(args.vocab_size), str(args.threads), *files]
                    for name in chosen}
        log(f"train unigram: vocab {args.vocab_size}, {args.threads} threads, {len(files)} files")
        results = measure_alternating(commands, repeat=args.repeat, log=log)
        heldout = {"held out": args.heldout} if args.heldout else HELDOUT
        scores = quality(tmp, heldout, args.heldout_lines)
        same_ids = interop(tmp, heldout, args.heldout_lines)
    group = f"train unigram, vocab {args.vocab_size}, {args.threads} threads"
    remarks = {name: "; ".join(f"{s}: {tpw:.4f} tokens/word, {unk:.3%} unk" for s, (tpw, unk) in sets.items())
               for name, sets in scores.items() if name != "tokkit"}
    rows = group_rows("train", group, results, baseline="tokkit", work=mb, unit="MB/s", remarks=remarks,
                      extra={"algo": "unigram", "quality": scores})
    print(format_table(rows))
    for name, sets in scores.items():
        ratios = ""
        if name != "tokkit" and "tokkit" in scores:
            ratios = " (tokkit / this: " + ", ".join(f"{scores['tokkit'][s][0] / tpw:.4f}x"
                                                    for s, (tpw, _) in sets.items()) + ")"
        print(f"{name}: " + "; ".join(f"{s} {tpw:.4f} tokens/word, {unk:.3%} unk" for s, (tpw, unk) in sets.items())
              + ratios)
    print(f"interop: {same_ids}")
    if args.json:
        write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
