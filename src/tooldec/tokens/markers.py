"""Special tokens inside a call's grammar: spelled as bytes no text can produce.

Today's call formats write their structure with special tokens: DeepSeek's
``<｜tool▁sep｜>``, Kimi's ``<|tool_call_begin|>``, gpt-oss's ``<|channel|>``, Mistral's
``[ARGS]``. Masks are computed over bytes, and a special token has none, so a format names the
tokens it writes (its *markers*, in order) and the engine compiles against a copy of the
vocabulary in which marker ``i`` is an ordinary token spelled ``0xFF, i + 1``.

``0xFF`` is never part of UTF-8 text, and no grammar piece but a marker's spelling holds it, so
only the marker's own token can write that spelling: the same text in ordinary pieces
(``<``, ``|call|``, ``>``) stays ordinary text, as the model's own parser (openai-harmony,
mistral-common, vLLM's) reads it. The few ordinary tokens that hold the byte ``0xFF`` (the raw
byte token of a byte-level vocabulary, SentencePiece's ``<0xFF>``) are never allowed with such a
format: they can only write text that is not UTF-8. A spelling is two bytes whatever the
marker's text, so a grammar's shortest ways count a marker as the one token it is.

:func:`readable` turns spelled bytes back into the text the tokenizer decodes.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

from ..errors import TokenizerError
from .vocabulary import Vocabulary

__all__ = ["MARK", "MOST_MARKERS", "readable", "spelling", "with_markers"]

MARK = 0xFF
"""The byte every marker's spelling starts with (never in UTF-8 text)."""
MOST_MARKERS = 254
"""Most markers one format may name (one byte tells them apart)."""


def spelling(markers: Sequence[str]) -> dict[str, bytes]:
    """Each marker's spelling, by its place in ``markers``.

    Raises:
        ValueError: More than :data:`MOST_MARKERS` markers, or one named twice.

    Examples:
        >>> spelling(["[TOOL_CALLS]", "[ARGS]"])
        {'[TOOL_CALLS]': b'\\xff\\x01', '[ARGS]': b'\\xff\\x02'}
    """
    if len(markers) > MOST_MARKERS or len(set(markers)) != len(markers):
        raise ValueError(f"markers must be at most {MOST_MARKERS} distinct texts, got {list(markers)}")
    return {text: bytes([MARK, i + 1]) for i, text in enumerate(markers)}


def readable(data: bytes, markers: Sequence[str]) -> bytes:
    """``data`` with every marker spelling replaced by the marker's text (what a tokenizer decodes).

    Examples:
        >>> readable(b"\\xff\\x01get_weather\\xff\\x02{}", ["[TOOL_CALLS]", "[ARGS]"])
        b'[TOOL_CALLS]get_weather[ARGS]{}'
    """
    if MARK not in data:
        return data
    texts = {spelled: text.encode("utf-8") for text, spelled in spelling(markers).items()}
    out = bytearray()
    i = 0
    while i < len(data):
        found = texts.get(data[i:i + 2]) if data[i] == MARK else None
        if found is None:
            out.append(data[i])
            i += 1
        else:
            out += found
            i += 2
    return bytes(out)


_LOCK = threading.Lock()
_DERIVED: weakref.WeakKeyDictionary[Vocabulary, dict[tuple[str, ...], Vocabulary]] = weakref.WeakKeyDictionary()


def with_markers(vocab: Vocabulary, markers: Sequence[str]) -> Vocabulary:
    """A copy of ``vocab`` in which the tokens spelled ``markers`` are markers (see the module
    docstring): made once per vocabulary and list of markers, and freed with the vocabulary.

    A marker is the special token with that text, else the ordinary token whose bytes are the
    text (GLM's ``<arg_key>`` may be either). Ids and size are unchanged, so a model's logits and
    token ids need no translation; a marker that ended generation no longer does (its format
    ends the call with it, and says what follows).

    Raises:
        TokenizerError: The vocabulary has no single token for one of the markers (a model trained
            on the format has one; name another format, or the vocabulary's own).

    Examples:
        >>> vocab = Vocabulary.from_tokens(["a", "[ARGS]", "<eos>", bytes([255])], special={1: "[ARGS]", 2: "<eos>"}, eos_ids=[2])
        >>> marked = with_markers(vocab, ["[ARGS]"])
        >>> marked.token_bytes[1], marked.token_bytes[3], sorted(marked.special)
        (b'\\xff\\x01', None, [2])
    """
    wanted = tuple(markers)
    if not wanted:
        return vocab
    with _LOCK:
        found = _DERIVED.get(vocab, {}).get(wanted)
    if found is not None:
        return found
    made = _derive(vocab, wanted)
    with _LOCK:
        return _DERIVED.setdefault(vocab, {}).setdefault(wanted, made)


def _derive(vocab: Vocabulary, markers: tuple[str, ...]) -> Vocabulary:
    by_bytes: dict[bytes, int] = {}
    for token_id, data in enumerate(vocab.token_bytes):
        if data is not None and data not in by_bytes:
            by_bytes[data] = token_id
    ids: dict[int, bytes] = {}
    for text, spelled in spelling(markers).items():
        found = vocab.special_id(text)
        if found is None:
            found = by_bytes.get(text.encode("utf-8"))
        if found is None:
            found = by_bytes.get(spelled)  # a vocabulary made by this function already
        if found is None:
            raise TokenizerError(
                f"{vocab.name}: the call format writes {text!r} as one token, and this vocabulary has no such "
                "token (special or not); it was made for another model family")
        ids[found] = spelled
    token_bytes = [None if data is not None and MARK in data else data for data in vocab.token_bytes]
    for token_id, spelled in ids.items():
        token_bytes[token_id] = spelled
    special = {tid: text for tid, text in vocab.special.items() if tid not in ids}
    eos = frozenset(vocab.eos_ids) - set(ids)
    return Vocabulary(tuple(token_bytes), special, eos, vocab.kind, f"{vocab.name}+markers")
