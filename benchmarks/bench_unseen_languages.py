"""Vocabularies on languages they were not trained on: a leave-languages-out check on Tatoeba.

    python benchmarks/bench_unseen_languages.py --workers 1 --json benchmarks/results/unseen/unseen.json
    python benchmarks/bench_unseen_languages.py --vocab-size 16000 --seed 2 --candidates wordpiece-frequency unigram

The corpus is the Tatoeba test set (../shared/corpus/multilingual/tatoeba: 112 languages, up to
1,000 sentences each, every one beside its English translation). Its non-English sides are the
languages; a seeded tenth of them (--seed, --fraction; listed in the output) is held out whole.
Every other language gives the first nine tenths of its lines to training and the last tenth to
the in-distribution measure. The English sides are left out by default (--english adds those of
the training languages to training): 81,000 lines of English beside ~1,000 per language would
make this a check of an English vocabulary.

Each candidate trains once (`tokkit.train(texts=...)`, default options apart from the vocabulary
size and the candidate's own) and is measured with `tokkit stats`'s definitions: tokens per word
(words = whitespace runs), [UNK] per token and [UNK] per word, pooled over the held-out languages
("unseen") and over the held-out tenths of the training languages ("in-distribution"). Byte-level
BPE has no [UNK] by construction and is the reference for tokens per word.

The goal checked: the default WordPiece scoring's unseen tokens per word within 3% of frequency
scoring's, and its unseen [UNK] rates (per token and per word) no higher. The default is frequency,
so it holds by definition; the likelihood row shows what the original WordPiece criterion gives.
"""
import argparse
import sys
import time
from pathlib import Path

from tokkit.bench.report import write_json
from tokkit.quality.compare import CANDIDATES
from tokkit.quality.unseen import check_candidate, read_lines, split_corpus, tatoeba_languages

TATOEBA = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "multilingual" / "tatoeba"
# "wordpiece-default" passes no scoring, so it follows whatever the trainer's default is.
NAMES = {"wordpiece-default": ("wordpiece", {}), "wordpiece-likelihood": ("wordpiece", {"scoring": "likelihood"}),
         "wordpiece-frequency": ("wordpiece", {"scoring": "frequency"}), "wordpiece-pmi": ("wordpiece", {"scoring": "pmi"}),
         "unigram": ("unigram", {}), "bytelevel": ("bytelevel", {})}
assert all(CANDIDATES[n][1:] == NAMES[n] for n in NAMES if n in CANDIDATES)


def pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.3f}%"


def table(results: dict) -> str:
    """One line per candidate: tokens per word and [UNK] rates, in-distribution and unseen."""
    head = ("| candidate | in-dist tokens/word | in-dist [UNK]/token | unseen tokens/word | unseen [UNK]/token "
            "| unseen [UNK]/word | unseen / in-dist tokens/word |")
    out = [head, "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        i, u = r["in_distribution"], r["unseen"]
        out.append(f"| {name} | {i['tokens_per_word']:.3f} | {pct(i['unk_per_token'])} | {u['tokens_per_word']:.3f} "
                   f"| {pct(u['unk_per_token'])} | {pct(u['unk_per_word'])} "
                   f"| {u['tokens_per_word'] / i['tokens_per_word']:.3f}x |")
    return "\n".join(out)


def language_table(results: dict) -> str:
    """Per held-out language: tokens per word / [UNK] per word of each candidate."""
    names = list(results)
    langs = list(next(iter(results.values()))["unseen_languages"])
    out = ["| language | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for lang in langs:
        cells = [f"{results[n]['unseen_languages'][lang]['tokens_per_word']:.2f} / "
                 f"{pct(results[n]['unseen_languages'][lang]['unk_per_word'])}" for n in names]
        out.append(f"| {lang} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def verdict(results: dict) -> list[str]:
    """The 3% goal: default WordPiece against frequency scoring on the unseen languages."""
    d, f = results.get("wordpiece-default"), results.get("wordpiece-frequency")
    if not (d and f):
        return []
    lines = []
    for side in ("unseen", "in_distribution"):
        ratio = d[side]["tokens_per_word"] / f[side]["tokens_per_word"]
        unk_ok = all(d[side][k] <= f[side][k] for k in ("unk_per_token", "unk_per_word"))
        ok = ratio <= 1.03 and unk_ok
        lines.append(f"{side}: default tokens/word {ratio:.4f}x frequency's (goal <= 1.03x on unseen), [UNK] "
                     f"per token {pct(d[side]['unk_per_token'])} vs {pct(f[side]['unk_per_token'])}, per word "
                     f"{pct(d[side]['unk_per_word'])} vs {pct(f[side]['unk_per_word'])} (no higher): "
                     + ("met" if ok else "MISSED") + ("" if side == "unseen" else " (for reference)"))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=TATOEBA, help="the Tatoeba test-set folder")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=0, help="seed of the held-out languages' choice")
    parser.add_argument("--fraction", type=float, default=0.1, help="share of the languages held out")
    parser.add_argument("--english", action="store_true", help="also train on the training languages' English sides")
    parser.add_argument("--candidates", nargs="+", default=list(NAMES), choices=list(NAMES))
    parser.add_argument("--workers", type=int, default=None, help="counting threads (default: all cores)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args(argv)

    files = tatoeba_languages(args.corpus)
    split = split_corpus({lang: read_lines(p) for lang, p in files.items()}, fraction=args.fraction, seed=args.seed)
    english = [line for lang in sorted(split["train"])
               for line in read_lines(files[lang].with_suffix(".eng"))] if args.english else []
    print(f"held out ({len(split['unseen'])} of {len(files)}): {' '.join(split['unseen'])}", flush=True)
    print(f"training: {len(split['train'])} languages, {sum(map(len, split['train'].values())):,} lines"
          f"{f' + {len(english):,} English lines' if english else ''}", flush=True)
    results = {}
    for name in args.candidates:
        algo, options = NAMES[name]
        t = time.perf_counter()
        results[name] = check_candidate(split, algo, options, vocab_size=args.vocab_size, extra_train=english,
                                        workers=args.workers)
        print(f"{name}: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    print(table(results))
    print()
    print(language_table(results))
    for line in verdict(results):
        print(line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(str(args.json), {"command": " ".join(sys.argv), "vocab_size": args.vocab_size, "seed": args.seed,
                                    "fraction": args.fraction, "english": args.english,
                                    "held_out": list(split["unseen"]), "training_languages": list(split["train"]),
                                    "results": results})


if __name__ == "__main__":
    main()
