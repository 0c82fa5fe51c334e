"""The .model writer: what it writes is what protobuf and sentencepiece read, byte for byte and id for id,
and a value protobuf cannot hold is one error."""
import dataclasses

import pytest
from helpers.hub_files import edge_texts, spm_model

from tokkit.errors import TokkitError
from tokkit.tokenizer.sentencepiece_model import (
    MODEL_FIELDS,
    Piece,
    SentencePieceModel,
    TrainerSpec,
    model_from_bytes,
    read_model,
)
from tokkit.tokenizer.sentencepiece_write import model_to_bytes

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2", reason="protobuf is not installed")

TINY = SentencePieceModel(
    pieces=(Piece("<pad>", 0.0, "CONTROL"), Piece("<unk>", 0.0, "UNKNOWN"), Piece("<sym>", 0.0, "USER_DEFINED"),
            Piece("\u2581h\u00e9", -1.25, "NORMAL"), Piece("h", -3.5, "NORMAL"), Piece("\u00e9", -4.0, "NORMAL")),
    trainer_spec=TrainerSpec(vocab_size=6, unk_id=1, bos_id=-1, eos_id=-1, pad_id=0, character_coverage=1.0,
                             max_sentencepiece_length=8, user_defined_symbols=("<sym>",), control_symbols=("<c>",)))


def test_protobuf_reads_every_field_and_writes_the_same_bytes():
    data = model_to_bytes(TINY)
    proto = pb.ModelProto()
    proto.ParseFromString(data)
    assert proto.SerializeToString() == data  # field order and encodings are protobuf's own
    assert [(p.piece, p.score, p.type) for p in proto.pieces] == [(p.piece, p.score, pb.ModelProto.SentencePiece.Type
                                                                   .Value(p.type)) for p in TINY.pieces]
    ts = proto.trainer_spec
    assert (ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id, ts.max_sentencepiece_length) == (1, -1, -1, 0, 8)
    assert list(ts.user_defined_symbols) == ["<sym>"] and list(ts.control_symbols) == ["<c>"]
    assert ts.HasField("split_digits") and ts.character_coverage == 1.0 and ts.model_type == ts.UNIGRAM
    assert not proto.HasField("denormalizer_spec")  # None is left out
    assert model_from_bytes(data, "tiny.model") == TINY


def test_sentencepiece_encodes_with_the_written_file():
    sp = spm.SentencePieceProcessor(model_proto=model_to_bytes(TINY))
    assert sp.encode("hé <sym>hé", out_type=str) == ["\u2581hé", "\u2581", "<sym>", "h", "é"]
    assert (sp.pad_id(), sp.unk_id(), sp.bos_id()) == (0, 1, -1)


@pytest.mark.parametrize("variant", ["unigram", "unigram-bytes-user", "bpe-identity"])
def test_read_then_written_models_encode_as_the_originals(variant, tmp_path_factory):
    """sentencepiece's own files, read by tokkit and written back: the same ids on odd text."""
    path = spm_model(variant, tmp_path_factory)
    original = spm.SentencePieceProcessor(model_file=str(path))
    rewritten = spm.SentencePieceProcessor(model_proto=model_to_bytes(read_model(path)))
    for text in edge_texts():
        assert rewritten.encode(text) == original.encode(text), text


def test_the_field_table_has_one_entry_per_model_field():
    names = {name for name, _, _ in MODEL_FIELDS.values()}
    assert names == {f.name for f in dataclasses.fields(SentencePieceModel)}


@pytest.mark.parametrize("change,words", [
    ({"pieces": TINY.pieces[:3] + (Piece("h", float("nan")),)}, "not a finite 32-bit float"),
    ({"pieces": TINY.pieces[:3] + (Piece("h", 1e39),)}, "not a finite 32-bit float"),
    ({"pieces": TINY.pieces[:3] + (Piece("\ud800", -1.0),)}, "lone surrogate"),
    ({"pieces": TINY.pieces[:3] + (Piece("h", -1.0, "ODD"),)}, "unknown value 'ODD'"),
    ({"trainer_spec": TrainerSpec(vocab_size=2**31)}, "not a 32-bit integer"),
    ({"pieces": TINY.pieces + (Piece("h", -1.0),)}, "defined twice"),
])
def test_values_protobuf_cannot_hold_are_one_error(change, words):
    with pytest.raises(TokkitError, match=words):
        model_to_bytes(dataclasses.replace(TINY, **change), "bad.model")
