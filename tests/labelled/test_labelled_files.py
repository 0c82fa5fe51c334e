"""read_examples: JSON lines, JSON arrays, CSV, TSV and SQuAD's nested JSON, and one clear error per problem."""
import json

import pytest

from tokkit.errors import TokkitError
from tokkit.labelled import Fields, read_examples


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def jsonl(*records):
    return "".join(json.dumps(r) + "\n" for r in records)


def test_classify_rows_from_jsonl_csv_and_tsv(tmp_path):
    rows = read_examples(write(tmp_path, "a.jsonl", jsonl(
        {"text": "Good.", "label": "fresh", "movie": "m"}, {"text": "Bad.", "label": 0},
        {"text": "Odd.", "label": True, "text_pair": "Yes."})), "classify")
    assert rows == [{"text": "Good.", "text_pair": None, "label": "fresh", "line": 1},
                    {"text": "Bad.", "text_pair": None, "label": "0", "line": 2},
                    {"text": "Odd.", "text_pair": "Yes.", "label": "true", "line": 3}]
    csv_rows = read_examples(write(tmp_path, "a.csv", 'text,label\n"Good, really.",fresh\n"two\nlines",rotten\n'
                                   "\nlast,fresh\n"), "classify")
    assert [(r["text"], r["label"], r["line"]) for r in csv_rows] == \
        [("Good, really.", "fresh", 2), ("two\nlines", "rotten", 3), ("last", "fresh", 6)]
    tsv = read_examples(write(tmp_path, "a.tsv", 'sentence\tlabel\n"quoted" stays\t1\n'), "classify",
                        fields=Fields(text="sentence"))
    assert tsv == [{"text": '"quoted" stays', "text_pair": None, "label": "1", "line": 2}]


def test_bom_and_crlf_are_read(tmp_path):
    rows = read_examples(write(tmp_path, "a.csv", "\ufefftext,label\r\nfine,1\r\n"), "classify")
    assert rows == [{"text": "fine", "text_pair": None, "label": "1", "line": 2}]


def test_tag_rows(tmp_path):
    rows = read_examples(write(tmp_path, "t.jsonl", jsonl({"tokens": ["The", "jury"], "tags": ["at", "nn"],
                                                            "genre": "a"})), "tag")
    assert rows == [{"tokens": ["The", "jury"], "tags": ["at", "nn"], "line": 1}]
    rows = read_examples(write(tmp_path, "t.tsv", "words\tner\nEU rejects German\tB-ORG O B-MISC\n"), "tag",
                         fields=Fields(tokens="words", tags="ner"))
    assert rows == [{"tokens": ["EU", "rejects", "German"], "tags": ["B-ORG", "O", "B-MISC"], "line": 2}]
    rows = read_examples(write(tmp_path, "ids.jsonl", jsonl({"tokens": ["a"], "ner_tags": [3]})), "tag",
                         fields=Fields(tags="ner_tags"))
    assert rows[0]["tags"] == ["3"]


SQUAD_ROW = {"id": "q1", "question": "Who won?", "context": "Denver Broncos won.",
             "answers": {"text": ["Denver Broncos", "Broncos"], "answer_start": [0, 7]}}


def test_qa_rows_flat_and_nested(tmp_path):
    flat = read_examples(write(tmp_path, "q.jsonl", jsonl(SQUAD_ROW)), "qa")
    assert flat == [{**SQUAD_ROW, "line": 1}]
    nested = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": SQUAD_ROW["context"], "qas": [
        {"id": "q1", "question": "Who won?", "answers": [{"text": "Denver Broncos", "answer_start": 0},
                                                         {"text": "Broncos", "answer_start": 7}]},
        {"id": "q2", "question": "Who lost?", "answers": [], "is_impossible": True}]}]}]}
    rows = read_examples(write(tmp_path, "dev.json", json.dumps(nested, indent=1)), "qa")
    assert rows[0] == {**SQUAD_ROW, "line": None}
    assert rows[1]["answers"] == {"text": [], "answer_start": []}
    table = read_examples(write(tmp_path, "q.csv", "question,context,answers\nWho won?,Denver Broncos won.,"
                                '"{""text"": [""Broncos""], ""answer_start"": [7]}"\n'), "qa")
    assert table[0]["answers"] == {"text": ["Broncos"], "answer_start": [7]} and table[0]["id"] == "0"


