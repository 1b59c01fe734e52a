"""Loaders on the real tokenizer files: sizes, byte tokens, specials, eos, errors, caching."""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tooldec.errors import TokenizerError
from tooldec.models import mistral_tokenizer_path, smollm2_gguf_path, tokenizer_json_path
from tooldec.tokens import VocabKind, Vocabulary, from_gguf, from_sentencepiece, from_tokenizer_json, load_vocabulary
from tooldec.tokens._gguf import read_gguf_metadata

# SmolLM2's byte-level BPE lacks these single-byte tokens: six ASCII controls, the two bytes that
# never occur in UTF-8 (0xC0, 0xC1), the lead bytes of planes 4-11 (0xF1, 0xF2) and 0xF5-0xFF.
SMOLLM2_MISSING_BYTES = {4, 6, 19, 20, 22, 29, 0xC0, 0xC1, 0xF1, 0xF2, *range(0xF5, 0x100)}


@pytest.mark.parametrize(
    ("family", "size", "kind"),
    [
        ("smollm2", 49_152, VocabKind.BYTE_LEVEL),
        ("mistral", 32_768, VocabKind.SENTENCEPIECE),
        ("llama3", 128_256, VocabKind.BYTE_LEVEL),
        ("qwen", 151_669, VocabKind.BYTE_LEVEL),
    ],
)
def test_size_and_kind(request: pytest.FixtureRequest, family: str, size: int, kind: VocabKind) -> None:
    vocab: Vocabulary = request.getfixturevalue(f"{family}_vocab")
    assert (vocab.size, vocab.kind) == (size, kind)


def test_every_byte_has_a_single_byte_token(any_vocab: Vocabulary, smollm2_vocab: Vocabulary) -> None:
    single = {token[0] for token in any_vocab.token_bytes if token is not None and len(token) == 1}
    missing = set(range(256)) - single
    assert missing == (SMOLLM2_MISSING_BYTES if any_vocab is smollm2_vocab else set())


def test_specials_have_no_bytes_and_normal_tokens_are_never_empty(any_vocab: Vocabulary) -> None:
    assert all(any_vocab.token_bytes[i] is None for i in any_vocab.special)
    assert b"" not in any_vocab.token_bytes
    assert any_vocab.eos_ids <= set(any_vocab.special)


def test_mistral_v3_control_tokens_are_special(mistral_vocab: Vocabulary) -> None:
    assert mistral_vocab.special_id("[TOOL_CALLS]") == 5
    assert mistral_vocab.special_id("[INST]") == 3
    assert mistral_vocab.special_id("[AVAILABLE_TOOLS]") == 6
    assert mistral_vocab.eos_ids == {mistral_vocab.special_id("</s>")} == {2}
    assert mistral_vocab.token_bytes[mistral_vocab.special_id("<unk>") or 0] is None
    assert mistral_vocab.decode([23325]) == b" Hello"  # "▁Hello"


def test_smollm2_im_end_ends_generation(smollm2_vocab: Vocabulary) -> None:
    assert smollm2_vocab.special_id("<|im_end|>") == 2
    assert smollm2_vocab.eos_ids == {0, 2}  # <|endoftext|> and <|im_end|>
    assert smollm2_vocab.special_id("<|im_start|>") not in smollm2_vocab.eos_ids


def test_llama3_eot_id_ends_generation(llama3_vocab: Vocabulary) -> None:
    eot = llama3_vocab.special_id("<|eot_id|>")
    assert eot == 128009
    assert llama3_vocab.eos_ids == {128001, 128009}  # <|end_of_text|> from tokenizer_config.json
    assert llama3_vocab.special_id("<|begin_of_text|>") not in llama3_vocab.eos_ids


def test_qwen_tool_call_is_literal_text_and_im_end_is_eos(qwen_vocab: Vocabulary) -> None:
    assert qwen_vocab.special_id("<tool_call>") is None
    assert qwen_vocab.token_bytes[151657] == b"<tool_call>"
    assert qwen_vocab.token_bytes[151658] == b"</tool_call>"
    assert qwen_vocab.token_bytes[151667] == b"<think>"
    assert qwen_vocab.special_id("<|im_end|>") in qwen_vocab.eos_ids
    assert qwen_vocab.eos_ids == {151643, 151645}


def test_llama2_sentencepiece_style_tokenizer_json() -> None:
    from tokenizers import Tokenizer

    path = tokenizer_json_path("llama2")
    vocab = from_tokenizer_json(path)
    assert (vocab.kind, vocab.size, vocab.eos_ids) == (VocabKind.SENTENCEPIECE, 32_000, frozenset({2}))
    assert vocab.token_bytes[13] == b"\n"  # <0x0A>, a byte-fallback piece
    text = 'Tabs\tand {"ünï": "日本 🙂"}\n  two spaces'
    ids = Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
    assert vocab.decode(ids) == b" " + text.encode()  # the dummy-prefix space


