"""Vocabulary: construction checks, decode, padding, fingerprint, pickling, byte-level pieces."""

from __future__ import annotations

import pickle
import random

import pytest

from tooldec.errors import TokenizerError
from tooldec.tokens import VocabKind, Vocabulary
from tooldec.tokens.vocabulary import byte_level_alphabet, piece_bytes


def _tiny() -> Vocabulary:
    return Vocabulary.from_tokens(["a", b"\xc3", "é", "<s>", "</s>"], special={3: "<s>", 4: "</s>"}, eos_ids=[4])


def test_from_tokens_builds_a_raw_vocabulary() -> None:
    vocab = _tiny()
    assert vocab.kind is VocabKind.RAW
    assert vocab.token_bytes == (b"a", b"\xc3", "é".encode(), None, None)
    assert (vocab.size, vocab.eos_ids, vocab.special_id("</s>"), vocab.special_id("a")) == (5, frozenset({4}), 4, None)


def test_special_ids_past_the_tokens_leave_an_unused_gap() -> None:
    vocab = Vocabulary.from_tokens(["a"], special={3: "<eos>"}, eos_ids=[3])
    assert vocab.token_bytes == (b"a", None, None, None)
    with pytest.raises(TokenizerError, match="token id 1 has no bytes"):
        vocab.decode([0, 1])


def test_decode_joins_bytes_and_spells_specials() -> None:
    vocab = _tiny()
    assert vocab.decode([3, 0, 1, 4]) == b"<s>a\xc3</s>"  # half a UTF-8 character is fine
    assert vocab.decode([]) == b""
    for bad in (-1, 5, 99):
        with pytest.raises(TokenizerError, match=f"token id {bad}"):
            vocab.decode([bad])


@pytest.mark.parametrize(
    ("special", "eos", "message"),
    [
        ({7: "<x>"}, (), "outside the vocabulary"),
        ({-1: "<x>"}, (), "outside the vocabulary"),
        ({}, (0,), "eos id 0 is not a special token"),
    ],
)
def test_inconsistent_vocabularies_are_rejected(special: dict[int, str], eos: tuple[int, ...], message: str) -> None:
    with pytest.raises(TokenizerError, match=message):
        Vocabulary((b"a", None), special, frozenset(eos), VocabKind.RAW, "bad")


def test_a_special_token_cannot_have_bytes() -> None:
    with pytest.raises(TokenizerError, match="special token id 0 must have no bytes"):
        Vocabulary((b"a",), {0: "a"}, frozenset(), VocabKind.RAW, "bad")


def test_padded_adds_unused_ids_up_to_the_logits_width() -> None:
    vocab = _tiny()
    wide = vocab.padded(8)
    assert wide.token_bytes == vocab.token_bytes + (None, None, None)
    assert (wide.special, wide.eos_ids, wide.kind) == (vocab.special, vocab.eos_ids, vocab.kind)
    assert vocab.padded(5) is vocab
    with pytest.raises(TokenizerError, match="cannot pad"):
        vocab.padded(4)


def test_fingerprint_changes_with_bytes_specials_and_eos() -> None:
    base = _tiny().fingerprint
    assert base == _tiny().fingerprint
    variants = [
        Vocabulary.from_tokens(["a", b"\xc3", "è", "<s>", "</s>"], special={3: "<s>", 4: "</s>"}, eos_ids=[4]),
        Vocabulary.from_tokens(["a", b"\xc3", "é", "<s>", "</s>"], special={3: "<s>", 4: "</e>"}, eos_ids=[4]),
        Vocabulary.from_tokens(["a", b"\xc3", "é", "<s>", "</s>"], special={3: "<s>", 4: "</s>"}, eos_ids=[3, 4]),
        Vocabulary.from_tokens(["a", b"\xc3\xc3", "", "<s>", "</s>"], special={3: "<s>", 4: "</s>"}, eos_ids=[4]),
        _tiny().padded(6),
    ]
    fingerprints = {v.fingerprint for v in variants}
    assert len(fingerprints) == len(variants) and base not in fingerprints


