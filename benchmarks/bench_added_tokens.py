"""Gemma-3-sized added-token lists: tokkit against tokenizers on text full of near misses.

    python benchmarks/bench_added_tokens.py                  # 100 KB text, 7 rounds
    python benchmarks/bench_added_tokens.py --kb 1000 --rounds 5

The tokenizer.json is made as the Hub's Gemma 3 file is laid out: a byte-fallback BPE behind
Replace(" " -> "▁") and a Split on "▁" (merged with the previous piece), and 6,415 added tokens
(the turn and image markers, <unused0>... tags, runs of newlines, spaces and tabs, HTML tags), of
which tokkit and tokenizers each must find the leftmost longest in one pass. The text mixes words,
real added tokens and near misses (`<unused12` without its `>`, `<start_of_imag`, `</tabl`, runs one
longer than the longest run token). Both encode the same text in the same process, rounds
alternating; printed: the median seconds of each, MB/s, and tokkit's time over tokenizers' (the bar
is 2x); the ids are checked equal first.
"""
from __future__ import annotations

import argparse
import json
import random

N_ADDED = 6415
MARKERS = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "[@BOS@]", "<start_of_turn>", "<end_of_turn>",
           "<start_of_image>", "<end_of_image>", "<image_soft_token>"]
HTML = ["table", "tr", "td", "th", "thead", "tbody", "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "span", "b",
        "i", "u", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li", "a", "br", "hr", "img", "sub", "sup"]
WORDS = ["the", "model", "reads", "tokens", "école", "数据", "naïve", "<", ">", "unused", "image", "start", "of"]


def added_contents() -> list[str]:
    """6,415 distinct contents as Gemma 3 holds them: markers, runs of white space, HTML tags, <unusedN>."""
    runs = [ch * k for ch in ("\n", "\t", " ") for k in range(2, 32)]
    tags = [f"<{t}>" for t in HTML] + [f"</{t}>" for t in HTML]
    fixed = MARKERS + runs + tags
    return fixed + [f"<unused{i}>" for i in range(N_ADDED - len(fixed))]


def gemma_like_json() -> str:
    """The tokenizer.json (a str): a small byte-fallback BPE trained by tokenizers, Gemma 3's layout."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Replace(" ", "\u2581")
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("\u2581"), behavior="merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    rng = random.Random(0)
    lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(500)]
    bytes_ = [f"<0x{b:02X}>" for b in range(256)]
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>"] + bytes_))
    contents = added_contents()
    tok.add_special_tokens([AddedToken(c, normalized=False, special=True) for c in contents[:len(MARKERS)]])
    tok.add_tokens([AddedToken(c, normalized=False, special=False) for c in contents[len(MARKERS):]])
    return tok.to_str()


def near_miss_text(n_bytes: int, seed: int = 1) -> str:
    """Words, real added tokens and near misses of them, about n_bytes of UTF-8."""
    rng = random.Random(seed)
    contents = added_contents()
    misses = ["<unused", "<unused12", "<unused99999>", "<start_of_imag", "</tabl", "<tab le>", "<h7>", "<<b>",
              "\n" * 33, " " * 40, "\t" * 35, "<end_of_turn", "[@BOS@", "<ima ge_soft_token>"]
    parts, size = [], 0
    while size < n_bytes:
        r = rng.random()
        piece = rng.choice(contents) if r < 0.15 else rng.choice(misses) if r < 0.45 else rng.choice(WORDS) + " "
        parts.append(piece)
        size += len(piece.encode())
    return "".join(parts)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=100, help="KB of text encoded per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    # tokkit is imported here, not at the top: bench_real_shapes.py imports this module and times
    # tokkit's import in fresh processes
    from tokkit.bench.contenders import require, tokenizers_file
    from tokkit.bench.timing import medians, time_calls

    require("tokenizers")  # the ids reference and the contender
    import tempfile
    from pathlib import Path

    import tokkit
    text = near_miss_text(args.kb * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.json"
        path.write_text(gemma_like_json(), encoding="utf-8")
        hf = tokenizers_file(path)
        tok = tokkit.load(path)
    want = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text) == want, "ids differ from tokenizers"
    times = medians(time_calls({"tokkit": lambda: tok.encode(text),
                                "tokenizers": lambda: hf.encode(text, add_special_tokens=False)},
                               rounds=args.rounds, warmup=0))
    mb = len(text.encode()) / 1e6
    result = {"added_tokens": len(added_contents()), "bytes": len(text.encode()), "ids": len(want),
              "tokkit_s": times["tokkit"], "tokenizers_s": times["tokenizers"]}
    result["ratio"] = result["tokkit_s"] / result["tokenizers_s"]
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['added_tokens']:,} added tokens, {result['bytes']:,} bytes, {result['ids']:,} ids (equal), "
          f"median of {args.rounds} rounds")
    print(f"tokkit      {result['tokkit_s'] * 1e3:8.2f} ms  {mb / result['tokkit_s']:7.2f} MB/s")
    print(f"tokenizers  {result['tokenizers_s'] * 1e3:8.2f} ms  {mb / result['tokenizers_s']:7.2f} MB/s")
    print(f"tokkit / tokenizers: {result['ratio']:.2f}x (bar: 2x)")


if __name__ == "__main__":
    main()
