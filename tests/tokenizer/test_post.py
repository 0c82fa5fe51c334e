"""Post-processors against tokenizers: the objects written back, how an object is read, and the rows made.

The rows a Template describes (special tokens around the texts, each part's type id) are checked
against what tokenizers' encoder makes with the same post_processor on a tiny vocabulary.
"""
import json

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, processors

from tokkit.errors import TokkitError
from tokkit.tokenizer.post import (BertProcessing, PostByteLevel, PostSequence, RobertaProcessing, TemplateProcessing,
                                   post_from_json, post_template, post_to_json)

VOCAB = {tok: i for i, tok in enumerate(["<unk>", "<s>", "</s>", "[CLS]", "[SEP]", "<sep>", "<cls>",
                                         "<|begin_of_text|>", "hello", "world", "Ġhello", "Ġworld", "a", "b"])}
A, B = "hello world", "a b"


def template_processing(single, pair, specials):
    return processors.TemplateProcessing(single=single, pair=pair, special_tokens=[(t, VOCAB[t]) for t in specials])


BUILT = {  # as transformers' converters write them
    "xlm-r": template_processing("<s> $A </s>", "<s> $A </s> </s> $B </s>", ["<s>", "</s>"]),
    "t5": template_processing(["$A", "</s>"], ["$A", "</s>", "$B", "</s>"], ["</s>"]),
    "albert": template_processing("[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1", ["[CLS]", "[SEP]"]),
    "llama-2": template_processing(["<s>", "$A"], ["<s>", "$A", "<s>", "$B"], ["<s>"]),
    "xlnet": template_processing("$A:0 <sep>:0 <cls>:2", "$A:0 <sep>:0 $B:1 <sep>:1 <cls>:2", ["<sep>", "<cls>"]),
    "unused-entry": template_processing("</s> $A", "</s> $A </s> </s> $B", ["<s>", "</s>"]),
    # converted from sentencepiece models trained with their default ids: the template's own ids, for a
    # token the vocabulary holds at another id and for one it lacks
    "albert-default-ids": processors.TemplateProcessing(single="[CLS]:0 $A:0 [SEP]:0",
                                                        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
                                                        special_tokens=[("[CLS]", 1), ("[SEP]", 2)]),
    "t5-other-id": processors.TemplateProcessing(single=["$A", "</s>"], pair=["$A", "</s>", "$B", "</s>"],
                                                 special_tokens=[("</s>", 11)]),
    "missing-token": processors.TemplateProcessing(single="<eos> $A", pair="<eos> $A <eos> $B:1",
                                                   special_tokens=[("<eos>", 13)]),
    "bert": processors.BertProcessing(("[SEP]", 4), ("[CLS]", 3)),
    "bert-own-ids": processors.BertProcessing(("[SEP]", 9), ("[NOPE]", 3)),  # tokenizers writes these ids
    "roberta": processors.RobertaProcessing(("</s>", 2), ("<s>", 1)),
    "roberta-flags": processors.RobertaProcessing(("</s>", 2), ("<s>", 1), trim_offsets=False, add_prefix_space=False),
    "bytelevel": processors.ByteLevel(trim_offsets=True),
    "bytelevel-no-regex": processors.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    "llama-3": processors.Sequence([processors.ByteLevel(trim_offsets=False),
                                    template_processing("<|begin_of_text|> $A",
                                                        "<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
                                                        ["<|begin_of_text|>"])]),
    "sequence-roberta": processors.Sequence([processors.RobertaProcessing(("</s>", 2), ("<s>", 1))]),
    "sequence-nested": processors.Sequence([processors.Sequence([processors.ByteLevel(trim_offsets=True)]),
                                            processors.BertProcessing(("[SEP]", 4), ("[CLS]", 3))]),
    "sequence-empty": processors.Sequence([]),
}


def read_post(obj: dict | None, where: str):
    """The Template of a post_processor object."""
    return post_template(post_from_json(obj, where), where)


def oracle(post: dict | None) -> Tokenizer:
    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    data = json.loads(tok.to_str())
    data["post_processor"] = post
    return Tokenizer.from_str(json.dumps(data))


def written(post) -> dict:
    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    tok.post_processor = post
    return json.loads(tok.to_str())["post_processor"]


def rows(template, texts: list[str]) -> tuple[list[int], list[int]]:
    """The ids and type ids the Template gives the texts (split on spaces, one token a word)."""
    ids, types = [], []
    for name, type_id in template.parts(pair=len(texts) == 2):
        words = texts[name == "$B"].split() if name in ("$A", "$B") else [name]
        ids += [VOCAB[w] for w in words] if name in ("$A", "$B") else [template.id_of(name)]
        types += [type_id] * len(words)
    return ids, types


@pytest.mark.parametrize("name", BUILT)
def test_written_by_tokenizers_round_trips(name):
    obj = written(BUILT[name])
    assert json.dumps(post_to_json(post_from_json(obj, "t.json"))) == json.dumps(obj)


@pytest.mark.parametrize("name", BUILT)
def test_template_rows_match_tokenizers(name):
    obj = written(BUILT[name])
    template = read_post(obj, "t.json")
    tok = oracle(obj)
    for texts in ([A], [A, B]):
        enc = tok.encode(*texts)
        assert (enc.ids, enc.type_ids) == rows(template, texts), texts