def test_json_array_and_unlabelled_rows(tmp_path):
    rows = read_examples(write(tmp_path, "a.json", json.dumps([{"text": "x"}, {"text": "y", "label": None}])),
                         "classify", labelled=False)
    assert [r["label"] for r in rows] == [None, None]
    rows = read_examples(write(tmp_path, "t.jsonl", jsonl({"tokens": ["a"]})), "tag", labelled=False)
    assert rows[0]["tags"] is None
    rows = read_examples(write(tmp_path, "q.jsonl", jsonl({"question": "?", "context": "c", "id": 5})), "qa",
                         labelled=False)
    assert rows[0]["answers"] == {"text": [], "answer_start": []} and rows[0]["id"] == "5"


@pytest.mark.parametrize("name, text, task, message", [
    ("a.jsonl", '{"text": "x", "label": "a"}\n{"label": "b"}\n', "classify",
     r"a\.jsonl: line 2: field 'text' is missing"),
    ("a.jsonl", '{"text": "x"}\n', "classify", r"line 1: field 'label' is missing"),
    ("a.jsonl", '{"text": "x", "label": null}\n', "classify", r"line 1: field 'label' is null"),
    ("a.jsonl", '{"text": 5, "label": "a"}\n', "classify", r"line 1: field 'text': expected a string, got a number"),
    ("a.jsonl", '{"text": "x", "label": ["a"]}\n', "classify", r"line 1: field 'label': expected a label"),
    ("a.jsonl", '{"text": "x", "text_pair": 3, "label": "a"}\n', "classify", r"field 'text_pair': expected a string"),
    ("a.jsonl", '\n\n{"text": "x", "label": "a"\n', "classify", r"line 3: invalid JSON"),
    ("a.jsonl", '["x", "a"]\n', "classify", r"line 1: expected a JSON object, got list"),
    ("a.jsonl", "\n  \n", "classify", r"a\.jsonl: empty file \(no rows\)"),
    ("a.csv", "text,label\n", "classify", r"a\.csv: empty file"),
    ("a.csv", "", "classify", r"empty file"),
    ("a.csv", "text,label\nx,a,extra\n", "classify", r"line 2: 3 columns, but the header has 2"),
    ("a.csv", "text,text\nx,a\n", "classify", r"line 1: the header names column 'text' twice"),
    ("a.csv", 'text,label\n"unclosed,a\n', "classify", r"a\.csv: line \d+: invalid CSV"),
    ("t.jsonl", '{"tokens": ["a", "b"], "tags": ["x"]}\n', "tag", r"line 1: field 'tags': 1 tags for 2 tokens"),
    ("t.jsonl", '{"tokens": "a b", "tags": ["x", "y"]}\n', "tag", r"field 'tokens': expected a list, got a string"),
    ("t.jsonl", '{"tokens": ["a", 2], "tags": ["x", "y"]}\n', "tag", r"field 'tokens\[1\]': expected a string"),
    ("t.tsv", "tokens\ttags\na b\tx\n", "tag", r"t\.tsv: line 2: field 'tags': 1 tags for 2 tokens"),
    ("q.jsonl", json.dumps({**SQUAD_ROW, "answers": {"text": ["Denver"], "answer_start": [3]}}) + "\n", "qa",
     r"line 1: field 'answers': answer 0 'Denver' is not in the context at answer_start=3 \(the context has 'ver Br'"),
    ("q.jsonl", json.dumps({**SQUAD_ROW, "answers": {"text": ["Denver"], "answer_start": []}}) + "\n", "qa",
     r"field 'answers': 1 texts but 0 answer_start values"),
    ("q.jsonl", json.dumps({**SQUAD_ROW, "answers": {"text": ["Denver"], "answer_start": ["0"]}}) + "\n", "qa",
     r"field answers\.answer_start\[0\]: expected a character offset, got '0'"),
    ("q.jsonl", json.dumps({**SQUAD_ROW, "answers": ["Denver"]}) + "\n", "qa", r"field 'answers': expected a list of"),
    ("q.jsonl", json.dumps({"id": "1", "question": "?", "answers": []}) + "\n", "qa", r"field 'context' is missing"),
    ("q.json", json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": [
        {"id": "1", "question": "?", "answers": [{"text": "x", "answer_start": 0}]}]}]}]}),
     "qa", r"q\.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]: field 'answers': answer 0 'x' is not in the context"),
    ("q.json", json.dumps({"data": [{"title": "no paragraphs"}]}), "qa",
     r"data\[0\]: field 'paragraphs': expected a list"),
    ("q.json", json.dumps({"data": []}), "classify", r"SQuAD's nested format holds question answering"),
    ("a.txt", "x\n", "classify", r"a\.txt: cannot tell the format from the suffix '\.txt'"),
])
def test_each_problem_is_one_error(tmp_path, name, text, task, message):
    with pytest.raises(TokkitError, match=message):
        read_examples(write(tmp_path, name, text), task)


