"""A small WordPiece tokenizer and a Wikipedia-like corpus for the pretraining tests."""
import numpy as np

import tokkit

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_tokenizer(lines, vocab_size=400, specials=SPECIALS):
    return tokkit.train(texts=lines, algo="wordpiece", vocab_size=vocab_size, special_tokens=specials,
                        default_specials=False)


WORDS = ("river stone garden window paper candle silver forest engine mirror harbor lantern meadow "
         "violin thunder pepper canvas marble orchard falcon glacier tunnel velvet anchor cactus "
         "quartz walnut saddle beacon ribbon").split()


def write_corpus(folder, docs=60, seed=0, name="corpus.txt"):
    """Wikipedia-like text: a title line, a blank line, then paragraphs of sentences."""
    rng = np.random.default_rng(seed)
    out = []
    for d in range(docs):
        out.append(f"Title {d} {WORDS[d % len(WORDS)]}")
        out.append("")
        for _ in range(int(rng.integers(1, 4))):
            sentences = [" ".join(rng.choice(WORDS, size=int(rng.integers(4, 14)))).capitalize() + "."
                         for _ in range(int(rng.integers(2, 8)))]
            out.append(" ".join(sentences))
        out.append("")
    path = folder / name
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
