"""tokenizer.json variants from the Hub (RoBERTa, GPT-2, other templates, decoder options) load in
tokkit and give `tokenizers`' ids, type ids, offsets and decoded text; saving keeps them."""
import json

import pytest

import tokkit
from tokkit.errors import TokkitError

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

LINES = ["Hello world, hello there!", "The quick brown fox jumps over the lazy dog.",
         "  spaces   and\ttabs\nnewline", "héllo wörld 123 don't it's", "I'm here , they're fine ."]
TEXTS = ["Hello world", " Hello  world ", "hi<mask>there <mask> x", "<s>a", "", " ", "\tx\ny", "héllo   ",
         "a<mask><mask> b </s>", "don't , it's .", "<mask>"]
PAIRS = [("Hello", "world there"), (" x", "y "), ("", "z"), ("a<mask>b", " <s>")]
BYTE_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def byte_level(add_prefix_space: bool, post) -> "tokenizers.Tokenizer":
    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(LINES, trainers.BpeTrainer(
        vocab_size=300, special_tokens=BYTE_SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    hf.post_processor = post
    return hf


def wordpiece(post, cleanup: bool = True) -> "tokenizers.Tokenizer":
    hf = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer = normalizers.BertNormalizer()
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece(cleanup=cleanup)
    hf.train_from_iterator(LINES, trainers.WordPieceTrainer(
        vocab_size=200, special_tokens=["[UNK]", "[BOS]", "[EOS]", "[PAD]", "[MASK]"], show_progress=False))
    hf.post_processor = post
    return hf


def roberta(aps, trim):
    return byte_level(aps, processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=trim,
                                                        add_prefix_space=aps))


VARIANTS = {
    **{f"roberta-prefix{int(aps)}-trim{int(trim)}": (lambda aps=aps, trim=trim: roberta(aps, trim))
       for aps in (False, True) for trim in (False, True)},
    **{f"gpt2-trim{int(trim)}": (lambda trim=trim: byte_level(False, processors.ByteLevel(trim_offsets=trim)))
       for trim in (False, True)},
    "template-bytelevel": lambda: byte_level(False, processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1", special_tokens=[("<s>", 0), ("</s>", 2)])),
    "template-eos-only": lambda: byte_level(True, processors.TemplateProcessing(
        single="$A:0 </s>", pair="$B:2 <mask>:1 $A:0 </s>:2", special_tokens=[("</s>", 2), ("<mask>", 4)])),
    "template-wordpiece": lambda: wordpiece(processors.TemplateProcessing(
        single="[BOS] $A [EOS]", pair="[BOS] $A [EOS] $B:1 [EOS]:1", special_tokens=[("[BOS]", 1), ("[EOS]", 2)])),
    "wordpiece-no-cleanup": lambda: wordpiece(processors.TemplateProcessing(
        single="[BOS] $A [EOS]", pair="[BOS]:0 $A:0 [EOS]:0 $B:1 [EOS]:1",
        special_tokens=[("[BOS]", 1), ("[EOS]", 2)]), cleanup=False),
}


@pytest.fixture(params=sorted(VARIANTS), scope="module")
def variant(request, tmp_path_factory):
    """(tokenizers' tokenizer, its folder) for one variant, saved by tokenizers itself."""
    hf = VARIANTS[request.param]()
    folder = tmp_path_factory.mktemp(request.param)
    hf.save(str(folder / "tokenizer.json"))
    return hf, folder


def texts_for(hf):
    """The test texts, with the byte-level specials swapped for WordPiece's where the model has those."""
    if hf.token_to_id("<mask>") is not None:
        return TEXTS
    return [t.replace("<mask>", "[MASK]").replace("<s>", "[BOS]").replace("</s>", "[EOS]") for t in TEXTS]


def assert_same_as_tokenizers(tok, hf):
    texts = texts_for(hf)
    for text in texts:
        plain = hf.encode(text, add_special_tokens=False)
        assert tok.encode(text) == plain.ids, text
        assert tok.encode_with_offsets(text).offsets == plain.offsets, text
        full = hf.encode(text)
        for skip in (False, True):
            assert tok.decode(full.ids, skip_special_tokens=skip) == hf.decode(full.ids, skip_special_tokens=skip)
    want = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts, num_threads=2) == want
    ids, rows = tok.encode_batch_flat(texts, num_threads=2)
    assert [ids[rows[k]:rows[k + 1]].tolist() for k in range(len(texts))] == want
    assert tok.encode_to_numpy(texts[0]).tolist() == want[0]
    batch = tokkit.encode(tok, texts, padding=None, return_offsets=True)
    for k, e in enumerate(hf.encode_batch(texts)):
        assert batch["input_ids"][k].tolist() == e.ids, texts[k]
        assert batch["token_type_ids"][k].tolist() == e.type_ids, texts[k]
        assert [tuple(o) for o in batch["offsets"][k].tolist()] == e.offsets, texts[k]
    a, b = zip(*[(x, y) for x, y in zip(texts, reversed(texts))] + PAIRS)
    pairs = tokkit.encode(tok, list(a), list(b), padding=None, return_offsets=True)
    for k, e in enumerate(hf.encode_batch(list(zip(a, b)))):
        assert pairs["input_ids"][k].tolist() == e.ids, (a[k], b[k])
        assert pairs["token_type_ids"][k].tolist() == e.type_ids, (a[k], b[k])
        assert [tuple(o) for o in pairs["offsets"][k].tolist()] == e.offsets, (a[k], b[k])


def test_variant_encodes_and_decodes_as_tokenizers(variant):
    hf, folder = variant
    assert_same_as_tokenizers(tokkit.load(folder), hf)


def test_variant_survives_a_save(variant, tmp_path):
    """tokkit writes the post-processor, prefix space and decoder back; both libraries read them alike."""
    _, folder = variant
    tokkit.load(folder).save(tmp_path)
    original, saved = (json.loads((f / "tokenizer.json").read_text()) for f in (folder, tmp_path))
    assert saved["post_processor"] == original["post_processor"]
    if original["decoder"]["type"] == "ByteLevel":  # its flags change nothing in decoding
        assert saved["decoder"]["type"] == "ByteLevel"
    else:
        assert saved["decoder"] == original["decoder"]
    assert saved["pre_tokenizer"].get("add_prefix_space") == original["pre_tokenizer"].get("add_prefix_space")
    assert_same_as_tokenizers(tokkit.load(tmp_path), tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json")))


def test_truncation_and_windows_leave_room_for_the_template(tmp_path):
    """RoBERTa's pair template holds four specials; truncation and padding (with <pad>) follow tokenizers."""
    hf = roberta(True, True)
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = tokkit.load(tmp_path)
    hf.enable_truncation(max_length=9)
    hf.enable_padding(pad_id=hf.token_to_id("<pad>"), pad_token="<pad>")
    a, b = ["the quick brown fox jumps", "a"], ["over the lazy dog", "b c"]
    got = tokkit.encode(tok, a, b, max_length=9, return_offsets=True)
    want = hf.encode_batch(list(zip(a, b)))
    assert got["input_ids"].tolist() == [e.ids for e in want]
    assert got["offsets"].tolist() == [[list(o) for o in e.offsets] for e in want]
    hf.enable_truncation(max_length=6, stride=1)
    hf.no_padding()
    windows = tokkit.encode(tok, a[:1], max_length=6, stride=1, return_overflowing=True, padding=None,
                            return_offsets=True)
    first = hf.encode(a[0])
    want = [first] + list(first.overflowing)
    assert [r.tolist() for r in windows["input_ids"]] == [e.ids for e in want]
    assert [[tuple(o) for o in r.tolist()] for r in windows["offsets"]] == [e.offsets for e in want]


def _edited(tmp_path, hf, edit):
    data = json.loads(hf.to_str())
    edit(data)
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    return tmp_path


@pytest.mark.parametrize("variant_name, edit, message", [
    ("template-bytelevel", lambda d: d["post_processor"]["special_tokens"]["</s>"].__setitem__("ids", [2, 3]),
     r"post_processor.special_tokens\['</s>'\] must hold one token"),
    ("template-bytelevel", lambda d: d["post_processor"].__setitem__("pair", [{"Sequence": {"id": "A", "type_id": 0}}]),
     "field 'pair' must hold \\$A and \\$B exactly once each"),
    ("template-bytelevel", lambda d: d["post_processor"]["single"].__setitem__(0, {"Sequence": {"id": "C", "type_id": 0}}),
     r"single\[0\]: a Sequence id must be \"A\" or \"B\", got 'C'"),
])
def test_unsupported_variants_are_one_error_naming_file_and_field(tmp_path, variant_name, edit, message):
    folder = _edited(tmp_path, VARIANTS[variant_name](), edit)
    with pytest.raises(TokkitError, match=message) as err:
        tokkit.load(folder)
    assert str(folder / "tokenizer.json") in str(err.value)


def test_a_template_id_other_than_the_vocabularys_is_the_templates(tmp_path):
    """tokenizers writes the id the post-processor names, whatever the vocabulary gives the token."""
    folder = _edited(tmp_path, VARIANTS["roberta-prefix0-trim1"](),
                     lambda d: d["post_processor"].__setitem__("sep", ["</s>", 7]))
    hf = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = tokkit.load(folder)
    assert (tok.template.id_of("</s>"), tok.token_to_id("</s>")) == (7, hf.token_to_id("</s>")) == (7, 2)
    want = hf.encode("Hello world")
    assert want.ids == [tok.template.id_of("<s>")] + tok.encode("Hello world") + [7]


def test_cli_max_length_counts_this_tokenizer_template(tmp_path, capsys):
    """RoBERTa's pair rows hold four special tokens: --max-length 4 leaves no room for text, and the
    CLI says so in one line (exit 2) instead of failing later."""
    from helpers.cli import run_cli

    folder = tmp_path / "roberta"
    folder.mkdir()
    roberta(True, True).save(str(folder / "tokenizer.json"))
    (tmp_path / "pairs.txt").write_text("Hello\tworld\n", encoding="utf-8")
    out = tmp_path / "rows.npz"
    capsys.readouterr()
    code = run_cli(["encode", "-t", str(folder), "--pairs", "--format", "npz", "--max-length", "4", "-o", str(out),
                    str(tmp_path / "pairs.txt")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("tokkit: error: --max-length must be at least 5")
    assert not out.exists()
    assert run_cli(["encode", "-t", str(folder), "--pairs", "--format", "npz", "--max-length", "5", "-o", str(out),
                    str(tmp_path / "pairs.txt")]) == 0
    assert out.exists()


@pytest.mark.parametrize("variant_name, edit", [
    # a Split before a ByteLevel that adds a prefix space: every piece gets its space (the general path)
    ("roberta-prefix1-trim1", lambda d: d.__setitem__("pre_tokenizer", {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": " ?[a-z]+"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False}]})),
    ("gpt2-trim1", lambda d: d.__setitem__("post_processor", {"type": "Sequence", "processors": []})),
    # tokenizers reads a RobertaProcessing whose flag is no boolean as a BertProcessing
    ("roberta-prefix0-trim1", lambda d: d["post_processor"].__setitem__("trim_offsets", "yes")),
])
def test_variants_once_refused_now_encode_as_tokenizers(tmp_path, variant_name, edit):
    folder = _edited(tmp_path, VARIANTS[variant_name](), edit)
    hf = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = tokkit.load(folder)
    for text in ["Hello world, how are you?", "  spaced   out  ", "naïve café 😀", ""]:
        want = hf.encode(text)
        got = tokkit.encode(tok, [text], padding=None, truncation=None, return_offsets=True)
        assert got["input_ids"][0].tolist() == want.ids
        assert [tuple(o) for o in got["offsets"][0].tolist()] == want.offsets


def test_tokkit_encode_writes_the_templates_id(tmp_path):
    """BERT inputs carry the id the post-processor names, as tokenizers' encode does."""
    folder = _edited(tmp_path, VARIANTS["roberta-prefix0-trim1"](),
                     lambda d: d["post_processor"].__setitem__("sep", ["</s>", 7]))
    hf = Tokenizer.from_file(str(folder / "tokenizer.json"))
    rows = tokkit.encode(tokkit.load(folder), ["Hello world", "a"], padding=None)
    assert [r.tolist() for r in rows["input_ids"]] == [e.ids for e in hf.encode_batch(["Hello world", "a"])]
