"""The exact bytes of every token id, the one fact masks are computed from (DESIGN invariant 2).

Token strings in their tokenizer's encoding are decoded once, here, into plain bytes; special
tokens (no bytes: the model emits them, text never spells them) are kept apart.
"""

from __future__ import annotations

import enum
import functools
import hashlib
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import Any

from tooldec.errors import TokenizerError

__all__ = ["VocabKind", "Vocabulary", "byte_level_alphabet", "piece_bytes"]


class VocabKind(enum.Enum):
    """How a tokenizer spells token bytes in its token strings."""

    BYTE_LEVEL = "byte_level"
    """Each byte is one character of the GPT-2 alphabet (``Ġ`` a space): GPT-2, Llama-3, Qwen."""

    SENTENCEPIECE = "sentencepiece"
    """``▁`` is a space, ``<0xNN>`` a byte; a reply's first token usually begins with the
    dummy-prefix space. Llama-2, Mistral v1-v7, Gemma."""

    RAW = "raw"
    """Bytes stored as they are: Mistral Tekken files, and the UTF-8 ``str`` tokens of tests."""


@lru_cache(maxsize=1)
def byte_level_alphabet() -> dict[int, str]:
    """GPT-2's ``bytes_to_unicode`` table: byte value -> the character that spells it."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


@lru_cache(maxsize=1)
def _byte_level_translation() -> dict[int, int]:
    # characters outside the alphabet become U+FFFF, so .encode("latin-1") fails on them
    table = {ord(ch): b for b, ch in byte_level_alphabet().items()}
    for b in range(256):
        table.setdefault(b, 0xFFFF)
    return table


def piece_bytes(kind: VocabKind, piece: str) -> bytes:
    """The bytes a normal (non-special, non-byte-fallback) token string stands for; a
    ``TokenizerError`` for a byte-level piece outside the GPT-2 alphabet.

    Examples:
        >>> piece_bytes(VocabKind.BYTE_LEVEL, "ĠhelloĊ")
        b' hello\\n'
        >>> piece_bytes(VocabKind.SENTENCEPIECE, "▁world")
        b' world'
    """
    if kind is VocabKind.BYTE_LEVEL:
        try:
            return piece.translate(_byte_level_translation()).encode("latin-1")
        except UnicodeEncodeError:
            raise TokenizerError(
                f"token {piece!r} has characters outside the byte-level (GPT-2) alphabet; "
                "is this really a byte-level BPE tokenizer?"
            ) from None
    if kind is VocabKind.SENTENCEPIECE:
        return piece.replace("\u2581", " ").encode("utf-8")
    return piece.encode("utf-8")


@dataclass(frozen=True, eq=False, repr=False)
class Vocabulary:
    """Every token id's bytes, the special tokens and the ids that end generation.

    Build one with a loader (``load_vocabulary``, ``from_tokenizer_json``, ``from_sentencepiece``,
    ``from_gguf``, ``tooldec.tokens.hf.from_hf_tokenizer``) or, in tests, ``from_tokens``.
    Immutable: one vocabulary may be shared across threads.

    Args:
        token_bytes: Index = token id. ``None`` for special, control and unused ids.
        special: Special token id -> its text (``"<|im_end|>"``, ``"[TOOL_CALLS]"``). Specials
            have no bytes: a model emits them, plain text never produces them.
        eos_ids: Special ids that end generation (eos, ``<|im_end|>``, ``<|eot_id|>``...).
        kind: How the source tokenizer spelled bytes (tells, e.g., about SentencePiece's dummy
            prefix space).
        name: Where the vocabulary came from, for messages.

    Raises:
        TokenizerError: A special or eos id is out of range, a special id has bytes, or an eos
            id is not special.

    Examples:
        >>> vocab = Vocabulary.from_tokens(["a", "b", "ab", '"', "<eos>"], special={4: "<eos>"}, eos_ids=[4])
        >>> vocab.size, vocab.token_bytes[2], vocab.special_id("<eos>")
        (5, b'ab', 4)
        >>> vocab.decode([2, 3, 4])
        b'ab"<eos>'
        >>> vocab.padded(8).size  # the model's logits are wider than the tokenizer
        8
    """

    token_bytes: tuple[bytes | None, ...]
    special: Mapping[int, str]
    eos_ids: frozenset[int]
    kind: VocabKind
    name: str

    def __post_init__(self) -> None:
        size = len(self.token_bytes)
        special = MappingProxyType(dict(sorted(self.special.items())))
        for token_id in special:
            if not 0 <= token_id < size:
                raise TokenizerError(f"{self.name}: special token id {token_id} is outside the vocabulary (size {size})")
            if self.token_bytes[token_id] is not None:
                raise TokenizerError(f"{self.name}: special token id {token_id} must have no bytes (None)")
        eos_ids = frozenset(self.eos_ids)
        for token_id in eos_ids:
            if token_id not in special:
                raise TokenizerError(f"{self.name}: eos id {token_id} is not a special token")
        object.__setattr__(self, "token_bytes", tuple(self.token_bytes))
        object.__setattr__(self, "special", special)
        object.__setattr__(self, "eos_ids", eos_ids)

    @classmethod
    def from_tokens(cls, tokens: Sequence[bytes | str], *, special: Mapping[int, str] | None = None,
                    eos_ids: Iterable[int] = (), name: str = "raw") -> Vocabulary:
        """A ``RAW`` vocabulary of literal tokens (tests): entries at ``special`` ids are ignored,
        and special ids may go past ``len(tokens)``."""
        special = dict(special or {})
        size = max(len(tokens), max(special, default=-1) + 1)
        token_bytes: list[bytes | None] = [None] * size
        for token_id, token in enumerate(tokens):
            if token_id not in special:
                token_bytes[token_id] = token.encode("utf-8") if isinstance(token, str) else bytes(token)
        return cls(tuple(token_bytes), special, frozenset(eos_ids), VocabKind.RAW, name)

    @property
    def size(self) -> int:
        """The number of token ids, including specials and unused ids."""
        return len(self.token_bytes)

    @cached_property
    def fingerprint(self) -> str:
        """A sha256 hex digest of the token bytes, specials and eos ids: a cache key for masks."""
        digest = hashlib.sha256()
        digest.update(f"{self.kind.value}\0{self.size}\0".encode())
        digest.update(array("q", [-1 if b is None else len(b) for b in self.token_bytes]).tobytes())
        digest.update(b"".join(b for b in self.token_bytes if b is not None))
        for token_id, text in self.special.items():
            digest.update(f"\0{token_id}\0{text}".encode())
        digest.update(("\0eos" + ",".join(map(str, sorted(self.eos_ids)))).encode())
        return digest.hexdigest()

    @cached_property
    def _special_by_text(self) -> dict[str, int]:
        by_text: dict[str, int] = {}
        for token_id, text in self.special.items():  # sorted by id: the lowest id wins
            by_text.setdefault(text, token_id)
        return by_text

    def special_id(self, text: str) -> int | None:
        """The id of the special token spelled ``text`` (the lowest if several), or ``None``."""
        return self._special_by_text.get(text)

    def longest_match(self, data: bytes) -> list[int]:
        """A valid, not canonical, tokenization of ``data``: the longest token at each step.

        Every piece is a real token, so it is how many tokens a byte string needs at most (the
        engine's token budgets), and a quick way to reach a position in tests.

        Raises:
            TokenizerError: A byte has no token at all.
        """
        lookup = self._first_id_of_bytes
        longest = self._longest_token
        ids: list[int] = []
        i = 0
        while i < len(data):
            window = data[i : i + longest]
            size = self.longest_prefix(window)
            if not size:
                raise TokenizerError(f"{self.name}: no token covers byte {data[i]:#04x}")
            ids.append(lookup[window[:size]])
            i += size
        return ids

    def longest_prefix(self, data: bytes) -> int:
        """Bytes of the longest token ``data`` starts with (0: none): one step of :meth:`longest_match`."""
        lookup = self._first_id_of_bytes
        window = data[: self._longest_token]
        # the last token sorting at or before ``window`` starts with every token that is a prefix
        # of it: what it shares with ``window`` bounds the longest match
        j = bisect_right(self._sorted_tokens, window) - 1
        if j < 0:
            return 0
        last = self._sorted_tokens[j]
        if window.startswith(last):
            return len(last)
        size, limit = 0, min(len(last), len(window))
        while size < limit and last[size] == window[size]:
            size += 1
        while size and window[:size] not in lookup:
            size -= 1
        return size

    def extends(self, data: bytes) -> bool:
        """Whether a token longer than ``data`` starts with it: a tokenizer that reads on past the
        end of ``data`` may then cut the end differently (the last token of a forced span)."""
        tokens = self._sorted_tokens
        j = bisect_right(tokens, data)
        return j < len(tokens) and tokens[j].startswith(data)

    @property
    def longest_token(self) -> int:
        """Bytes of the longest token."""
        return self._longest_token

    def prepare_matching(self) -> None:
        """Build :meth:`longest_match`'s tables now (~50 ms at 151k tokens), not in a request."""
        _ = self._sorted_tokens, self._longest_token

    @functools.cached_property
    def _sorted_tokens(self) -> list[bytes]:
        return sorted(self._first_id_of_bytes)

    @functools.cached_property
    def _first_id_of_bytes(self) -> dict[bytes, int]:
        lookup: dict[bytes, int] = {}
        for token_id, token in enumerate(self.token_bytes):
            if token and token not in lookup:
                lookup[token] = token_id
        return lookup

    @functools.cached_property
    def _longest_token(self) -> int:
        return max((len(t) for t in self.token_bytes if t), default=1)

    def decode(self, ids: Iterable[int]) -> bytes:
        """Concatenate the bytes of ``ids``; a special token contributes its text (UTF-8).

        Raises:
            TokenizerError: An id is out of range or unused (no bytes, not special).
        """
        parts: list[bytes] = []
        for token_id in ids:
            token = self.token_bytes[token_id] if 0 <= token_id < self.size else None
            if token is None:
                text = self.special.get(token_id)
                if text is None:
                    raise TokenizerError(f"{self.name}: token id {token_id} has no bytes (unused or out of range)")
                token = text.encode("utf-8")
            parts.append(token)
        return b"".join(parts)

    def padded(self, size: int) -> Vocabulary:
        """Return a copy whose ids ``>= self.size`` up to ``size`` are unused (``None``).

        A model's logits are often wider than its tokenizer (Qwen3: 151,936 logits for 151,669
        tokens, rounded up for GPU kernels); masks must have the logits' width, and the padding
        ids must never be allowed.

        Raises:
            TokenizerError: ``size`` is smaller than the vocabulary.
        """
        if size < self.size:
            raise TokenizerError(f"{self.name}: cannot pad a vocabulary of {self.size} tokens to {size}")
        if size == self.size:
            return self
        padding: tuple[None, ...] = (None,) * (size - self.size)
        return Vocabulary(self.token_bytes + padding, self.special, self.eos_ids, self.kind, self.name)

    def with_eos(self, names_or_ids: Iterable[int | str]) -> Vocabulary:
        """Return a copy whose generation ends on these specials (ids or texts) instead.

        Chat templates end turns on their own tokens (``<|im_end|>``, ``<|eot_id|>``); a server that
        drives a model differently chooses its own set.

        Raises:
            TokenizerError: A text names no special token, or an id is not special.

        Examples:
            >>> vocab = Vocabulary.from_tokens(["a", "<eos>", "<end>"], special={1: "<eos>", 2: "<end>"}, eos_ids=[1])
            >>> sorted(vocab.with_eos(["<end>"]).eos_ids)
            [2]
        """
        ids = set()
        for item in names_or_ids:
            if isinstance(item, str):
                found = self.special_id(item)
                if found is None:
                    raise TokenizerError(f"{self.name}: no special token {item!r}")
                ids.add(found)
            else:
                ids.add(int(item))
        return Vocabulary(self.token_bytes, self.special, frozenset(ids), self.kind, self.name)

    def __reduce__(self) -> tuple[Any, ...]:
        # MappingProxyType does not pickle; rebuild from plain values (multiprocessing, caches).
        return (Vocabulary, (self.token_bytes, dict(self.special), self.eos_ids, self.kind, self.name))

    def __repr__(self) -> str:
        return (f"Vocabulary(name={self.name!r}, kind={self.kind.name}, size={self.size}, "
                f"special={len(self.special)}, eos_ids={sorted(self.eos_ids)})")