def test_non_utf8_names_the_line(tmp_path):
    path = write(tmp_path, "a.jsonl", b'{"text": "ok", "label": "a"}\n{"text": "caf\xe9", "label": "a"}\n')
    with pytest.raises(TokkitError, match=r"a\.jsonl: line 2: invalid UTF-8"):
        read_examples(path, "classify")


def test_missing_file_and_unknown_task(tmp_path):
    with pytest.raises(TokkitError, match=r"nope\.jsonl: cannot read"):
        read_examples(tmp_path / "nope.jsonl", "classify")
    with pytest.raises(TokkitError, match="unknown task 'ner'"):
        read_examples(tmp_path / "nope.jsonl", "ner")


def test_a_train_limit_sample_is_fixed_nested_and_in_file_order():
    from tokkit.labelled import sample_rows

    rows = [{"text": str(i), "label": "x"} for i in range(50)]
    five, ten = sample_rows(rows, 5, "t.jsonl"), sample_rows(rows, 10, "t.jsonl")
    assert five == sample_rows([dict(r) for r in rows], 5) and len(ten) == 10  # rows and N alone decide
    assert all(r in ten for r in five)  # a larger sample holds every smaller one
    assert [int(r["text"]) for r in ten] == sorted(int(r["text"]) for r in ten)
    assert five != rows[:5] and sample_rows(rows, 50) == rows and sample_rows(rows, None) is rows
    with pytest.raises(TokkitError, match="--train-limit 51 exceeds the file's 50 rows"):
        sample_rows(rows, 51, "t.jsonl")


def test_an_auto_length_is_the_99th_percentile_with_specials_to_a_multiple_of_8_within_the_positions():
    import tokkit
    from tokkit.labelled.lengths import fit_length, row_lengths

    assert fit_length(list(range(1, 101)), cap=512) == 104  # the 99th of 1..100 is 99, up to 104
    assert fit_length([3] * 199 + [500], cap=512) == 8  # one long row in 200 does not set the length
    assert fit_length([3, 700], cap=64, quantile=100) == 64
    tok = tokkit.train(texts=["the cat sat on the mat"] * 50, algo="wordpiece", vocab_size=60)
    words = len(tok.encode("the cat sat"))
    rows = [{"text": "the cat sat", "text_pair": None}]
    assert row_lengths(tok, "classify", rows) == [words + 2]  # [CLS] A [SEP]
    assert row_lengths(tok, "classify", [{"text": "the cat sat", "text_pair": "on the mat"}]) == \
        [words + len(tok.encode("on the mat")) + 3]
    assert row_lengths(tok, "tag", [{"tokens": ["the", "cat", "sat"]}]) == [words + 2]