def test_gguf_metadata_matches_gguf_readers() -> None:
    from gguf import GGUFReader, GGUFValueType

    path = smollm2_gguf_path()
    arrays = {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type"}
    ours = read_gguf_metadata(path, arrays=arrays)
    expected = {
        key: field.contents()
        for key, field in GGUFReader(path).fields.items()
        if not key.startswith("GGUF.") and (field.types[0] != GGUFValueType.ARRAY or key in arrays)
    }
    assert ours == expected
    assert len(ours["tokenizer.ggml.tokens"]) == 49_152


def test_load_vocabulary_dispatches_on_the_path() -> None:
    assert load_vocabulary(tokenizer_json_path("qwen3").parent) is from_tokenizer_json(tokenizer_json_path("qwen3"))
    assert load_vocabulary(mistral_tokenizer_path("v3")) is from_sentencepiece(mistral_tokenizer_path("v3"))
    assert load_vocabulary(str(smollm2_gguf_path())) is from_gguf(smollm2_gguf_path())


def test_loaders_cache_per_path_and_reload_an_edited_file(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    shutil.copy(tokenizer_json_path("llama2"), path)
    first = from_tokenizer_json(path)
    assert from_tokenizer_json(str(path)) is first
    data = json.loads(path.read_text(encoding="utf-8"))
    data["added_tokens"].append({"id": 32000, "content": "<tool>", "special": False})
    path.write_text(json.dumps(data), encoding="utf-8")
    os.utime(path, ns=(0, 10**18))  # a different mtime even on coarse clocks
    second = from_tokenizer_json(path)
    assert second is not first
    assert (second.size, second.token_bytes[32000]) == (32_001, b"<tool>")


def test_eos_from_generation_config_is_made_special(tmp_path: Path) -> None:
    shutil.copy(tokenizer_json_path("qwen3"), tmp_path / "tokenizer.json")
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [151645, 151666]}))
    vocab = from_tokenizer_json(tmp_path / "tokenizer.json")
    assert vocab.eos_ids == {151643, 151645, 151666}
    assert vocab.special[151666] == "</tool_response>"
    assert vocab.token_bytes[151666] is None


def _wordpiece_json(path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models

    tokenizer = Tokenizer(models.WordPiece({"[UNK]": 0, "play": 1, "##ing": 2}, unk_token="[UNK]"))
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.save(str(path))


def _gguf_header(version: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, 0, 0)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("tokenizer.json", b"{not json", "cannot read tokenizer.json"),
        ("tokenizer.json", b'{"model": {}}', "no model.vocab"),
        ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}', "cannot tell how"),
        ("wordpiece.json", None, "WordPiece"),
        ("m.gguf", b"GGML" + bytes(20), "not a GGUF file"),
        ("m.gguf", _gguf_header(1), "version 1 is not supported"),
        ("m.gguf", _gguf_header(3)[:-4] + struct.pack("<Q", 5)[:4], "corrupt or truncated"),
        ("m.gguf", _gguf_header(3), "has no tokenizer"),
        ("m.gguf", b"", "corrupt or truncated"),
        ("tokenizer.model", b"\x00garbage", "not a SentencePiece model"),
        ("vocab.txt", b"a\nb\n", "unknown tokenizer file kind"),
    ],
)
def test_bad_files_raise_tokenizer_error_naming_the_file(tmp_path: Path, name: str, content: bytes | None, message: str) -> None:
    path = tmp_path / name
    if content is None:
        _wordpiece_json(path)
    else:
        path.write_bytes(content)
    with pytest.raises(TokenizerError, match=message) as info:
        load_vocabulary(path)
    assert str(tmp_path) in str(info.value)


def test_truncated_real_gguf_raises(tmp_path: Path) -> None:
    path = tmp_path / "cut.gguf"
    path.write_bytes(smollm2_gguf_path().read_bytes()[:100_000])  # inside the token list
    with pytest.raises(TokenizerError, match="corrupt or truncated"):
        from_gguf(path)


def test_missing_paths_raise(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="none of tokenizer.json, tekken.json, tokenizer.model"):
        load_vocabulary(tmp_path)
    for missing in ("nope.json", "nope.gguf", "nope.model", "nope.bin"):
        with pytest.raises(TokenizerError, match="No such file|no such file"):
            load_vocabulary(tmp_path / missing)


