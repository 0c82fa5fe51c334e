"""SentencePiece .model files: the wire-format reader against protobuf, malformed files as one error,
and the tokenizer.json pipeline against the sentencepiece package (through `tokenizers`, and through
tokkit.load)."""
import json
import math
import shutil

import pytest
from helpers.hub_files import SPM_VARIANTS, USER_SYMBOLS, edge_texts, multilingual_lines, spm_model, train_spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer.sentencepiece_json import SPACE, merges_from_pieces, tokenizer_json_from_sentencepiece
from tokkit.tokenizer.sentencepiece_model import Piece, model_from_bytes, read_model

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2", reason="protobuf is not installed")

UNIGRAM_VARIANTS = sorted(v for v, o in SPM_VARIANTS.items() if o.get("model_type", "unigram") == "unigram")
USER_TEXTS = ["a <sym> b", "x<sym>y", "barfoo baz", "hello [MASK] world", "a  <sym>  b", "foo", " foo bar",
              "[MASK][MASK] <sym>foo", "trailing <sym>  ", "f o o", "FOO [mask]"]
PROTO_TYPES = {1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}


@pytest.fixture(params=sorted(SPM_VARIANTS), scope="module")
def variant(request, tmp_path_factory):
    """(name, path) of one trained .model variant."""
    return request.param, spm_model(request.param, tmp_path_factory)


def proto(path):
    m = pb.ModelProto()
    m.ParseFromString(path.read_bytes())
    return m


def spm_processor(path):
    return spm.SentencePieceProcessor(model_file=str(path))


# ------------------------------------------------------------------------------ the reader
def test_reader_matches_protobuf(variant):
    _, path = variant
    model, ref = read_model(path), proto(path)
    assert [(p.piece, p.score, p.type) for p in model.pieces] == \
        [(p.piece, p.score, PROTO_TYPES[p.type]) for p in ref.pieces]
    ts = ref.trainer_spec
    for field in ("vocab_size", "byte_fallback", "unk_id", "bos_id", "eos_id", "pad_id", "unk_piece", "bos_piece",
                  "eos_piece", "pad_piece", "unk_surface", "split_digits", "split_by_whitespace",
                  "treat_whitespace_as_suffix", "allow_whitespace_only_pieces"):
        assert getattr(model.trainer_spec, field) == getattr(ts, field), field
    assert model.trainer_spec.model_type == {1: "unigram", 2: "bpe", 3: "word", 4: "char"}[ts.model_type]
    assert model.trainer_spec.user_defined_symbols == tuple(ts.user_defined_symbols)
    assert model.trainer_spec.control_symbols == tuple(ts.control_symbols)
    for field in ("name", "precompiled_charsmap", "add_dummy_prefix", "remove_extra_whitespaces",
                  "escape_whitespaces"):
        assert getattr(model.normalizer_spec, field) == getattr(ref.normalizer_spec, field), field
    assert (model.denormalizer_spec is None) == (not ref.HasField("denormalizer_spec"))


def test_negative_ids_and_every_piece_type(tmp_path):
    """int32 fields written as ten-byte negatives, and each piece type, as protobuf writes them."""
    m = pb.ModelProto()
    for text, kind in (("<unk>", 2), ("<s>", 3), ("<x>", 4), ("a", 1), ("old", 5)):
        p = m.pieces.add()
        p.piece, p.type, p.score = text, kind, -1.5
    m.trainer_spec.bos_id, m.trainer_spec.pad_id, m.trainer_spec.unk_id = -1, -7, 0
    m.normalizer_spec.add_dummy_prefix = False
    m.denormalizer_spec.name = "identity"
    path = tmp_path / "m.model"
    path.write_bytes(m.SerializeToString())
    model = read_model(path)
    assert [p.type for p in model.pieces] == ["UNKNOWN", "CONTROL", "USER_DEFINED", "NORMAL", "UNUSED"]
    assert (model.trainer_spec.bos_id, model.trainer_spec.pad_id, model.trainer_spec.eos_id) == (-1, -7, 2)
    assert model.normalizer_spec.add_dummy_prefix is False and model.denormalizer_spec.name == "identity"


def _varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number, wire, payload=b""):
    return _varint(number << 3 | wire) + payload


def _bytes_field(number, payload):
    return _field(number, 2, _varint(len(payload)) + payload)


