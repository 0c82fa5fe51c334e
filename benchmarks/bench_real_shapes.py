"""The pipeline shapes the Hub's big tokenizer.json files have: tokkit against tokenizers, one thread.

    RAYON_NUM_THREADS=1 python benchmarks/bench_real_shapes.py                 # every shape
    RAYON_NUM_THREADS=1 python benchmarks/bench_real_shapes.py --shape deepseek3 --rounds 5

The shapes, each file trained by tokenizers on ../shared/corpus and laid out as the Hub's are
(cached in ~/.cache/tokkit-bench/real-shapes):

  gemma3     Replace(" " -> "▁"), Split(" ", MergedWithPrevious) (transformers' GemmaTokenizer), a BPE
             with byte fallback and fuse_unk, and 6,415 added tokens as Gemma 3 ships them
  deepseek3  three Isolated Split regexes (\\p{N}{1,3}, a CJK run, DeepSeek V3's letter/punctuation
             pattern), then ByteLevel(use_regex=false), a byte-level BPE
  gemma2     Replace(" " -> "▁") and no pre-tokenizer, a BPE with byte fallback (SentencePiece BPE)
  llama3     a 128,000-token byte-level BPE behind the cl100k Split, ignore_merges, 256 special tokens
  neox       NFC + ByteLevel, added tokens of space runs with normalized: true (GPT-NeoX-20B, OLMo 1)
  qwen3      NFC + Split(Qwen2 pattern) + ByteLevel(use_regex=false), chat specials (Qwen2, Qwen3)
  olmo2      Split(cl100k pattern, Removed, invert) + ByteLevel(use_regex=false) (OLMo 2)
  gpt4o      Split(o200k pattern, Isolated) + ByteLevel(use_regex=false), as converted files have it
  mpnet      BERT WordPiece with <mask> lstrip: true (MPNet)
  nfkc       NFKC + ByteLevel, a 65k BPE
  tts        Whitespace + a small BPE with an unknown token (TTS vocabularies)
  minilm     BERT WordPiece, plain (all-MiniLM-L6-v2)

Text: multilingual lines (Japanese, Korean, Chinese, Tatoeba's languages) and English Wikipedia
lines. The ids of both libraries are checked equal on every line first (outside the timers). Then:

  warm   one process, both encode the same lines (encode_batch, one thread), rounds alternating;
         each side gives the ids as Python lists, what a data pipeline reads (tokenizers' encode_batch
         returns Encodings whose ids become Python ints only when `.ids` is read, so it is read);
         tokenizers' time with the Encodings left unread is printed beside it;
  cold   fresh processes, alternating: load the file, then one pass over lines never seen.

Printed per shape: medians, tokkit's time over tokenizers' (the target: at most 1.0 for both), and for
llama3 tokkit's load + first pass over tokenizers' load alone (the target: at most 1.0).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_added_tokens import MARKERS, added_contents  # the Gemma 3 added-token list

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CACHE = Path.home() / ".cache" / "tokkit-bench" / "real-shapes"
DEEPSEEK_SPLITS = (
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    ("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
     " ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"),
)


def _named(name: str) -> str:
    """A split pattern tokkit names, imported when a file is trained (a timed child imports tokkit
    itself, so this module imports nothing of it first)."""
    from tokkit._native.patterns import NAMED
    return NAMED[name]

VOCAB = {"gemma3": 64_000, "deepseek3": 64_000, "gemma2": 64_000, "llama3": 128_000, "neox": 50_000,
         "qwen3": 64_000, "olmo2": 100_000, "gpt4o": 128_000, "mpnet": 30_000, "nfkc": 65_000, "tts": 1_000,
         "minilm": 30_000}
BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]


# ------------------------------------------------------------------------------ text
def _lines(path: Path, limit: int) -> list[str]:
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip():
                out.append(line)
                if len(out) >= limit:
                    break
    return out


def multilingual_files() -> list[Path]:
    """The multilingual folder's files, English halves of Tatoeba's pairs left out."""
    root = CORPUS / "multilingual"
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in (".md", ".eng"))


def training_lines(per_file: int = 4000, wiki_files: int = 12) -> list[str]:
    """Lines the four files are trained on: English Wikipedia and books, and every multilingual file."""
    lines = []
    for path in sorted((CORPUS / "en" / "wiki").iterdir())[:wiki_files]:
        lines += _lines(path, 10**9)
    for path in sorted((CORPUS / "en" / "pg").iterdir())[:40]:
        lines += _lines(path, 2000)
    for path in multilingual_files():
        lines += _lines(path, per_file)
    return lines


def bench_lines(seed: int, n_multi: int = 1500, n_wiki: int = 1500) -> list[str]:
    """Multilingual and English Wikipedia lines drawn with `seed` from files the training did not read."""
    rng = random.Random(seed)
    multi = [line for p in multilingual_files() for line in _lines(p, 10**9)[4000:]]
    wiki = [line for p in sorted((CORPUS / "en" / "wiki").iterdir())[-4:] for line in _lines(p, 10**9)]
    return rng.sample(multi, min(n_multi, len(multi))) + rng.sample(wiki, min(n_wiki, len(wiki)))


# ------------------------------------------------------------------------------ the files
def _train(tok, vocab_size: int, special: list[str], lines: list[str], **options) -> None:
    from tokenizers import trainers
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, show_progress=False, **options)
    tok.train_from_iterator(lines, trainer)


def _sentencepiece_bpe(vocab_size: int, lines: list[str]):
    """A byte-fallback BPE trained as SentencePiece's: words start at U+2581, never merged across one."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
    tok = Tokenizer(models.BPE(byte_fallback=True, fuse_unk=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Replace(" ", "\u2581")
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("\u2581"), behavior="merged_with_next")
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    _train(tok, vocab_size, ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"] + BYTE_TOKENS, lines,
           limit_alphabet=4000)
    return tok


def gemma3(vocab_size: int, lines: list[str]) -> str:
    """Gemma 3's layout: Split(" ") after the normalizer (transformers' GemmaTokenizer), 6,415 added tokens."""
    from tokenizers import AddedToken, pre_tokenizers
    tok = _sentencepiece_bpe(vocab_size, lines)
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous", invert=False)
    contents = added_contents()
    tok.add_special_tokens([AddedToken(c, normalized=False, special=True) for c in MARKERS])
    tok.add_tokens([AddedToken(c, normalized=False, special=False) for c in contents[len(MARKERS):]])
    return tok.to_str()


def gemma2(vocab_size: int, lines: list[str]) -> str:
    """Gemma 1/2's layout: no pre-tokenizer, so each text is one piece for the BPE."""
    tok = _sentencepiece_bpe(vocab_size, lines)
    tok.pre_tokenizer = None
    return tok.to_str()


def _byte_level(vocab_size: int, splits: tuple[str, ...], lines: list[str], special: list[str]):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(p), behavior="isolated") for p in splits]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    _train(tok, vocab_size, special, lines, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    return tok


def deepseek3(vocab_size: int, lines: list[str]) -> str:
    """DeepSeek V3's layout: three Split regexes, then ByteLevel without its regex."""
    return _byte_level(vocab_size, DEEPSEEK_SPLITS, lines, ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"]).to_str()


def llama3(vocab_size: int, lines: list[str]) -> str:
    """Llama 3's layout: the cl100k Split, ByteLevel without its regex, ignore_merges, 256 special tokens."""
    tok = _byte_level(vocab_size, (_named("cl100k"),), lines, [])
    data = json.loads(tok.to_str())
    data["model"]["ignore_merges"] = True
    specials = ["<|begin_of_text|>", "<|end_of_text|>"] + [f"<|reserved_special_token_{i}|>" for i in range(254)]
    start = len(data["model"]["vocab"])
    data["added_tokens"] = [{"id": start + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True} for i, c in enumerate(specials)]
    return json.dumps(data, ensure_ascii=False)


def neox(vocab_size: int, lines: list[str]) -> str:
    """GPT-NeoX-20B's layout: NFC, ByteLevel with its regex, runs of 2 to 24 spaces added with normalized: true."""
    from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers, Tokenizer
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    _train(tok, vocab_size, ["<|endoftext|>", "<|padding|>"], lines, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.add_tokens([AddedToken(" " * n, normalized=True, special=False) for n in range(24, 1, -1)])
    return tok.to_str()


def qwen3(vocab_size: int, lines: list[str]) -> str:
    """Qwen2/3's layout: NFC, the Qwen2 Split (digits one by one), ByteLevel without its regex."""
    from tokenizers import normalizers
    tok = _byte_level(vocab_size, (_named("qwen2"),), lines, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    tok.normalizer = normalizers.NFC()
    return tok.to_str()


def olmo2(vocab_size: int, lines: list[str]) -> str:
    """OLMo 2's layout: the cl100k pattern as Split(Removed, invert: true), then ByteLevel without its regex."""
    from tokenizers import Regex, pre_tokenizers
    tok = _byte_level(vocab_size, (_named("cl100k"),), lines, ["<|endoftext|>", "<|pad|>"])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(_named("cl100k")), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    return tok.to_str()


def gpt4o(vocab_size: int, lines: list[str]) -> str:
    """GPT-4o as converted files have it: the o200k Split, ByteLevel without its regex, ignore_merges."""
    tok = _byte_level(vocab_size, (_named("o200k"),), lines, ["<|endoftext|>", "<|endofprompt|>"])
    data = json.loads(tok.to_str())
    data["model"]["ignore_merges"] = True
    return json.dumps(data, ensure_ascii=False)


def _wordpiece(vocab_size: int, lines: list[str], special: list[str]):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    tok = Tokenizer(models.WordPiece(unk_token=special[special.index("[UNK]" if "[UNK]" in special else "<unk>")]))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=special,
                                                             show_progress=False))
    return tok


def mpnet(vocab_size: int, lines: list[str]) -> str:
    """MPNet's layout: BERT WordPiece whose <mask> strips the spaces before it (lstrip: true)."""
    from tokenizers import AddedToken
    tok = _wordpiece(vocab_size, lines, ["<s>", "<pad>", "</s>", "<unk>"])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)])
    return tok.to_str()


