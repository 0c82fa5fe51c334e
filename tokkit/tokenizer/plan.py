"""Which compiled code encodes a tokenizer's text, and why: the one place that decides.

Two compiled engines run a tokenizer's pipeline:

- the general path, tokkit._native.pipeline.PipelineEncoder, runs any supported pipeline: each
  component describes its compiled step (its `native()` method), and the engine composes them;
- the fast encoder, tokkit._native.encode.Encoder, runs three common pipelines with lookup tables
  of its own (the general path's special cases):

  engine     normalizer              pre-tokenizer                              model
  wordpiece  none or BertNormalizer  BertPreTokenizer                           WordPiece
  bpe        none or BertNormalizer  BertPreTokenizer                           BPE (an end-of-word suffix at most)
  bytelevel  none or NFC             ByteLevel with its regex, or a Split regex BPE (no prefix nor suffix)
                                     (Isolated, or any behaviour that cuts
                                     as it: _cuts_as_isolated) then
                                     ByteLevel without it

  and only when every added token is either a model token at its own id or, past the vocabulary's
  ids, a token the model lacks (Llama 3's specials); an added token at another model token's id is
  left to the general path. A BPE with byte fallback, fuse_unk, dropout or a continuing-subword prefix,
  and a WordPiece token longer than MAX_TOKEN_CHARS (the fast tables hold every prefix of every token),
  take the general path.

  Added tokens' flags: both engines find the tokens with one matcher (added_tokens.hpp), whose
  single_word, lstrip and rstrip read the chars around a token through the general path's class
  table (MPNet's `<mask>` with lstrip runs on the fast WordPiece). A `normalized` token is matched
  after the raw ones, in the text between them, in its normalized form; the fast encoder matches
  the raw text, which is the normalized text only without a normalizer or, in the NFC lane, for
  the texts NFC leaves alone (GPT-NeoX's runs of spaces). Behind BertNormalizer a normalized token
  takes the general path (a lowercasing one makes "Hello" of "hello"), and so do add_prefix_space
  with a single_word or rstrip token or one holding a space (they would read the spaces the lane
  puts in).

Lanes decide how a text goes through an engine:

- around the byte-level fast path, per text: PrefixSpaceEncoder (prefix_space.py) puts ByteLevel's
  `add_prefix_space` space before each text part (the parts between the Encoder's own matches);
  NfcEncoder (nfc_lane.py) gives the few texts NFC may change to the general path's normalizer (or,
  when an added token is near, to the general path);
- inside the general path: the chunk lane (`chunk_lane`) encodes the ids of a text without offsets
  chunk by chunk between spaces, through a memo of chunks, where that gives the whole text's ids;
  the UTF-8 lane (`utf8_lane`) normalizes and pre-tokenizes a text whose offsets nobody asked for as
  bare UTF-8, where every step is one that lane implements (an allow-list), and says why not elsewhere.

The decoder and the post-processor play no part: they act after encoding. `plan(spec).reason` says
in words why a pipeline runs where it does; `tokkit.tokenizer.encoders.build_encoder` builds what
the plan says.

>>> from tokkit.tokenizer.recipes import wordpiece_spec
>>> spec = wordpiece_spec(["[UNK]", "a"], ["[UNK]"])
>>> plan(spec).engine, plan(spec).reason
('wordpiece', "BERT's normalizer and split, then WordPiece")
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import regex

from tokkit._native import unicode_tables as ut
from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit._native.patterns import NAMED
from tokkit._native.pipeline import SCANNER_FAMILIES, NormKind, PreKind, ScanKind
from tokkit.text.normalize import BertNorm
from tokkit.tokenizer import normalizers as norm
from tokkit.tokenizer import pre_tokenizers as pre
from tokkit.tokenizer.aligned import aligned, has_flag
from tokkit.tokenizer.files import MAX_TOKEN_CHARS
from tokkit.tokenizer.models import BPE, WordPiece
from tokkit.tokenizer.onig_regex import regex_of
from tokkit.tokenizer.precompiled import transform
from tokkit.tokenizer.spec import AddedToken, Spec


@dataclass(frozen=True)
class FastForm:
    """What the fast Encoder is built from (tokkit._native.encode.Encoder.build): plain values read
    off the components."""

    kind: str                             # "wordpiece", "bpe" (char BPE) or "bytelevel"
    vocab: list[str | None]               # the model's tokens by id (None at an added token's id past them)
    added: tuple[AddedToken, ...]
    unk_token: str | None = None
    normalizer: BertNorm | None = None    # BERT's normalization (wordpiece, bpe), or none
    prefix: str = "##"                    # WordPiece
    max_input_chars_per_word: int = 100
    merge_ids: tuple = ((), (), ())        # BPE's merges as left, right and merged ids (BPE.merge_ids)
    suffix: str | None = None             # char BPE's end-of-word suffix
    family: int = SCANNER_FAMILIES["gpt2"]  # the byte-level scanner ...
    pattern: regex.Pattern | None = None  # ... or a Split regex none of them covers
    ignore_merges: bool = False
    utf8_ids: bool = False                # bytelevel: ids without offsets read the text's UTF-8 (utf8_route)


@dataclass(frozen=True)
class Plan:
    """Where a pipeline runs: `engine` ("wordpiece", "bpe", "bytelevel" or "general"), why, and the lanes."""

    engine: str
    reason: str
    form: FastForm | None = None   # the fast engines'
    prefix_space: bool = False     # bytelevel: PrefixSpaceEncoder around it
    nfc: bool = False              # bytelevel: NfcEncoder around it
    chunk_lane: bool = False       # general: ids without offsets chunk by chunk
    utf8_ids: bool = False         # general: ids without offsets over bare UTF-8 (utf8_lane) ...
    utf8_reason: str = ""          # ... and why it is on or off

    def routes(self) -> dict[str, str]:
        """The route each output runs, by output kind: ids (encode, encode_batch), flat ids
        (encode_batch_flat), numpy (encode_to_numpy) and ids with offsets (encode_full, encodings).

        >>> from tokkit.tokenizer.recipes import byte_level_spec
        >>> plan(byte_level_spec(["a"], [], [])).routes()["numpy"]
        'bytelevel over UTF-8'
        """
        if self.engine == "general":
            ids = "general, " + ("UTF-8 lane" if self.utf8_ids else "code points with alignments")
            ids += ", chunk lane" if self.chunk_lane else ""
            offsets = "general, code points with alignments"
        else:
            utf8 = self.form is not None and self.form.utf8_ids
            ids = f"{self.engine} over " + ("UTF-8" if utf8 else "code points")
            offsets = f"{self.engine} over code points"
        lanes = "".join(f" in the {name} lane" for name, on in (("NFC", self.nfc), ("prefix-space", self.prefix_space))
                        if on)
        return {kind: route + lanes for kind, route in
                (("ids", ids), ("flat ids", ids), ("numpy", ids), ("ids with offsets", offsets))}


def _fast_added(spec: Spec) -> bool:
    """Whether the fast encoders take the added tokens: each the model's token at the same id, or a
    token the model does not have at an id past its vocabulary (Llama 3's 256 specials; GPT-NeoX's
    runs of spaces). The fast encoders find either in the text, before the model, and write its id."""
    tokens = spec.pipeline.model.tokens
    if not all(tokens[a.id] == a.content for a in spec.added if a.id < len(tokens)):
        return False
    outside = [a.content for a in spec.added if a.id >= len(tokens)]
    return not outside or not any(content in spec.pipeline.model.ids for content in outside)


def model_vocab(spec: Spec) -> list[str | None]:
    """The model's tokens by id, over all the tokenizer's ids: an id past them (an added token's) holds
    None, since the model never writes it; the added tokens are matched apart (tokenizers matches a
    `normalized: false` one in the raw text only, so "Hello" is no "hello" behind a lowercasing BERT).

    >>> from dataclasses import replace
    >>> from tokkit.tokenizer.recipes import wordpiece_spec
    >>> spec = wordpiece_spec(["[UNK]", "a"], ["[UNK]"])
    >>> model_vocab(replace(spec, added=spec.added + (AddedToken(2, "hello"),)))
    ['[UNK]', 'a', None]
    """
    tokens = list(spec.pipeline.model.tokens)
    return tokens + [None] * (len(spec.vocab) - len(tokens))


def plan(spec: Spec) -> Plan:
    """The engine and lanes for `spec`'s pipeline (see the module docstring)."""
    model = spec.pipeline.model
    if not _fast_added(spec):
        return general(spec, "an added token names a model token at another id")
    if isinstance(model, WordPiece):
        return _wordpiece(spec)
    if isinstance(model, BPE):
        return _bpe(spec)
    return general(spec, f"no fast path runs a {type(model).__name__} model")


def general(spec: Spec, reason: str) -> Plan:
    utf8_ids, utf8_reason = utf8_lane(spec)
    return Plan("general", reason, chunk_lane=chunk_lane(spec), utf8_ids=utf8_ids, utf8_reason=utf8_reason)


def _normalized_behind(spec: Spec) -> str | None:
    """Why the fast encoder cannot match a `normalized` added token behind BERT's normalizer, or None.
    tokenizers matches such a token in the normalized text ("Hello" is "hello" behind a lowercasing
    one), and the fast encoder matches every token in the raw text: the same only without a normalizer
    (or in the NFC lane's texts, which NFC leaves as they are)."""
    if spec.pipeline.normalizer is not None and any(a.normalized for a in spec.added):
        return ("an added token with normalized: true behind BertNormalizer (tokenizers matches it in the "
                "normalized text; the fast encoder matches the raw text)")
    return None


def fast_added(spec: Spec) -> tuple[AddedToken, ...]:
    """The added tokens as the fast encoder matches them: a `normalized` one in its normalized form
    (added_native's content).

    >>> from tokkit.tokenizer.recipes import byte_level_spec
    >>> spec = byte_level_spec(["a"], [], [])
    >>> fast_added(replace(spec, pipeline=replace(spec.pipeline, normalizer=norm.NFC()),
    ...                    added=(AddedToken(1, "e\u0301", normalized=True),)))[0].content
    'é'
    """
    return tuple(replace(a, content=matched_content(a, spec.pipeline.normalizer)) for a in spec.added)


def _wordpiece(spec: Spec) -> Plan:
    p, model = spec.pipeline, spec.pipeline.model
    if not _bert_or_none(p.normalizer) or not isinstance(p.pre_tokenizer, pre.BertPreTokenizer):
        return general(spec, "WordPiece behind another normalizer or pre-tokenizer than BERT's")
    if why := _normalized_behind(spec):
        return general(spec, why)
    if max(len(t) for t in model.tokens if t) > MAX_TOKEN_CHARS:
        return general(spec, f"a token longer than {MAX_TOKEN_CHARS} characters (the fast tables hold every "
                             "prefix of every token)")
    form = FastForm("wordpiece", model_vocab(spec), fast_added(spec), model.unk_token, _bert_options(p.normalizer),
                    prefix=model.continuing_subword_prefix, max_input_chars_per_word=model.max_input_chars_per_word)
    return Plan("wordpiece", "BERT's normalizer and split, then WordPiece", form)


def _bpe(spec: Spec) -> Plan:
    p, model = spec.pipeline, spec.pipeline.model
    if model.byte_fallback or model.fuse_unk or model.dropout or model.continuing_subword_prefix:
        return general(spec, "a BPE with byte_fallback, fuse_unk, dropout or a continuing_subword_prefix")
    if not isinstance(p.pre_tokenizer, pre.BertPreTokenizer):
        return _byte_level(spec)
    if model.ignore_merges or not _bert_or_none(p.normalizer):
        return general(spec, "a BPE behind BERT's split with ignore_merges, or another normalizer than BERT's")
    if why := _normalized_behind(spec):
        return general(spec, why)
    form = FastForm("bpe", model_vocab(spec), fast_added(spec), model.unk_token, _bert_options(p.normalizer),
                    merge_ids=model.merge_ids, suffix=model.end_of_word_suffix or None)
    return Plan("bpe", "BERT's normalizer and split, then character BPE", form)


def _byte_level(spec: Spec) -> Plan:
    p, model = spec.pipeline, spec.pipeline.model
    split = byte_level_split(p.pre_tokenizer)
    if split is None or not (p.normalizer is None or isinstance(p.normalizer, norm.NFC)) or model.end_of_word_suffix:
        return general(spec, "a BPE behind a normalizer or pre-tokenizer no fast path runs")
    scanner, pattern, prefix_space = split
    if prefix_space and (why := _spaced_apart(spec)):
        return general(spec, why)
    form = FastForm("bytelevel", model_vocab(spec), fast_added(spec), model.unk_token, merge_ids=model.merge_ids,
                    family=SCANNER_FAMILIES[scanner or "gpt2"],
                    pattern=None if scanner else regex_of({"Regex": pattern}),  # read as Oniguruma reads it
                    ignore_merges=model.ignore_merges, utf8_ids=utf8_route(spec.added))
    nfc = isinstance(p.normalizer, norm.NFC)
    lanes = " and ".join(name for name, on in (("NFC", nfc), ("add_prefix_space", prefix_space)) if on)
    reason = f"a byte-level BPE{f', with {lanes} as lanes around it' if lanes else ''}"
    return Plan("bytelevel", reason, form, prefix_space=prefix_space, nfc=nfc)


def utf8_route(added) -> bool:
    """Whether the fast byte-level encoder gives ids without offsets from the text's UTF-8: yes unless
    an added token's single_word, lstrip or rstrip reads the chars around it, which the matcher's
    predicates read as code points.

    >>> utf8_route((AddedToken(5, "<m>"),)), utf8_route((AddedToken(5, "<m>", lstrip=True),))
    (True, False)
    """
    return not any(a.single_word or a.lstrip or a.rstrip for a in added)


def _spaced_apart(spec: Spec) -> str | None:
    """Why PrefixSpaceEncoder's spaced text would match other added tokens than the text, or None.
    It puts a space before each text part that does not start with one, right after a match (or at
    the start), and the fast encoder matches the tokens again in the spaced text: a token holding a
    space could then match across it, single_word would see it as the char after a token, and rstrip
    would take it (lstrip never reaches back past a match, and a part starts with no white space it
    could take)."""
    if any(" " in a.content for a in spec.added):
        return "add_prefix_space with an added token that holds a space"
    if any(a.single_word or a.rstrip for a in spec.added):
        return "add_prefix_space with a single_word or rstrip added token (it reads the space put after it)"
    return None


def byte_level_split(pre_tokenizer) -> tuple[str | None, str | None, bool] | None:
    """(compiled scanner or None, Split pattern, add_prefix_space) of the byte-level pre-tokenizers the
    fast path runs, or None for any other.

    >>> byte_level_split(pre.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True))
    ('gpt2', None, True)
    """
    if isinstance(pre_tokenizer, pre.ByteLevel) and pre_tokenizer.use_regex:
        return "gpt2", None, pre_tokenizer.add_prefix_space
    if not (isinstance(pre_tokenizer, pre.Sequence) and len(pre_tokenizer.pretokenizers) == 2):
        return None
    split, byte_level = pre_tokenizer.pretokenizers
    if not (isinstance(byte_level, pre.ByteLevel) and not byte_level.use_regex and not byte_level.add_prefix_space
            and isinstance(split, pre.Split) and "Regex" in split.pattern and _cuts_as_isolated(split)):
        return None
    return split.scanner, split.pattern["Regex"], False


def _cuts_as_isolated(split: pre.Split) -> bool:
    """Whether a Split cuts as the fast path's Isolated split does. The compiled families' patterns
    (gpt2, cl100k, qwen2, o200k) match at every char, so they leave no text between matches: then
    Removed with invert (OLMo 2's: the matches kept, the nothing between them removed) and the
    merging behaviours (nothing to merge with) give the Isolated pieces too; Contiguous does not.

    >>> _cuts_as_isolated(pre.Split({"Regex": NAMED["cl100k"]}, "Removed", True))
    True
    >>> _cuts_as_isolated(pre.Split({"Regex": r"\\w+"}, "Removed", True))
    False
    """
    if split.behavior == "Isolated" and not split.invert:
        return True
    if split.scanner is None or split.behavior == "Contiguous":
        return False
    return split.behavior != "Removed" or split.invert


def _bert_or_none(normalizer) -> bool:
    return normalizer is None or isinstance(normalizer, norm.BertNormalizer)


def _bert_options(normalizer) -> BertNorm | None:
    return None if normalizer is None else normalizer.options


def matched_content(token: AddedToken, normalizer) -> str:
    """An added token's content as both engines match it: a normalized one in its normalized form."""
    if token.normalized and normalizer is not None:
        return normalizer.normalize(aligned(token.content))[0]
    return token.content


# ------------------------------------------------------------------------------ the UTF-8 lane
# The compiled steps the ids-only UTF-8 lane implements (pipeline_utf8.hpp's normalize_utf8,
# pipeline_ids.hpp's pre_tokenize_utf8), by the kind each component describes itself as (`native()`).
# A step not listed keeps the whole pipeline on the path with alignments: the lane never skips one.
UTF8_NORMALIZER_STEPS = frozenset({
    NormKind.N_NFD, NormKind.N_NFKD, NormKind.N_NFC, NormKind.N_NFKC, NormKind.N_LOWER, NormKind.N_STRIP,
    NormKind.N_STRIP_ACCENTS, NormKind.N_REPLACE, NormKind.N_PREPEND, NormKind.N_PRECOMPILED, NormKind.N_NMT})
UTF8_PRE_TOKENIZER_STEPS = frozenset({
    PreKind.P_METASPACE, PreKind.P_BYTELEVEL, PreKind.P_SPLIT_STRING, PreKind.P_SPLIT_PYTHON,
    PreKind.P_SPLIT_FAMILY, PreKind.P_SPLIT_SCAN, PreKind.P_WHITESPACE, PreKind.P_WHITESPACE_SPLIT,
    PreKind.P_PUNCTUATION, PreKind.P_DIGITS, PreKind.P_BERT})


def utf8_lane(spec: Spec) -> tuple[bool, str]:
    """Whether the general path gives ids without offsets through the UTF-8 lane, and why.

    >>> from tokkit.tokenizer.recipes import wordpiece_spec
    >>> utf8_lane(wordpiece_spec(["[UNK]", "a"], ["[UNK]"]))
    (False, 'the UTF-8 lane has no step for the normalizer BertNormalizer')
    """
    p = spec.pipeline
    if any(a.normalized for a in spec.added):
        return False, "an added token is matched in the normalized text, which the UTF-8 lane does not keep"
    for field, component, allowed in (("normalizers", p.normalizer, UTF8_NORMALIZER_STEPS),
                                      ("pretokenizers", p.pre_tokenizer, UTF8_PRE_TOKENIZER_STEPS)):
        for step in _leaves(component, field):
            if not all(d["kind"] in allowed for d in step.native()):
                what = "normalizer" if field == "normalizers" else "pre-tokenizer"
                return False, f"the UTF-8 lane has no step for the {what} {_step_name(step)}"
    return True, "every normalizer and pre-tokenizer step has its UTF-8 form"


def _step_name(step) -> str:
    """A component by its type, and a Replace by its pattern too (a String is compiled, a regex may not be)."""
    name = type(step).__name__
    return f"{name}({step.pattern})" if isinstance(step, norm.Replace) else name


# ------------------------------------------------------------------------------ the chunk lane
def chunk_lane(spec: Spec) -> bool:
    """Whether the general path's chunk lane gives the whole pipeline's ids (Pipeline::encode_chunks in
    pipeline.hpp). The lane cuts a text before a run of spaces ' ' that follows a char X that is no white
    space (nor a grapheme Prepend) and precedes ASCII, and adds up the chunks' ids. That is exact when:

    1. The normalizer gives the chunks' normalized texts end to end. Each step acts within the chunks
       and leaves alone the ' ' that start every chunk but the first (_leaves_spaces_alone), so the
       chunks keep starting with them (or, after Replace(" {2,}", C), with C's first char, which later
       steps must leave alone too). Only Strip(right) and Replace(" {2,}") read the end of their text,
       and they see the whole text's at a cut as long as the chunk there still ends in X' that is no
       white space. Any step may make or delete white space at a chunk's end (a Precompiled map turns
       U+200B, U+200E, U+FEFF, U+FFFD into ' '; StripAccents, Replace(X, "") and Precompiled delete
       chars, so a tab before a mark shows), so no step is trusted with it: the compiled lane checks
       each chunk's end before and after every step and, when one is white space, gives the rest of
       the text to the whole-text path (Scratch::ragged). Then X' also holds when the pre-tokenizer runs.
    2. The pre-tokenizer starts a piece at every cut, or the model never sees across one:
       - Metaspace with `split` starts pieces at its replacement, WhitespaceSplit, Whitespace and BERT's
         at white space: at every cut when each chunk starts with such a char (`lead`, what chunks but
         the first start with, follows each step: Metaspace turns ' ' into its replacement, ByteLevel
         into 'Ġ'). Metaspace's "first" scheme reads a piece's original offset, 0 for a chunk's first
         piece: safe only when that piece starts with the replacement, which is then not prepended
         (an earlier Metaspace of scheme "always" puts its own replacement first in every chunk).
       - A regex split (GPT-2's pattern, ByteLevel's regex, the cl100k / qwen2 / o200k scanners,
         Isolated and not inverted) is exact over chunks when it sees X' and then the chunk's ' ' (or
         an earlier step already starts pieces there). Then no piece holds both X' and the ' ', so the
         pieces of the whole are the pieces of the chunks: the scan reaches the cut at a piece start
         either way, and its one look-ahead, (?!\\S), sees the ' ' in the whole text and the end in the
         chunk, and holds in both. Alternative by alternative, a piece holding X' ends at X':
           - the contractions (?i:'s|'t|...) hold no space; \\p{L}+, \\p{N}{1,3} or \\p{N}, o200k's cased
             runs [\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]* / [\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+ hold no white space;
           - a space may only start a piece: [^\\r\\n\\p{L}\\p{N}]? and GPT-2's " ?" stand first in their
             alternatives, and what follows them (\\p{L}+, \\p{N}+, [^\\s\\p{L}\\p{N}]+, then [\\r\\n]* or
             [\\r\\n/]*) never matches ' ';
           - \\s*[\\r\\n]+, \\s+(?!\\S) and \\s+ hold white space only, so never X', whatever they
             backtrack to.
         DeepSeek V3's pattern (pipeline_scan.hpp) holds so too: [A-Za-z]+ and [\\p{L}\\p{M}]+ hold no
         white space and the char before them (if any) stands first; " ?" stands first in " ?[\\p{P}\\p{S}]+
         [\\r\\n]*"; its white space alternatives are GPT-2's; and a ' ' always starts a match (one of
         the white space alternatives takes it if no other does), so no skipped char holds it either.
       - Punctuation and Digits only cut more, and so do Isolated Splits on \\p{N}{1,3} and on DeepSeek
         V3's kana/han runs (their matches hold no white space: the pieces between them are cut at
         the cuts by the later split); a Unigram or BPE model that never joins a U+2581 to the
         char before it (`cuts_at_metaspace`) sees no further than a Metaspace without `split`.
    3. No added token reads the normalized text, holds a space, or takes the spaces after it.

    >>> from tokkit.tokenizer.recipes import byte_level_spec
    >>> chunk_lane(byte_level_spec(["a"], [], []))
    True
    """
    p = spec.pipeline
    if any(a.normalized or a.rstrip or " " in a.content for a in spec.added):
        return False
    lead = {" "}  # what each chunk but the first starts with
    for step in _leaves(p.normalizer, "normalizers"):
        if not _leaves_spaces_alone(step, lead):
            return False
        if isinstance(step, norm.Replace) and step.pattern.get("Regex") == " {2,}":
            if not step.content.startswith((" ", "\u2581")):
                return False  # the spaces may become nothing, or a char later steps and splits treat otherwise
            lead.add(step.content[0])
    return _pre_tokenizer_keeps_cuts(spec, lead)


def _pre_tokenizer_keeps_cuts(spec: Spec, lead: set[str]) -> bool:
    """Part 2 of chunk_lane's proof: the pre-tokenizer (and the model) see nothing across a cut."""
    cuts_at_metaspace = getattr(spec.pipeline.model, "cuts_at_metaspace", False)
    cut = False       # some step starts a piece at every cut
    splits = False    # ... or the model sees nothing across one
    at_start = True   # a chunk's first piece still starts at the chunk's first char (offset 0)
    for step in _leaves(spec.pipeline.pre_tokenizer, "pretokenizers"):
        if isinstance(step, pre.Metaspace):
            rep = step.replacement
            replaced = {rep if c == " " else c for c in lead}
            prepends = step.prepend_scheme == "always" or (step.prepend_scheme == "first" and at_start)
            if prepends and not replaced <= {rep} and (step.prepend_scheme == "first" or not cut):
                # each chunk's first piece would get the replacement where the text has none: "first"
                # prepends to the text's first piece only, and a cut no step has made a piece start
                # lies inside a piece of the text
                return False
            # "always" puts the replacement before every piece that lacks it, so before every chunk
            lead = {rep} if prepends and cut else replaced
            cut = cut or (step.split and lead == {step.replacement})
            splits = splits or cut or (cuts_at_metaspace and lead == {"\u2581"} == {step.replacement})
        elif isinstance(step, (pre.Whitespace, pre.WhitespaceSplit, pre.BertPreTokenizer)):
            white = all(has_flag(c, ut.WHITESPACE) for c in lead)  # then they drop the chunk's first chars
            cut = splits = cut or white
            at_start = at_start and not white
        elif isinstance(step, pre.ByteLevel) and not step.use_regex:
            lead = _byte_level_lead(step, lead)
        elif isinstance(step, pre.Split) and step.class_scan is not None and step.class_scan != ScanKind.SCAN_DEEPSEEK:
            if step.behavior != "Isolated" or step.invert:
                return False
            # \p{N}{1,3} and the kana/han runs match no white space: they only cut more (as Punctuation)
        elif isinstance(step, pre.ByteLevel) or (isinstance(step, pre.Split) and step.scanner is not None) or (
                isinstance(step, pre.Split) and step.class_scan == ScanKind.SCAN_DEEPSEEK):
            if isinstance(step, pre.Split) and (step.behavior != "Isolated" or step.invert):
                return False
            if not (cut or lead == {" "}):
                return False
            cut = splits = True
            if isinstance(step, pre.ByteLevel):
                lead = _byte_level_lead(step, lead)
        elif not isinstance(step, (pre.Punctuation, pre.Digits)):
            return False
    return splits


BYTE_SYMBOLS = bytes_to_unicode()  # ByteLevel's symbol of each byte


def _byte_level_lead(step: pre.ByteLevel, lead: set[str]) -> set[str]:
    """What each chunk's first piece starts with after ByteLevel: the symbol of its first byte, or of
    the space add_prefix_space puts before a piece that lacks one."""
    firsts = {" "} if step.add_prefix_space else lead
    return {BYTE_SYMBOLS[c.encode("utf-8")[0]] for c in firsts}


def _leaves(component, field: str) -> list:
    """A component's steps in order, Sequences opened."""
    if component is None:
        return []
    parts = getattr(component, field, None)
    return [leaf for part in parts for leaf in _leaves(part, field)] if parts is not None else [component]


def _leaves_spaces_alone(step, lead: set[str]) -> bool:
    """A normalizer step that acts within the chunks and keeps the chars that start them (`lead`).

    Prepend and Python patterns look at the ends or across spaces; Nmt and BertNormalizer make spaces
    of other chars; a left Strip eats the spaces a chunk starts with; a String pattern holding a lead
    char could match across a cut, and an empty one matches at both ends of every chunk (its content
    would come twice).
    """
    if isinstance(step, (norm.NFD, norm.NFKD, norm.NFC, norm.NFKC, norm.Lowercase, norm.StripAccents)):
        return True  # ' ' and U+2581 are their own image under each, and join no char before them
    if isinstance(step, norm.Replace):
        kind, text = next(iter(step.pattern.items()))
        if kind == "Regex":
            return text == " {2,}" and lead == {" "}
        return bool(text) and not lead & set(text)
    if isinstance(step, norm.Precompiled):
        return all(transform(step.charsmap, c) is None for c in lead)
    return isinstance(step, norm.Strip) and not step.strip_left