def test_pickle_round_trip_keeps_everything() -> None:
    vocab = _tiny()
    copy = pickle.loads(pickle.dumps(vocab))
    assert (copy.token_bytes, dict(copy.special), copy.eos_ids, copy.kind, copy.name) == (
        vocab.token_bytes, dict(vocab.special), vocab.eos_ids, vocab.kind, vocab.name
    )
    assert copy.fingerprint == vocab.fingerprint and copy.special_id("<s>") == 3


def test_vocabulary_is_immutable_and_has_a_short_repr() -> None:
    vocab = _tiny()
    with pytest.raises(AttributeError):
        vocab.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        vocab.special[0] = "x"  # type: ignore[index]
    assert repr(vocab) == "Vocabulary(name='raw', kind=RAW, size=5, special=2, eos_ids=[4])"


def test_byte_level_alphabet_is_a_bijection_onto_visible_characters() -> None:
    alphabet = byte_level_alphabet()
    assert sorted(alphabet) == list(range(256))
    assert len(set(alphabet.values())) == 256
    assert all(ch.isprintable() and not ch.isspace() for ch in alphabet.values())
    assert (alphabet[ord(" ")], alphabet[ord("\n")], alphabet[ord("A")]) == ("Ġ", "Ċ", "A")


def test_piece_bytes_per_kind() -> None:
    every_byte = "".join(byte_level_alphabet()[b] for b in range(256))
    assert piece_bytes(VocabKind.BYTE_LEVEL, every_byte) == bytes(range(256))
    assert piece_bytes(VocabKind.BYTE_LEVEL, "Ã©") == "é".encode()
    assert piece_bytes(VocabKind.SENTENCEPIECE, "▁▁x▁") == b"  x "
    assert piece_bytes(VocabKind.RAW, "▁é") == "▁é".encode()


@pytest.mark.parametrize("piece", ["a b", "tab\t", "\u00a0", "\u00ad", "é\u0100\u0144", "日"])
def test_byte_level_piece_outside_the_alphabet_is_an_error(piece: str) -> None:
    # A raw space, control, NBSP, soft hyphen or any character past U+0143 cannot be a byte-level
    # character; passing it through would give wrong bytes.
    if piece == "é\u0100\u0144":
        assert piece_bytes(VocabKind.BYTE_LEVEL, piece[:2]) == bytes([0xE9, 0x00])
    with pytest.raises(TokenizerError, match="outside the byte-level"):
        piece_bytes(VocabKind.BYTE_LEVEL, piece)


def _longest_by_every_size(vocab: Vocabulary, data: bytes) -> list[int]:
    """The reference: at each step, try every token length from the longest down."""
    first: dict[bytes, int] = {}
    for token_id, token in enumerate(vocab.token_bytes):
        if token:
            first.setdefault(token, token_id)
    longest = max(len(t) for t in first)
    ids, i = [], 0
    while i < len(data):
        size = next(k for k in range(min(longest, len(data) - i), 0, -1) if data[i : i + k] in first)
        ids.append(first[data[i : i + size]])
        i += size
    return ids


def test_longest_match_takes_the_longest_token_at_each_step(any_vocab: Vocabulary) -> None:
    """Found by one binary search per token (the budgets count tokens with it at every step): the
    same cut as trying every length, on calls, code, multilingual text and random bytes."""
    rng = random.Random(11)
    texts = [b'<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
             'def f(x):\n    return x ** 2  # carré, 平方, квадрат 🙂'.encode(),
             b"                                                            ", b"aaaaaaaaaaaaaaaaaaaaaaaaaaa"]
    texts += [bytes(rng.choice(b'{}":, abcxyz_0123\n\t') for _ in range(rng.randint(1, 80))) for _ in range(200)]
    for data in texts:
        assert any_vocab.longest_match(data) == _longest_by_every_size(any_vocab, data), data
    assert any_vocab.decode(any_vocab.longest_match(texts[1])) == texts[1]