def minilm(vocab_size: int, lines: list[str]) -> str:
    """all-MiniLM-L6-v2's layout: plain BERT WordPiece (uncased)."""
    return _wordpiece(vocab_size, lines, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]).to_str()


def nfkc(vocab_size: int, lines: list[str]) -> str:
    """NFKC, then ByteLevel with its regex, a 65k BPE."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    _train(tok, vocab_size, ["<|endoftext|>"], lines, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    return tok.to_str()


def tts(vocab_size: int, lines: list[str]) -> str:
    """A small TTS vocabulary: Whitespace pre-tokenizer, a BPE with an unknown token."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    _train(tok, vocab_size, ["[STOP]", "[UNK]", "[SPACE]"], lines, limit_alphabet=200)
    return tok.to_str()


SHAPES = {"gemma3": gemma3, "deepseek3": deepseek3, "gemma2": gemma2, "llama3": llama3, "neox": neox,
          "qwen3": qwen3, "olmo2": olmo2, "gpt4o": gpt4o, "mpnet": mpnet, "nfkc": nfkc, "tts": tts, "minilm": minilm}


def shape_file(name: str, vocab_size: int) -> Path:
    """The cached tokenizer.json of a shape, trained on first use."""
    path = CACHE / f"{name}-{vocab_size}.json"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        from tokkit.bench.timing import timed_once  # not at the top: see _named

        seconds, text = timed_once(lambda: SHAPES[name](vocab_size, training_lines()))
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        print(f"# trained {path} in {seconds:.0f} s", file=sys.stderr)
    return path