def _piece(text, kind=None, extra=b""):
    body = _bytes_field(1, text) + extra + (b"" if kind is None else _field(3, 0, _varint(kind)))
    return _bytes_field(1, body)


SPECS = _bytes_field(2, b"") + _bytes_field(3, b"")
TINY = _piece(b"<unk>", 2) + _piece(b"a") + SPECS


def test_unknown_fields_of_every_wire_type_are_skipped():
    unknown = (_field(4, 2, _varint(3) + b"abc") + _field(99, 0, _varint(300)) + _field(100, 1, bytes(8))
               + _field(101, 5, bytes(4)) + _field(102, 3) + _field(7, 0, b"\x01") + _field(102, 4))
    inner = _field(50, 0, b"\x05") + _field(51, 5, bytes(4))  # inside a piece: the general reader
    plain = model_from_bytes(TINY, "x.model")
    assert model_from_bytes(unknown + TINY + unknown, "x.model") == plain
    assert model_from_bytes(_piece(b"<unk>", 2, inner) + _piece(b"a", None, inner) + SPECS, "x.model") == plain


@pytest.mark.parametrize("data, message", [
    (b"", "it holds no pieces"),
    (_piece(b"<unk>", 2), "it holds no trainer_spec"),
    (b"\x0a" + b"\xff" * 11, "field 'pieces' holds a varint longer than 10 bytes"),
    (b"\x0a\x05abc", r"field 'pieces' is cut short at byte 2 \(says 5 bytes, 3 left\)"),
    (b"\x0a" + _varint(1 << 40) + b"abc", "field 'pieces' is cut short"),
    (TINY + b"\x10\x01", "field 'trainer_spec' has wire type 0, expected 2"),
    (_bytes_field(1, _field(2, 0, b"\x01")) + TINY, "field 'pieces.score' has wire type 0, expected 5"),
    (_bytes_field(1, _field(2, 5, b"\x00\x00")) + TINY, "field 'pieces.score' is cut short"),
    (TINY + _field(9, 7), "field '#9' has an invalid wire type 7"),
    (TINY + _field(9, 4), "field '#9' has an invalid wire type 4"),
    (TINY + _field(9, 3) + _field(10, 0, b"\x01"), "field '#9' is cut short"),
    (TINY + b"\x00", "holds field number 0"),
    (_piece(b"\xff\xfe", 1) + TINY, "field 'pieces.piece' is not valid UTF-8"),
    (_piece(b"z", 9) + TINY, "field 'pieces.type' has unknown value 9"),
    (TINY + _bytes_field(2, _field(3, 0, b"\x07")), "field 'trainer_spec.model_type' has unknown value 7"),
    (TINY + b"\x0a", "field 'pieces' is cut short"),
])
def test_malformed_bytes_are_one_error_naming_the_file(data, message, tmp_path):
    path = tmp_path / "bad.model"
    path.write_bytes(data)
    with pytest.raises(TokkitError, match=message) as err:
        read_model(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)


@pytest.mark.parametrize("pieces, specs, message", [
    (_piece(b"a"), SPECS, "needs exactly one UNKNOWN piece, this one has 0"),
    (_piece(b"<unk>", 2) + _piece(b"<u2>", 2), SPECS, "this one has 2"),
    (_piece(b"<unk>", 2) + _piece(b"a") + _piece(b"a"), SPECS, r"piece 'a' is defined twice \(ids 1 and 2\)"),
    (_piece(b"<unk>", 2) + _bytes_field(1, b""), SPECS, "piece 1 is empty"),
    (_piece(b"<unk>", 2) + _piece(b"<0x41>", 6), SPECS, "byte pieces are present although byte_fallback is false"),
    (_piece(b"<unk>", 2) + _piece(b"<0x41>", 6), _bytes_field(2, _field(35, 0, b"\x01")) + _bytes_field(3, b""),
     "byte_fallback needs the 256 byte pieces"),
    (_piece(b"<unk>", 2), _bytes_field(2, b"") + _bytes_field(3, _bytes_field(2, b"\xff\x00\x00\x00abcd")),
     "normalizer_spec.precompiled_charsmap: broken"),
    (_piece(b"<unk>", 2), _bytes_field(2, b"") + _bytes_field(3, _bytes_field(2, b"\x04\x00\x00\x00abcd\xff")),
     "replacement strings are not valid UTF-8"),
])
def test_inconsistent_models_are_one_error(pieces, specs, message):
    with pytest.raises(TokkitError, match=message):
        model_from_bytes(pieces + specs, "m.model")


