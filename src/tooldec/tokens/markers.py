"""Special tokens inside a call's grammar, spelled as bytes no text can produce
(docs/call-formats.md, "Special tokens inside a call"): marker ``i`` of a format becomes an
ordinary token spelled ``0xFF, i + 1``.

``0xFF`` is never in UTF-8 text, so only the marker's own token writes its spelling (the same
text in ordinary pieces stays text), and the few ordinary tokens holding ``0xFF`` are never
allowed with such a format. A spelling is two bytes whatever the text, so shortest ways count a
marker as the one token it is.
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
    """Each marker's spelling, by its place in ``markers`` (``ValueError``: too many, or repeated).

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
    """A copy of ``vocab`` in which the tokens spelled ``markers`` are markers, made once per
    vocabulary and list (locked) and freed with the vocabulary.

    A marker is the special token with that text, else the ordinary token with those bytes (GLM's
    ``<arg_key>`` may be either). Ids and size are unchanged; a marker no longer ends generation
    (its format says what follows). ``TokenizerError`` if no single token spells a marker.

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