# ------------------------------------------------------------------------------ timing
def check_equal(name: str, path: Path, lines: list[str]) -> None:
    """Both libraries' ids on every line, or an AssertionError naming the first line that differs."""
    import tokkit
    from tokkit.bench.contenders import tokenizers_file
    hf, tok = tokenizers_file(path), tokkit.load(path)
    want = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    got = tok.encode_batch(lines, num_threads=1)
    for i, (a, b) in enumerate(zip(got, want)):
        assert a == b, f"{name}: ids differ from tokenizers on line {i}: {lines[i][:80]!r}"


def warm(path: Path, lines: list[str], rounds: int) -> tuple[float, float, float]:
    """Median seconds of one encode_batch of `lines` on one thread, rounds alternating: (tokkit, tokenizers
    with the ids read, tokenizers with its Encodings unread)."""
    import tokkit
    from tokkit.bench.contenders import tokenizers_file
    from tokkit.bench.timing import medians, time_calls
    hf, tok = tokenizers_file(path), tokkit.load(path)
    tok.encode_batch(lines[:10], num_threads=1)  # build the encoder before the rounds
    times = medians(time_calls({"tokkit": lambda: tok.encode_batch(lines, num_threads=1),
                                "tokenizers": lambda: [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)],
                                "unread": lambda: hf.encode_batch(lines, add_special_tokens=False)},
                               rounds=rounds, warmup=0))
    return times["tokkit"], times["tokenizers"], times["unread"]


def child(library: str, path: str, lines_file: str) -> None:
    """In a fresh process: the seconds to import the library, to load `path` and to encode the lines
    once (one JSON line)."""
    lines = json.loads(Path(lines_file).read_text(encoding="utf-8"))
    if library == "tokkit":
        t_import = time.perf_counter()
        import tokkit
        t0 = time.perf_counter()
        tok = tokkit.load(path)
        t1 = time.perf_counter()
        tok.encode_batch(lines, num_threads=1)
    else:
        t_import = time.perf_counter()
        from tokenizers import Tokenizer
        t0 = time.perf_counter()
        tok = Tokenizer.from_file(path)
        t1 = time.perf_counter()
        [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]
    t2 = time.perf_counter()
    print(json.dumps({"import_s": t0 - t_import, "load_s": t1 - t0, "first_s": t2 - t1}))


