"""Load a ``Vocabulary`` from the files tokenizers ship in: tokenizer.json, tokenizer.model, GGUF.

Results are shared per resolved path, mtime and size while anything holds them (a weak cache: an
edited file is read again, an unused vocabulary freed). Bad input raises ``TokenizerError``
naming the file, at load time, never during generation.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldec.errors import TokenizerError
from tooldec.tokens._gguf import read_gguf_metadata
from tooldec.tokens.vocabulary import VocabKind, Vocabulary, piece_bytes

if TYPE_CHECKING:
    import sentencepiece

__all__ = ["from_gguf", "from_sentencepiece", "from_tekken", "from_tokenizer_json", "load_vocabulary"]

PathLike = str | os.PathLike[str]

#: Special tokens that end a turn in common chat templates; added to ``eos_ids`` when present.
END_OF_TURN_TEXTS = (
    "<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<end_of_turn>",
)

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _shared(load: Callable[[str, int, int], Vocabulary]) -> Callable[[str, int, int], Vocabulary]:
    """Share a loader's results while they are alive (a weak-valued cache, thread-safe)."""
    alive: weakref.WeakValueDictionary[tuple[str, int, int], Vocabulary] = weakref.WeakValueDictionary()
    lock = threading.Lock()

    def cached(path: str, mtime_ns: int, size: int) -> Vocabulary:
        key = (path, mtime_ns, size)
        with lock:
            found = alive.get(key)
        if found is None:
            found = load(path, mtime_ns, size)
            with lock:
                found = alive.setdefault(key, found)
        return found

    return cached


def load_vocabulary(source: PathLike) -> Vocabulary:
    """Load a vocabulary from a ``tokenizer.json``, a Tekken file (``tekken*.json``), a
    SentencePiece model (``*.model*``), a ``.gguf`` file, or a directory holding one of the first
    three, choosing the loader by its name.

    Raises:
        TokenizerError: The path does not exist, its kind is unknown, or the loader rejects it.
    """
    path = Path(source)
    if path.is_dir():
        for candidate in ("tokenizer.json", "tekken.json", "tokenizer.model"):
            if (path / candidate).is_file():
                return load_vocabulary(path / candidate)
        raise TokenizerError(f"{path}: directory has none of tokenizer.json, tekken.json, tokenizer.model")
    if is_tekken_file(path):
        return from_tekken(path)
    if path.suffix == ".json":
        return from_tokenizer_json(path)
    if path.suffix == ".gguf":
        return from_gguf(path)
    if ".model" in path.name:
        return from_sentencepiece(path)
    if not path.exists():
        raise TokenizerError(f"{path}: no such file")
    raise TokenizerError(f"{path}: unknown tokenizer file kind (expected .json, .model or .gguf)")


def _stamp(source: PathLike) -> tuple[str, int, int]:
    """The resolved path with its mtime and size: the cache key."""
    path = Path(source).expanduser().resolve()
    try:
        stat = path.stat()
    except OSError as error:
        raise TokenizerError(f"{path}: {error.strerror or error}") from None
    if not path.is_file():
        raise TokenizerError(f"{path}: not a file")
    return str(path), stat.st_mtime_ns, stat.st_size


def _display_name(path: Path) -> str:
    """The last three parts of a path: enough to tell files apart in messages."""
    return "/".join(path.parts[-3:])


def _finish(token_bytes: list[bytes | None], special: dict[int, str], *, eos_ids: Iterable[int],
            eos_texts: Iterable[str], kind: VocabKind, name: str) -> Vocabulary:
    """Build the vocabulary; a declared eos becomes special even where the file marks it a plain
    added token (a token that ends generation has no bytes)."""
    by_text = {text: token_id for token_id, text in sorted(special.items(), reverse=True)}
    stop: set[int] = set()
    for token_id in eos_ids:
        if 0 <= token_id < len(token_bytes):
            if token_id not in special:
                raw = token_bytes[token_id]
                special[token_id] = raw.decode("utf-8", errors="replace") if raw is not None else f"<{token_id}>"
                token_bytes[token_id] = None
            stop.add(token_id)
    for text in (*eos_texts, *END_OF_TURN_TEXTS):
        if text in by_text:
            stop.add(by_text[text])
    return Vocabulary(tuple(token_bytes), special, frozenset(stop), kind, name)


# --- tokenizer.json -----------------------------------------------------------------------------