def test_importing_tokens_loads_no_heavy_framework() -> None:
    code = (
        "import sys, tooldec.tokens, tooldec.models\n"
        "heavy = {'torch', 'transformers', 'tokenizers', 'sentencepiece', 'gguf'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == "[]"


def _bpe_json(path: Path, decoder: object) -> None:
    data = {"model": {"type": "BPE", "vocab": {"a": 0, "▁a": 1, "<0x0A>": 2}, "merges": []}, "decoder": decoder}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


_REPLACE = {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}


@pytest.mark.parametrize(
    ("decoder", "message"),
    [
        (None, "no decoder"),
        ({"type": "BPEDecoder", "suffix": "</w>"}, "decoder step BPEDecoder"),
        ({"type": "Sequence", "decoders": [{"type": "ByteLevel"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
         "decoder step ByteLevel"),
        ({"type": "Sequence", "decoders": [_REPLACE, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
         "decoder step Strip"),  # before Fuse it strips every token, not the text
        ({"type": "Sequence", "decoders": [_REPLACE, {"type": "Fuse"}, {"type": "ByteFallback"}]},
         "decoder step ByteFallback after Fuse"),
        ({"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}, "no '▁' -> space step"),
    ],
)
def test_a_decoder_that_does_not_act_per_token_is_refused(tmp_path: Path, decoder: object, message: str) -> None:
    _bpe_json(tmp_path / "tokenizer.json", decoder)
    with pytest.raises(TokenizerError, match=message):
        from_tokenizer_json(tmp_path / "tokenizer.json")


def test_byte_pieces_are_bytes_only_where_the_decoder_says_so(tmp_path: Path) -> None:
    _bpe_json(tmp_path / "with.json", {"type": "Sequence", "decoders": [_REPLACE, {"type": "ByteFallback"}, {"type": "Fuse"}]})
    _bpe_json(tmp_path / "without.json", {"type": "Sequence", "decoders": [_REPLACE, {"type": "Fuse"}]})
    assert from_tokenizer_json(tmp_path / "with.json").token_bytes == (b"a", b" a", b"\n")
    assert from_tokenizer_json(tmp_path / "without.json").token_bytes == (b"a", b" a", b"<0x0A>")


def test_a_tekken_file_is_not_a_tokenizer_json(tmp_path: Path) -> None:
    from tooldec.models import mistral_tekken_path

    shutil.copy(mistral_tekken_path("240718"), tmp_path / "vocab.json")
    with pytest.raises(TokenizerError, match="a Mistral Tekken file, not a tokenizer.json"):
        load_vocabulary(tmp_path / "vocab.json")
    shutil.copy(mistral_tekken_path("240718"), tmp_path / "tekken.json")
    assert load_vocabulary(tmp_path).size == 131_072  # a folder with tekken.json


def _tekken(path: Path, **changes: object) -> None:
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None} for i in range(256)]
    data: dict[str, object] = {
        "config": {"pattern": ".", "num_vocab_tokens": 256, "default_vocab_size": 286, "default_num_special_tokens": 30,
                   "version": "v3"},
        "vocab": vocab,
    }
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_tekken_files_are_checked(tmp_path: Path) -> None:
    from tooldec.tokens import from_tekken

    _tekken(tmp_path / "tekken.json")
    vocab = from_tekken(tmp_path / "tekken.json")
    assert (vocab.size, vocab.kind, vocab.special[2], vocab.eos_ids, vocab.token_bytes[30 + 65]) == (
        286, VocabKind.RAW, "</s>", frozenset({2}), b"A")
    assert (vocab.special[9], vocab.special[29], len(vocab.special)) == ("[TOOL_CALLS]", "<SPECIAL_29>", 30)
    listed = [{"rank": i, "token_str": f"<S{i}>", "is_control": True} for i in range(3)]
    _tekken(tmp_path / "tekken_listed.json", special_tokens=listed)
    assert [from_tekken(tmp_path / "tekken_listed.json").special[i] for i in (0, 2, 3)] == ["<S0>", "<S2>", "<SPECIAL_3>"]
    bad = {
        "v13_unlisted": ({"config": {"pattern": ".", "default_vocab_size": 286, "default_num_special_tokens": 30, "version": "v13"}},
                         "lists no special_tokens"),
        "too_big": ({"config": {"pattern": ".", "default_vocab_size": 300, "default_num_special_tokens": 30, "version": "v3"}},
                    "does not fit 256 tokens"),
        "ranks": ({"special_tokens": [{"rank": 1, "token_str": "<s>", "is_control": True}]}, "has rank 1, not 0"),
        "base64": ({"vocab": [{"rank": 0, "token_bytes": "!!", "token_str": None}] * 256}, "malformed Tekken file"),
    }
    for name, (changes, message) in bad.items():
        _tekken(tmp_path / f"tekken_{name}.json", **changes)
        with pytest.raises(TokenizerError, match=message):
            load_vocabulary(tmp_path / f"tekken_{name}.json")


def test_gguf_models_that_write_spaces_as_metaspace(tmp_path: Path) -> None:
    from gguf import GGUFWriter

    for model, pre, expected in [("gpt2", "gpt-2", b"\xe2\x96\x81a"), ("gpt2", "gemma4", b" a"), ("gemma4", "gemma4", b" a")]:
        path = tmp_path / f"{model}-{pre}.gguf"
        writer = GGUFWriter(path, "llama")
        writer.add_tokenizer_model(model)
        writer.add_tokenizer_pre(pre)
        writer.add_token_list(["a", "▁a"])
        writer.add_token_types([1, 1])
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.close()
        if expected == b"\xe2\x96\x81a":  # "▁" is no byte-level character
            with pytest.raises(TokenizerError, match="token id 1"):
                from_gguf(path)
        else:
            assert from_gguf(path).token_bytes == (b"a", expected)