def cold(path: Path, lines_file: Path, rounds: int) -> dict:
    """Medians of load and of the first pass in fresh processes, tokkit and tokenizers alternating."""
    from tokkit.bench.timing import median, turns
    runs = {"tokkit": [], "tokenizers": []}
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    for _, library, _ in turns(runs, rounds=rounds, warmup=0):
        out = subprocess.run([sys.executable, __file__, "--child", library, str(path), str(lines_file)],
                             env=env, check=True, capture_output=True, text=True).stdout
        runs[library].append(json.loads(out.strip().splitlines()[-1]))
    return {lib: {k: median(r[k] for r in rs) for k in ("import_s", "load_s", "first_s")} for lib, rs in runs.items()}


def report(name: str, n_lines: int, mb: float, w: tuple[float, float, float], c: dict) -> dict:
    """Print one shape's figures; return its row of the summary (speed: tokenizers' time over tokkit's)."""
    ours, theirs = c["tokkit"], c["tokenizers"]
    cold_ours, cold_theirs = ours["load_s"] + ours["first_s"], theirs["load_s"] + theirs["first_s"]
    print(f"{name}: {n_lines:,} lines, {mb:.2f} MB")
    print(f"  warm  tokkit {w[0] * 1e3:8.1f} ms  tokenizers {w[1] * 1e3:8.1f} ms  ratio {w[0] / w[1]:.2f}x"
          f"  (target <= 1.00; tokenizers with its Encodings unread {w[2] * 1e3:.1f} ms, {w[0] / w[2]:.2f}x)")
    print(f"  cold  tokkit load {ours['load_s'] * 1e3:7.1f} + first {ours['first_s'] * 1e3:7.1f} ms   tokenizers "
          f"load {theirs['load_s'] * 1e3:7.1f} + first {theirs['first_s'] * 1e3:7.1f} ms  ratio "
          f"{cold_ours / cold_theirs:.2f}x  (target <= 1.00)")
    if name == "llama3":
        print(f"  tokkit load + first pass over tokenizers' load alone: {cold_ours / theirs['load_s']:.2f}x"
              "  (target <= 1.00)")
    return {"shape": name, "warm": w[1] / w[0], "unread": w[2] / w[0], "cold": cold_theirs / cold_ours}


def summary(rows: list[dict], version: str) -> str:
    """The markdown table of every shape: tokkit's speed as a multiple of tokenizers' (>= 1.0 is the target)."""
    out = [f"| shape | warm, x tokenizers {version} | (its Encodings unread) | load + first batch, x tokenizers"
           f" {version} |", "|---|---|---|---|"]
    out += [f"| {r['shape']} | {r['warm']:.2f}x | {r['unread']:.2f}x | {r['cold']:.2f}x |" for r in rows]
    behind = [r["shape"] for r in rows if r["warm"] < 1.0 or r["cold"] < 1.0]
    return "\n".join(out + ["", f"behind on {len(behind)} of {len(rows)}: {', '.join(behind) or 'none'}"])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=list(SHAPES), action="append", help="(repeatable; default: all)")
    parser.add_argument("--rounds", type=int, default=7, help="warm rounds")
    parser.add_argument("--cold-rounds", type=int, default=5, help="fresh processes per library")
    parser.add_argument("--vocab", type=int, help="the vocabulary size of every shape (default: per shape)")
    parser.add_argument("--child", nargs=3, metavar=("LIBRARY", "FILE", "LINES"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return
    if os.environ.get("RAYON_NUM_THREADS") != "1":
        parser.error("run with RAYON_NUM_THREADS=1 (tokenizers on one thread)")
    from tokkit.bench.contenders import require
    require("tokenizers")  # it trains the shapes and is the contender
    lines, unseen = bench_lines(seed=1), bench_lines(seed=2)
    CACHE.mkdir(parents=True, exist_ok=True)
    unseen_file = CACHE / "unseen-lines.json"
    unseen_file.write_text(json.dumps(unseen, ensure_ascii=False), encoding="utf-8")
    mb = sum(len(s.encode()) for s in lines) / 1e6
    rows = []
    for name in args.shape or SHAPES:
        path = shape_file(name, args.vocab or VOCAB[name])
        check_equal(name, path, lines)
        check_equal(name, path, unseen)
        rows.append(report(name, len(lines), mb, warm(path, lines, args.rounds),
                           cold(path, unseen_file, args.cold_rounds)))
    print(summary(rows, importlib.metadata.version("tokenizers")))


if __name__ == "__main__":
    main()