def test_a_missing_file_or_a_folder_is_one_error(tmp_path):
    for path in (tmp_path / "none.model", tmp_path):
        with pytest.raises(TokkitError, match="cannot read"):
            read_model(path)


def test_every_cut_of_a_real_model_is_an_error_or_a_whole_prefix(tmp_path_factory):
    """The top-level message has no length, so a file cut between fields can parse; then its pieces
    are the original's first ones and nothing else is made up."""
    data = spm_model("bpe-user", tmp_path_factory).read_bytes()
    full = model_from_bytes(data, "m.model")
    for cut in list(range(0, 200)) + list(range(200, len(data), 613)) + [len(data) - 1]:
        try:
            model = model_from_bytes(data[:cut], "m.model")
        except TokkitError as exc:
            assert str(exc).startswith("m.model: ")
            continue
        assert model.pieces == full.pieces[:len(model.pieces)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data):
    try:
        model = model_from_bytes(TINY + data, "m.model")
    except TokkitError:
        return
    tokenizer_json_from_sentencepiece(model, "m.model")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_damaged_real_models_are_read_or_refused_in_one_error(tmp_path_factory, data):
    original = bytearray(spm_model("bpe-user", tmp_path_factory).read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        original[data.draw(st.integers(0, len(original) - 1))] = data.draw(st.integers(0, 255))
    try:
        model = model_from_bytes(bytes(original), "m.model")
        tokenizer_json_from_sentencepiece(model, "m.model")
    except TokkitError as exc:
        assert str(exc).startswith("m.model: ") and "\n" not in str(exc)


# ------------------------------------------------------------------------------ the pipeline
def texts_for(name):
    """The edge texts and multilingual lines, plus the user symbols in context for the variants that have them."""
    out = edge_texts() + multilingual_lines(3)
    if "user" in name:
        out += USER_TEXTS + [f"{t} <ctl> x" for t in USER_TEXTS[:2]]
    return out


def pipeline(path):
    """(the dict, tokenizers' Tokenizer built from it, sentencepiece's processor)."""
    d = tokenizer_json_from_sentencepiece(read_model(path), str(path))
    return d, tokenizers.Tokenizer.from_str(json.dumps(d)), spm_processor(path)


def charsmap_only(path):
    """sentencepiece with only its character map (no space rules), to tell where tokenizers'
    Precompiled rewrites differently (whole grapheme clusters, not the longest rule)."""
    m = proto(path)
    m.normalizer_spec.add_dummy_prefix = m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = False
    charsmap = m.normalizer_spec.precompiled_charsmap
    plain = spm.SentencePieceProcessor(model_proto=m.SerializeToString())
    precompiled = tokenizers.normalizers.Precompiled(charsmap) if charsmap else None
    return lambda text: precompiled is None or plain.normalize(text) == precompiled.normalize_str(text)


def reproducible(path):
    """The texts on which the module docstring promises sentencepiece's ids: none of the documented
    cases (a control, unknown or byte piece spelled in the text; a grapheme tokenizers' Precompiled
    rewrites otherwise; for BPE with user-defined symbols, a text that is one of them alone)."""
    model, sp = read_model(path), spm_processor(path)
    spelled = [p.piece for p in model.pieces if p.type in ("CONTROL", "UNKNOWN", "BYTE")]
    agrees = charsmap_only(path)
    symbol_first = model.trainer_spec.model_type != "unigram" and any(p.type == "USER_DEFINED" for p in model.pieces)

    def ok(text):
        if any(s in text for s in spelled) or not agrees(text):
            return False
        return not (symbol_first and text in USER_SYMBOLS)
    return ok


def tie(d, sp, a, b):
    """Two Unigram segmentations of the same text with the same total score (sentencepiece sums in
    32-bit floats, tokenizers in 64-bit, so either may be picked)."""
    if d["model"]["type"] != "Unigram" or sp.decode(a) != sp.decode(b):
        return False
    scores = [s for _, s in d["model"]["vocab"]]
    return math.isclose(sum(scores[i] for i in a), sum(scores[i] for i in b), rel_tol=1e-6)


def test_dict_is_what_tokenizers_writes(variant):
    """tokenizers reads the dict and writes it back unchanged, Unigram scores included (to the bit:
    they are written so that its JSON reader and Python's read the same doubles)."""
    _, path = variant
    d, hf, _ = pipeline(path)
    assert json.loads(hf.to_str()) == d


def decodes_alike(path):
    """Not the documented decoding case: a normalized text starting with a typed U+2581 (sentencepiece
    may drop more than the one space the decoder drops)."""
    sp, ns = spm_processor(path), read_model(path).normalizer_spec
    typed = SPACE * 2 if ns.add_dummy_prefix else SPACE
    return lambda text: not sp.normalize(text).startswith(typed)


def test_ids_and_decoding_are_sentencepiece(variant):
    name, path = variant
    d, hf, sp = pipeline(path)
    ok, decodable = reproducible(path), decodes_alike(path)
    texts = texts_for(name)
    checked = [t for t in texts if ok(t)]
    assert len(checked) >= 0.9 * len(texts)
    for text in checked:
        want, got = sp.encode(text), hf.encode(text, add_special_tokens=False).ids
        assert want == got or tie(d, sp, want, got), (text, sp.id_to_piece(want), [hf.id_to_token(i) for i in got])
        if decodable(text):
            assert hf.decode(want, skip_special_tokens=True) == sp.decode(want), text


def test_plain_text_is_never_excused(variant):
    """ASCII text with spaces, tabs and newlines gets sentencepiece's ids with no exception at all."""
    name, path = variant
    _, hf, sp = pipeline(path)
    texts = ["Hello world", "  two  spaces  ", "tab\tand\nnewline", "a" * 60, "x" + " " * 30 + "y", "", " ",
             "don't stop", "1234 5678", "under_score (paren) [bracket]", "trailing \u2581", "mid\u2581dle"]
    for text in texts:
        assert sp.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("name", ["unigram-bytes-user", "bpe-user"])
def test_user_symbols_stay_whole_where_sentencepiece_keeps_them(name, tmp_path_factory):
    path = spm_model(name, tmp_path_factory)
    _, hf, sp = pipeline(path)
    ok = reproducible(path)
    checked = [t for t in USER_TEXTS if ok(t)]
    assert len(checked) == (len(USER_TEXTS) if name.startswith("unigram") else len(USER_TEXTS) - 1)
    for text in checked:
        assert hf.encode(text, add_special_tokens=False).ids == sp.encode(text), text
    assert sp.encode("barfoo", out_type=str)[-1] == "foo"


# Mistral's newer instruct models: BPE with byte fallback and user-defined symbols, spaces kept as typed
MISTRAL_LIKE = dict(model_type="bpe", vocab_size=1500, byte_fallback=True, split_digits=True,
                    normalization_rule_name="identity", remove_extra_whitespaces=False,
                    allow_whitespace_only_pieces=True, user_defined_symbols=["[INST]", "[/INST]", "<sym>"])


def test_text_starting_with_spaces_or_symbols_gets_sentencepiece_ids(tmp_path_factory):
    """sentencepiece puts its dummy U+2581 before the whole text: before the spaces of indented code
    or a reply after a space, and before a user-defined symbol there (none before each text part
    between symbols, as tokenizers' prefixing of each part would)."""
    path = train_spm(tmp_path_factory.mktemp("mistral") / "tokenizer.model", **MISTRAL_LIKE)
    tok, sp = tokkit.load(path), spm_processor(path)
    ok = reproducible(path)
    starts = ("", " ", "  ", "    ", "\t", " [INST] ", "[INST]", "[/INST] ", "<sym>x", "\n ")
    lines = [start + text for text in edge_texts() + multilingual_lines(1)[:40] for start in starts]
    checked = [line for line in lines if ok(line) and line not in MISTRAL_LIKE["user_defined_symbols"]]
    assert len(checked) >= 0.95 * len(lines)
    for line in checked:
        assert tok.encode(line) == sp.encode(line), (line, sp.encode(line, out_type=str))
    assert tok.encode("[INST]") == [sp.piece_to_id("[INST]")]  # the documented difference: one symbol alone
    assert sp.encode("[INST]") == [sp.piece_to_id("\u2581"), sp.piece_to_id("[INST]")]


def test_user_symbol_score_is_the_one_sentencepiece_encodes_with(tmp_path_factory):
    """sentencepiece scores a user-defined piece bytes x max(FLT_MIN, best normal score) - 0.1: -0.1
    for any model whose scores are log probabilities."""
    d = tokenizer_json_from_sentencepiece(read_model(spm_model("unigram-bytes-user", tmp_path_factory)))
    scores = dict(d["model"]["vocab"])
    assert [scores[s] for s in USER_SYMBOLS] == [-0.1] * 3
    assert not {a["content"] for a in d["added_tokens"]} & set(USER_SYMBOLS)
    assert [a["content"] for a in d["added_tokens"]] == ["<s>", "</s>", "<ctl>"]


def test_the_documented_differences_are_real(tmp_path_factory):
    """The module docstring's first two limits: a control piece typed in the text, and CR LF under
    tokenizers' Precompiled (one space where sentencepiece writes two). If tokenizers changes, the
    docstring must change too."""
    _, hf, sp = pipeline(spm_model("bpe-spaces-kept", tmp_path_factory))
    assert hf.encode("<s>", add_special_tokens=False).ids == [sp.bos_id()] != sp.encode("<s>")
    assert sp.normalize("a\r\nb").count(SPACE) == 3
    assert hf.normalizer.normalize_str("a\r\nb").count(SPACE) == 3 - 1


def test_word_models_and_non_finite_scores_are_refused(tmp_path_factory):
    m = proto(spm_model("bpe", tmp_path_factory))
    m.trainer_spec.model_type = 3
    with pytest.raises(TokkitError, match="model_type 'word' is not supported"):
        tokenizer_json_from_sentencepiece(model_from_bytes(m.SerializeToString(), "w.model"), "w.model")
    m.trainer_spec.model_type = 2
    m.pieces[5].score = float("nan")
    with pytest.raises(TokkitError, match="piece 5 .* not a finite number"):
        tokenizer_json_from_sentencepiece(model_from_bytes(m.SerializeToString(), "n.model"), "n.model")


def test_merges_come_from_scores_best_first():
    pieces = (Piece("<unk>", 0, "UNKNOWN"), Piece("a", -1), Piece("b", -2), Piece("ab", -3), Piece("ba", -4),
              Piece("aba", -5), Piece("<s>", 0, "CONTROL"))
    assert merges_from_pieces(pieces) == [("a", "b"), ("b", "a"), ("a", "ba"), ("ab", "a")]


# ------------------------------------------------------------------------------ through tokkit.load
def assert_loads_as_sentencepiece(path, texts):
    """tokkit.load(path) gives tokenizers' ids and text for the converted dict on every text, and
    sentencepiece's on the texts the module docstring promises them."""
    d, hf, sp = pipeline(path)
    tok = tokkit.load(path)
    ok, decodable = reproducible(path), decodes_alike(path)
    for text in texts:
        got = tok.encode(text)
        assert got == hf.encode(text, add_special_tokens=False).ids, text
        assert tok.decode(got, skip_special_tokens=True) == hf.decode(got, skip_special_tokens=True), text
        if ok(text):
            want = sp.encode(text)
            assert got == want or tie(d, sp, want, got), text
            if decodable(text):
                assert tok.decode(want, skip_special_tokens=True) == sp.decode(want), text


def test_tokkit_load_of_a_model_gives_sentencepiece_ids(variant):
    name, path = variant
    assert_loads_as_sentencepiece(path, texts_for(name))


def test_a_folder_holding_only_a_model_loads_it(tmp_path, tmp_path_factory):
    path = spm_model("unigram", tmp_path_factory)
    shutil.copy(path, tmp_path / "spiece.model")
    sp = spm_processor(path)
    tok = tokkit.load(tmp_path)
    for text in ("Hello world", "  spaced   out  ", "naïve café"):
        assert tok.encode(text) == sp.encode(text)


def _runs_model(n: int, path):
    """A BPE .model of the pieces "a", "aa", ... up to n a's: each piece of k a's splits k - 1 ways into
    two pieces, so the merges' merged tokens add up to about n**3 / 3 chars from a file of n**2 / 2."""
    from tokkit.tokenizer.sentencepiece_model import SentencePieceModel, TrainerSpec
    from tokkit.tokenizer.sentencepiece_write import model_to_bytes

    pieces = (Piece("<unk>", 0.0, "UNKNOWN"),) + tuple(Piece("a" * k, -float(k)) for k in range(1, n + 1))
    path.write_bytes(model_to_bytes(SentencePieceModel(pieces=pieces, trainer_spec=TrainerSpec(model_type="bpe"))))
    return path


def test_a_bpe_model_of_long_runs_loads_in_memory_linear_in_its_size(tmp_path):
    """Loading holds no more than a few hundred bytes per byte of the file (spelling out every merged
    token at once took n**3 / 3 chars: 800 bytes per byte at n = 800, growing with n), and finds at
    most one merge per char of the pieces; the ids are sentencepiece's."""
    import tracemalloc

    path = _runs_model(800, tmp_path / "runs.model")
    tracemalloc.start()
    try:
        tok = tokkit.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 400 * path.stat().st_size
    assert len(tok.spec.pipeline.model.merges) <= sum(range(1, 801))
    sp = spm_processor(path)
    for text in ["a", "a" * 7, "a" * 799, "a" * 801 + " " + "a" * 64, "b a", "a b  a"]:  # U+2581 is unknown
        assert tok.encode(text) == sp.encode(text), text


REMOVED_ONLY = ["\x01", "\x01\x02", "\u200b", "\x01 \x01", "\x01a", " \x01", "a\x01", "", " ", "\x01<sym>", "<sym>\x01"]


@pytest.mark.parametrize("options", [
    dict(model_type="bpe", remove_extra_whitespaces=False, allow_whitespace_only_pieces=True),
    dict(remove_extra_whitespaces=False),
    dict(model_type="bpe", remove_extra_whitespaces=False, treat_whitespace_as_suffix=True),
    dict(model_type="bpe", remove_extra_whitespaces=False, user_defined_symbols=["<sym>"]),
    dict(model_type="bpe"),
], ids=["bpe-spaces-kept", "unigram-spaces-kept", "suffix-spaces-kept", "user-spaces-kept", "bpe"])
def test_a_text_the_character_map_removes_keeps_the_dummy_prefix(tmp_path_factory, options):
    """sentencepiece adds its dummy U+2581 to any text it reads that is not empty, before the map
    removes chars: "\\x01" gives the id of U+2581 where trailing spaces are kept (and nothing where
    remove_extra_whitespaces strips it again). tokkit and tokenizers on the converted dict agree."""
    path = train_spm(tmp_path_factory.mktemp("removed") / "m.model", **options)
    d, hf, sp = pipeline(path)
    tok = tokkit.load(path)
    for text in REMOVED_ONLY:
        want = sp.encode(text)
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids == want, (text, want)
    assert sp.encode("\x01") == ([] if "remove_extra_whitespaces" not in options else [sp.piece_to_id(SPACE)])


def test_mistral_like_symbols_at_the_start_through_the_model_and_the_saved_json(tmp_path_factory):
    """A Mistral-style .model (BPE, byte fallback, user-defined symbols, spaces kept): sentencepiece puts
    U+2581 before a symbol that starts the text (after removed chars too). tokkit.load of the .model,
    of the tokenizer.json tokkit saves from it, and tokenizers on that file give the same ids, and
    sentencepiece's but for a text that is one symbol alone (the documented difference)."""
    path = train_spm(tmp_path_factory.mktemp("mistral-start") / "tokenizer.model", **MISTRAL_LIKE)
    tok, sp = tokkit.load(path), spm_processor(path)
    folder = tok.save(tmp_path_factory.mktemp("saved"))
    saved, hf = tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    texts = ["[INST] hi", "[INST]hi [/INST]", "\x01[INST] x", "<sym>\x01", " [INST]", "\x01", "[INST][/INST]",
             "\x01\x02", "[INST]", "<sym>"]
    for text in texts:
        got = tok.encode(text)
        assert got == saved.encode(text) == hf.encode(text, add_special_tokens=False).ids, text
        if text not in MISTRAL_LIKE["user_defined_symbols"]:
            assert got == sp.encode(text), (text, sp.encode(text, out_type=str))
    assert sp.encode("[INST] hi", out_type=str)[:2] == ["\u2581", "[INST]"]