def test_llama3_sequence_reads_into_one_template_and_back():
    obj = written(BUILT["llama-3"])
    template = read_post(obj, "t.json")
    assert (template.trim_offsets, template.add_prefix_space) == (False, True)
    assert template.pair == (("<|begin_of_text|>", 0), ("$A", 0), ("<|begin_of_text|>", 1), ("$B", 1))
    assert post_to_json(post_from_json(obj, "t.json")) == obj  # the component writes Llama 3's shape back


def test_unused_special_tokens_entries_are_kept():
    obj = written(BUILT["unused-entry"])
    post = post_from_json(obj, "t.json")
    assert [key for key, *_ in post.special_tokens] == ["</s>", "<s>"]
    assert post.template().tokens() == ["</s>"]


@pytest.mark.parametrize("obj,kind", [
    ({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]}, BertProcessing),
    ({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1], "trim_offsets": "no",
      "add_prefix_space": False}, BertProcessing),
    ({"type": "BertProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1], "trim_offsets": False,
      "add_prefix_space": False}, RobertaProcessing),
    ({"type": "Whatever", "sep": ["</s>", 2], "cls": ["<s>", 1]}, BertProcessing),
    ({"single": [{"Sequence": {"id": "A", "type_id": 0}}], "special_tokens": {},
      "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}]}, TemplateProcessing),
])
def test_objects_are_read_by_their_fields_as_tokenizers_reads_them(obj, kind):
    post = post_from_json(obj, "t.json")
    assert isinstance(post, kind)
    assert post_to_json(post) == json.loads(oracle(obj).to_str())["post_processor"]


@pytest.mark.parametrize("type_id", [2 ** 32, -1, 1.0, True])
def test_type_ids_outside_u32_are_one_error(type_id):
    obj = written(BUILT["albert"])
    obj["pair"][3]["Sequence"]["type_id"] = type_id
    with pytest.raises(TokkitError, match="type_id") as err:
        read_post(obj, "t.json")
    assert str(err.value).startswith("t.json: post_processor") and "\n" not in str(err.value)
    if type_id == 2 ** 32:
        with pytest.raises(Exception):
            oracle(obj)


def test_the_largest_type_id_is_kept():
    obj = written(BUILT["albert"])
    obj["pair"][3]["Sequence"]["type_id"] = 2 ** 32 - 1
    assert read_post(obj, "t.json").pair[3] == ("$B", 2 ** 32 - 1)
    assert post_to_json(post_from_json(obj, "t.json")) == json.loads(oracle(obj).to_str())["post_processor"]


def _sequence(*items) -> dict:
    return {"type": "Sequence", "processors": [written(BUILT[i]) for i in items]}


BAD = [
    (_sequence("xlm-r", "bert"), "at most one"),
    (_sequence("bytelevel", "roberta"), "at most one"),
    ({"type": "Sequence", "processors": [written(BUILT["xlm-r"]), written(BUILT["bytelevel"])]}, "must come before"),
    ({"type": "Sequence", "processors": [None]}, "processors[0]"),
    ({"type": "Sequence", "processors": {}}, "processors"),
    ({"type": "ByteLevel", "add_prefix_space": True}, "trim_offsets"),
    ({"type": "BertProcessing", "sep": ["[SEP]", 4]}, "'cls' is missing"),
    ({"type": "CharDelimiter"}, "not supported"),
    ({**written(BUILT["t5"]), "single": [{"Sequence": {"id": "B", "type_id": 0}}]}, "'single' must hold $A"),
    ({**written(BUILT["t5"]), "single": [{"Sequence": {"id": "C", "type_id": 0}}]}, "\"A\" or \"B\""),
    ({**written(BUILT["t5"]), "special_tokens": {"</s>": {"id": "</s>", "ids": [2, 3], "tokens": ["</s>"]}}},
     "special_tokens['</s>'] must hold one token"),
    ({**written(BUILT["t5"]), "special_tokens": {}}, "special_tokens['</s>']"),
    ({**written(BUILT["t5"]), "special_tokens": {"</s>": {"id": "</s>", "ids": ["2"], "tokens": ["</s>"]}}}, "ids"),
    ({**written(BUILT["t5"]), "pair": "$A $B"}, "'pair' must be a list"),
]


@pytest.mark.parametrize("obj,words", BAD)
def test_bad_json_is_one_error(obj, words):
    with pytest.raises(TokkitError) as err:
        read_post(obj, "t.json")
    assert words in str(err.value) and str(err.value).startswith("t.json: ") and "\n" not in str(err.value)


def test_components_are_plain_values():
    seq = post_from_json(written(BUILT["llama-3"]), "t.json")
    assert isinstance(seq, PostSequence) and isinstance(seq.processors[0], PostByteLevel)
    assert seq == post_from_json(post_to_json(seq), "t.json") and hash(seq) == hash(post_from_json(seq.to_json(), "t"))
    assert post_template(None, "t.json") is None and post_to_json(None) is None and read_post(None, "t") is None
