"""tokkit.quality.unseen: the held-out split and the figures of the leave-languages-out check."""
import pytest

from tokkit.errors import TokkitError
from tokkit.quality.unseen import check_candidate, hold_out, measure, pooled, split_corpus
from tokkit.tokenizer import Tokenizer

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LANGS = [f"l{k:02d}" for k in range(20)]


def synthetic_corpus(greek: set) -> dict:
    """20 languages of 30 lines: Latin-letter words built from a per-language stem; `greek` ones in Greek letters."""
    texts = {}
    for k, lang in enumerate(LANGS):
        stem = "αβγδεζηθ"[k % 8] * 2 if lang in greek else "bcdfghjklmnp"[k % 12] + "a"
        texts[lang] = [f"{stem}ro {stem}ta{i % 5} {stem}ne" for i in range(30)]
    return texts


def test_hold_out_is_seeded_disjoint_and_covers_every_language():
    train, held = hold_out(reversed(LANGS), fraction=0.1, seed=7)
    assert len(held) == 2 and set(train) | set(held) == set(LANGS) and not set(train) & set(held)
    assert hold_out(LANGS, fraction=0.1, seed=7) == (train, held)  # the input order does not matter
    assert train == sorted(train) and held == sorted(held)
    choices = {tuple(hold_out(LANGS, fraction=0.1, seed=s)[1]) for s in range(10)}
    assert len(choices) > 1  # the seed chooses


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1])
def test_hold_out_refuses_a_fraction_outside_0_1(fraction):
    with pytest.raises(TokkitError, match="between 0 and 1"):
        hold_out(LANGS, fraction=fraction, seed=0)


def test_split_corpus_sides_are_disjoint_and_in_distribution_is_the_last_tenth():
    texts = {lang: [f"{lang} line {i}" for i in range(30)] for lang in LANGS}
    split = split_corpus(texts, fraction=0.1, seed=3)
    _, held = hold_out(LANGS, fraction=0.1, seed=3)
    assert sorted(split["unseen"]) == held
    assert set(split["train"]) == set(split["in_distribution"]) == set(LANGS) - set(held)
    for lang in split["train"]:
        assert split["train"][lang] == texts[lang][:27] and split["in_distribution"][lang] == texts[lang][27:]


def test_measure_counts_tokens_words_and_unknowns_by_hand():
    vocab = SPECIALS + ["low", "##er", "new", "##est"]
    tok = Tokenizer.from_trained(kind="wordpiece", vocab=vocab, merges=None, special_tokens=SPECIALS)
    # lower -> low ##er (2); newest -> new ##est (2); xyz -> [UNK] (1); "low," -> low , -> , is unknown (2)
    got = measure(tok, ["lower newest", "xyz low,"])
    assert (got["words"], got["tokens"], got["unk"]) == (4, 7, 2)
    assert got["tokens_per_word"] == 7 / 4 and got["unk_per_token"] == 2 / 7 and got["unk_per_word"] == 2 / 4
    both = pooled([got, measure(tok, ["new"])])
    assert (both["words"], both["tokens"], both["unk"]) == (5, 8, 2)


def test_a_language_in_an_unseen_script_is_all_unknown_and_seen_ones_are_not():
    _, held = hold_out(LANGS, fraction=0.1, seed=0)
    split = split_corpus(synthetic_corpus(greek={held[0]}), fraction=0.1, seed=0)
    got = check_candidate(split, "wordpiece", {"scoring": "frequency"}, vocab_size=120, workers=1)
    greek = got["unseen_languages"][held[0]]
    assert greek["unk"] == greek["tokens"] == greek["words"]  # one [UNK] per word, nothing else
    assert got["unseen_languages"][held[1]]["unk"] == 0
    assert got["in_distribution"]["unk"] == 0
    assert got["unseen"]["tokens"] == greek["tokens"] + got["unseen_languages"][held[1]]["tokens"]
