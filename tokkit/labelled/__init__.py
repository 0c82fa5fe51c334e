"""Labelled data for fine-tuning, without torch: files -> rows -> model inputs (numpy), and model
outputs -> predictions -> scores.

Three tasks: "classify" (a text or a pair -> one label), "tag" (a label per word) and "qa"
(extractive question answering: a span of the context). See docs/finetuning-data.md.

>>> import tokkit
>>> from tokkit.labelled import label_list, tagging_features, word_predictions
>>> tok = tokkit.train(texts=["the jury said it was fine"] * 50, algo="wordpiece", vocab_size=60)
>>> rows = [{"tokens": ["The", "jury", "said"], "tags": ["at", "nn", "vbd"]}]
>>> labels = label_list(rows, "tag")
>>> features = tagging_features(tok, rows, {t: i for i, t in enumerate(labels)})
>>> int(features["n_words"][0]), word_predictions(features["word_ids"], features["labels"])
(3, [[0, 1, 2]])
"""
from tokkit.labelled.baseline import most_frequent_tag_baseline as most_frequent_tag_baseline
from tokkit.labelled.baseline import most_frequent_tag_predictions as most_frequent_tag_predictions
from tokkit.labelled.classify import classification_features as classification_features
from tokkit.labelled.files import read_examples as read_examples
from tokkit.labelled.files import sample_rows as sample_rows
from tokkit.labelled.labels import check_labels as check_labels
from tokkit.labelled.labels import label_list as label_list
from tokkit.labelled.metrics import classification_report as classification_report
from tokkit.labelled.metrics import format_report as format_report
from tokkit.labelled.metrics import squad_report as squad_report
from tokkit.labelled.metrics import tagging_report as tagging_report
from tokkit.labelled.qa import qa_features as qa_features
from tokkit.labelled.qa import qa_predictions as qa_predictions
from tokkit.labelled.files import TASKS as TASKS
from tokkit.labelled.layouts import LAYOUTS as LAYOUTS
from tokkit.labelled.layouts import layout as layout
from tokkit.labelled.rows import Fields as Fields
from tokkit.labelled.tagging import IGNORE_INDEX as IGNORE_INDEX
from tokkit.labelled.tagging import tagging_features as tagging_features
from tokkit.labelled.tagging import text_words as text_words
from tokkit.labelled.tagging import word_predictions as word_predictions

__all__ = ["Fields", "TASKS", "LAYOUTS", "layout", "IGNORE_INDEX", "read_examples", "sample_rows", "label_list", "check_labels",
           "classification_features", "tagging_features", "word_predictions", "text_words", "qa_features",
           "qa_predictions", "classification_report", "tagging_report", "squad_report", "format_report",
           "most_frequent_tag_baseline", "most_frequent_tag_predictions"]