def from_tokenizer_json(path: PathLike) -> Vocabulary:
    """Load a Hugging Face ``tokenizer.json``.

    A token's bytes are what the file's ``decoder`` makes of it, as the ``tokenizers`` library
    decodes (added tokens included; those marked special go to ``special``); a decoder step that
    is not per-token ByteLevel or SentencePiece is refused. The eos ids come from the config files
    beside it, plus the usual end-of-turn specials.

    Raises:
        TokenizerError: Unreadable JSON, an unsupported model (WordPiece), a decoder that does
            not say how each token maps to bytes, or a Tekken file.
    """
    return _from_tokenizer_json_cached(*_stamp(path))


@_shared
def _from_tokenizer_json_cached(path: str, mtime_ns: int, size: int) -> Vocabulary:
    file = Path(path)
    data = _read_json(file, "tokenizer.json")
    if _is_tekken_data(data):
        raise TokenizerError(f"{file}: a Mistral Tekken file, not a tokenizer.json: load it with from_tekken")
    eos_texts, eos_ids = _neighbour_eos(file.parent)
    return vocabulary_from_tokenizer_data(data, name=_display_name(file), source=str(file), eos_texts=eos_texts,
                                          eos_ids=eos_ids)


def _neighbour_eos(directory: Path) -> tuple[list[str], list[int]]:
    """The eos tokens and ids of the config files beside a tokenizer.json."""
    texts: list[str] = []
    ids: list[int] = []
    for name in ("tokenizer_config.json", "generation_config.json", "config.json"):
        try:
            config = json.loads((directory / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # optional files; a broken one only loses an eos hint
        if not isinstance(config, dict):
            continue
        token = config.get("eos_token")
        if isinstance(token, dict):
            token = token.get("content")
        if isinstance(token, str):
            texts.append(token)
        token_id = config.get("eos_token_id")
        ids.extend(token_id if isinstance(token_id, list) else [token_id] if isinstance(token_id, int) else [])
    return texts, [i for i in ids if isinstance(i, int)]


def _steps(node: Any) -> list[Mapping[str, Any]]:
    """Flatten a tokenizer.json pipeline component (``Sequence``s included) into its steps."""
    if not isinstance(node, Mapping):
        return []
    if node.get("type") == "Sequence":
        children = node.get("decoders") or node.get("pretokenizers") or node.get("normalizers") or []
        return [step for child in children for step in _steps(child)]
    return [node]


_METASPACE = "\u2581"


def _read_decoder(data: Mapping[str, Any], source: str) -> tuple[VocabKind, bool]:
    """The kind the ``decoder`` chain decodes by, and whether ``<0xNN>`` pieces are bytes.

    Only steps that act on each token the same way wherever it stands are accepted (``ByteLevel``
    alone, or ``▁`` -> space with ``ByteFallback``, ``Fuse``, and the dummy-prefix ``Strip`` after
    ``Fuse``): any other changes bytes in ways a per-token table cannot hold.
    """
    steps = _steps(data.get("decoder"))
    types = [step.get("type") for step in steps]
    if not steps:
        raise TokenizerError(
            f"{source}: cannot tell how token strings map to bytes (no decoder: the tokenizers library "
            "then joins tokens with spaces)"
        )
    if types == ["ByteLevel"]:
        return VocabKind.BYTE_LEVEL, False
    fused = False
    spaces = byte_fallback = False
    for step, kind in zip(steps, types):
        if kind == "Replace" and step.get("pattern", {}).get("String") == _METASPACE and step.get("content") == " ":
            spaces = True
        elif kind == "Metaspace" and step.get("replacement", _METASPACE) == _METASPACE and not fused:
            spaces = True
        elif kind == "ByteFallback" and not fused:
            byte_fallback = True
        elif kind == "Fuse":
            fused = True
        elif kind == "Strip" and fused and step.get("content") == " " and not step.get("stop"):
            pass
        else:
            where = " after Fuse" if fused and kind in ("Metaspace", "ByteFallback", "Strip") else ""
            raise TokenizerError(
                f"{source}: cannot tell how token strings map to bytes: decoder step {kind}{where} "
                f"({json.dumps(step, ensure_ascii=False)}) in {types} is not a per-token ByteLevel or "
                "SentencePiece step"
            )
    if not spaces:
        raise TokenizerError(
            f"{source}: cannot tell how token strings map to bytes (decoder {types}: no ByteLevel step and "
            "no '▁' -> space step)"
        )
    return VocabKind.SENTENCEPIECE, byte_fallback


def _decoded_bytes(kind: VocabKind, byte_fallback: bool, piece: str) -> bytes:
    """The bytes the tokenizers library's decoder gives a token string: a ``ByteLevel`` piece
    with a character outside the GPT-2 alphabet keeps its UTF-8 (``<｜User｜>``)."""
    if byte_fallback and (match := _BYTE_PIECE.fullmatch(piece)):
        return bytes([int(match.group(1), 16)])
    if kind is VocabKind.BYTE_LEVEL:
        try:
            return piece_bytes(kind, piece)
        except TokenizerError:
            return piece.encode("utf-8")
    return piece_bytes(kind, piece)


def vocabulary_from_tokenizer_data(data: Mapping[str, Any], *, name: str, source: str | None = None,
                                   eos_texts: Iterable[str] = (), eos_ids: Iterable[int] = ()) -> Vocabulary:
    """Build a vocabulary from a parsed tokenizer.json (see ``from_tokenizer_json``); ``source``
    names it in error messages."""
    source = source or name
    model = data.get("model")
    if not isinstance(model, Mapping) or "vocab" not in model:
        raise TokenizerError(f"{source}: no model.vocab; is this a tokenizer.json?")
    if model.get("type") == "WordPiece":
        raise TokenizerError(f"{source}: WordPiece tokenizers join pieces with spaces when decoding, so tokens have no fixed bytes")
    kind, byte_fallback = _read_decoder(data, source)
    vocab = model["vocab"]
    pieces: dict[int, str] = (
        {int(token_id): piece for piece, token_id in vocab.items()}
        if isinstance(vocab, Mapping)
        else {token_id: entry[0] for token_id, entry in enumerate(vocab)}  # Unigram: [piece, score]
    )
    # An added token takes its id over from the model's piece there (DeepSeek V3 has its specials
    # in both); the decoder reads its content like any piece (Gemma 3's "▁▁" is two spaces).
    added = {int(token["id"]): token for token in data.get("added_tokens") or [] if isinstance(token, Mapping)}
    size = max([-1, *pieces, *added]) + 1
    token_bytes: list[bytes | None] = [None] * size
    special: dict[int, str] = {}
    unk = model.get("unk_token")
    unk_id = vocab.get(unk) if isinstance(vocab, Mapping) and isinstance(unk, str) else model.get("unk_id")
    if isinstance(unk_id, int) and 0 <= unk_id < size and unk_id not in added:  # bytes it could not encode
        special[unk_id] = pieces.get(unk_id, "<unk>")
    for token_id, token in added.items():
        if token.get("special"):
            special[token_id] = str(token["content"])
    texts = {**pieces, **{token_id: str(token["content"]) for token_id, token in added.items()}}
    for token_id, piece in texts.items():
        if token_id not in special:
            token_bytes[token_id] = _decoded_bytes(kind, byte_fallback, piece)
    return _finish(token_bytes, special, eos_ids=eos_ids, eos_texts=eos_texts, kind=kind, name=name)


# --- Mistral Tekken -----------------------------------------------------------------------------

#: The specials of Tekken files that list none (up to v7), ids 0-19, as ``mistral-common`` fills them in.
TEKKEN_LEGACY_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)


def is_tekken_file(path: Path) -> bool:
    """Whether a path names a Mistral Tekken file: ``mistral-common``'s own rule (``tekken*.json``)."""
    return "tekken" in path.name and path.suffix == ".json"


def from_tekken(path: PathLike) -> Vocabulary:
    """Load a Mistral Tekken tokenizer file (``tekken*.json``).

    Each token's bytes are stored (base64), so they are read as they are (``VocabKind.RAW``); the
    first ``default_num_special_tokens`` ids are the specials, then rank ``r`` follows them.
    ``</s>`` ends generation.

    Raises:
        TokenizerError: Unreadable JSON, or a file whose ranks, sizes or specials do not add up.
    """
    return _from_tekken_cached(*_stamp(path))


@_shared
def _from_tekken_cached(path: str, mtime_ns: int, size: int) -> Vocabulary:
    file = Path(path)
    return vocabulary_from_tekken_data(_read_json(file, "the Tekken file"), name=_display_name(file), source=str(file))


def _read_json(file: Path, what: str) -> Any:
    """``file``'s JSON, or a ``TokenizerError`` naming it and why it cannot be read."""
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TokenizerError(f"{file}: cannot read {what} ({error})") from None


def _is_tekken_data(data: Any) -> bool:
    return isinstance(data, Mapping) and isinstance(data.get("config"), Mapping) and isinstance(data.get("vocab"), list)


def vocabulary_from_tekken_data(data: Mapping[str, Any], *, name: str, source: str | None = None) -> Vocabulary:
    """Build a vocabulary from a parsed Tekken file (see ``from_tekken``)."""
    source = source or name
    if not _is_tekken_data(data):
        raise TokenizerError(f"{source}: no config and vocab list; is this a Tekken file?")
    config = data["config"]
    try:
        vocab_size = int(config["default_vocab_size"])
        num_special = int(config["default_num_special_tokens"])
        version = str(config.get("version", ""))
        listed = data.get("special_tokens")
        if listed is None:
            number = version[1:] if version.startswith("v") else ""
            if not number.isdigit() or int(number) > 7:
                raise TokenizerError(f"{source}: Tekken version {version!r} lists no special_tokens (required after v7)")
            texts = list(TEKKEN_LEGACY_SPECIALS)
        else:
            for position, entry in enumerate(listed):
                if int(entry["rank"]) != position:
                    raise TokenizerError(f"{source}: special token {entry['token_str']!r} has rank {entry['rank']}, not {position}")
            texts = [str(entry["token_str"]) for entry in listed]
        if len(texts) > num_special or len(set(texts)) != len(texts):
            raise TokenizerError(f"{source}: {len(texts)} special tokens (some repeated?) for {num_special} special ids")
        texts += [f"<SPECIAL_{token_id}>" for token_id in range(len(texts), num_special)]
        inner = vocab_size - num_special
        entries = data["vocab"]
        if not 0 <= inner <= len(entries):
            raise TokenizerError(f"{source}: default_vocab_size {vocab_size} does not fit {len(entries)} tokens + {num_special} specials")
        token_bytes: list[bytes | None] = [None] * vocab_size
        for rank, entry in enumerate(entries[:inner]):
            if int(entry["rank"]) != rank:
                raise TokenizerError(f"{source}: token rank {entry['rank']} at position {rank}")
            token_bytes[num_special + rank] = base64.b64decode(entry["token_bytes"], validate=True)
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise TokenizerError(f"{source}: malformed Tekken file ({type(error).__name__}: {error})") from None
    special = dict(enumerate(texts))
    return _finish(token_bytes, special, eos_ids=(), eos_texts=("</s>",), kind=VocabKind.RAW, name=name)


# --- SentencePiece ------------------------------------------------------------------------------


def from_sentencepiece(path: PathLike) -> Vocabulary:
    """Load a SentencePiece model file (``tokenizer.model``; Mistral's ``*.model.v3``): control
    and unknown pieces become specials.

    Raises:
        TokenizerError: ``sentencepiece`` is not installed or the file is not a model.
    """
    return _from_sentencepiece_cached(*_stamp(path))


@_shared
def _from_sentencepiece_cached(path: str, mtime_ns: int, size: int) -> Vocabulary:
    try:
        import sentencepiece
    except ImportError:
        raise TokenizerError(f"{path}: reading a SentencePiece model needs `pip install sentencepiece`") from None
    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.Load(model_file=path)
    except (OSError, RuntimeError) as error:
        raise TokenizerError(f"{path}: not a SentencePiece model ({error})") from None
    return vocabulary_from_sentencepiece_processor(processor, name=_display_name(Path(path)))


def vocabulary_from_sentencepiece_processor(processor: sentencepiece.SentencePieceProcessor, *, name: str) -> Vocabulary:
    """Build a vocabulary from a loaded ``sentencepiece.SentencePieceProcessor``."""
    size = processor.get_piece_size()
    token_bytes: list[bytes | None] = [None] * size
    special: dict[int, str] = {}
    for token_id in range(size):
        piece = processor.id_to_piece(token_id)
        if processor.is_control(token_id) or processor.is_unknown(token_id):
            special[token_id] = piece
        elif processor.is_byte(token_id):
            token_bytes[token_id] = bytes([int(piece[3:5], 16)])
        elif not processor.is_unused(token_id):
            token_bytes[token_id] = piece_bytes(VocabKind.SENTENCEPIECE, piece)
    eos = processor.eos_id()
    return _finish(token_bytes, special, eos_ids=[eos] if eos >= 0 else [], eos_texts=(), kind=VocabKind.SENTENCEPIECE,
                   name=name)


# --- GGUF ---------------------------------------------------------------------------------------

#: ``tokenizer.ggml.model`` -> how llama.cpp's ``token_to_piece`` reads a normal token (its converter
#: stores "bert" WordPiece with ``▁`` before each word, not ``##`` inside one).
_GGUF_KINDS = {
    "gpt2": VocabKind.BYTE_LEVEL,
    "llama": VocabKind.SENTENCEPIECE,
    "t5": VocabKind.SENTENCEPIECE,
    "gemma4": VocabKind.SENTENCEPIECE,
    "bert": VocabKind.SENTENCEPIECE,
}
#: ``tokenizer.ggml.pre`` values for which llama.cpp reads "gpt2" pieces with ``▁`` for a space.
_GGUF_ESCAPED_SPACE_PRE = frozenset({"gemma4", "granite-embed-multi-311m", "sarvam-moe"})
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
_GGUF_EOS_KEYS = ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id")


def from_gguf(path: PathLike) -> Vocabulary:
    """Load the vocabulary in a GGUF file's metadata (tensors are not read).

    Bytes are read as llama.cpp's ``token_to_piece`` reads them, by ``tokenizer.ggml.model`` and
    each ``token_type``; a normal byte-level token outside the byte alphabet is refused (llama.cpp
    prints ``[UNK_BYTE_0x...]``). Token types are followed as the file gives them: a token llama.cpp
    makes control by its text at load (``<｜fim▁hole｜>``) keeps its bytes here.

    Raises:
        TokenizerError: Not a GGUF file, no tokenizer in it, or an unsupported tokenizer model.
    """
    return _from_gguf_cached(*_stamp(path))


@_shared
def _from_gguf_cached(path: str, mtime_ns: int, size: int) -> Vocabulary:
    file = Path(path)
    meta = read_gguf_metadata(file, arrays={"tokenizer.ggml.tokens", "tokenizer.ggml.token_type"})
    model = meta.get("tokenizer.ggml.model")
    tokens = meta.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or model is None:
        raise TokenizerError(f"{file}: the GGUF file has no tokenizer (tokenizer.ggml.model/tokens)")
    kind = _GGUF_KINDS.get(model)
    if kind is None:
        raise TokenizerError(
            f"{file}: tokenizer model {model!r} is not supported (only {', '.join(map(repr, _GGUF_KINDS))})"
        )
    if meta.get("tokenizer.ggml.pre") in _GGUF_ESCAPED_SPACE_PRE:
        kind = VocabKind.SENTENCEPIECE
    types = meta.get("tokenizer.ggml.token_type") or [_NORMAL] * len(tokens)
    if len(types) != len(tokens):
        raise TokenizerError(f"{file}: {len(tokens)} tokens but {len(types)} token types")
    token_bytes: list[bytes | None] = [None] * len(tokens)
    special: dict[int, str] = {}
    for token_id, (piece, token_type) in enumerate(zip(tokens, types)):
        if token_type in (_CONTROL, _UNKNOWN):
            special[token_id] = piece
        elif token_type == _USER_DEFINED:
            token_bytes[token_id] = piece.encode("utf-8")
        elif token_type == _BYTE and (match := _BYTE_PIECE.fullmatch(piece)):
            token_bytes[token_id] = bytes([int(match.group(1), 16)])
        elif token_type == _NORMAL:
            try:
                token_bytes[token_id] = piece_bytes(kind, piece)
            except TokenizerError as error:
                raise TokenizerError(f"{file}: token id {token_id}: {error}") from None
        elif token_type != _UNUSED:
            raise TokenizerError(f"{file}: token id {token_id} ({piece!r}) has unknown token type {token_type}")
    eos_ids = [meta[key] for key in _GGUF_EOS_KEYS if isinstance(meta.get(key), int)]
    name = meta.get("general.name") if isinstance(meta.get("general.name"), str) else file.name
    return _finish(token_bytes, special, eos_ids=eos_ids, eos_texts=(), kind=kind, name=f"{name} ({file.name})")
