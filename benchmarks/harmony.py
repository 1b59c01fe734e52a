"""gpt-oss outputs read by OpenAI's own harmony parser (the PyPI package ``openai-harmony``): the
reference that ``benchmarks/formats.py`` and ``tests/dialects/test_harmony.py`` check the ``gpt_oss`` format against.

``openai-harmony`` needs the ``o200k_base.tiktoken`` file, which it would download. It is the
gpt-oss vocabulary's ordinary tokens (ranks below 199,998), so :class:`HarmonyReader` rebuilds it
offline from gpt-oss's ``tokenizer.json`` (as tooldec reads it), checks its sha256 and points
``TIKTOKEN_ENCODINGS_BASE`` at it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldec.errors import TokenizerError
from tooldec.tokens import Vocabulary

__all__ = ["O200K_SHA256", "HarmonyCalls", "HarmonyReader", "o200k_base"]

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""sha256 of ``o200k_base.tiktoken`` as openai-harmony (and tiktoken) download it."""
ORDINARY = 199998
"""gpt-oss's first special token id: the ids below are o200k_base's ranks."""


def o200k_base(gptoss: Vocabulary) -> bytes:
    """``o200k_base.tiktoken`` (``base64(bytes) rank`` per line) from gpt-oss's vocabulary.

    Raises:
        TokenizerError: The result is not the published file (another vocabulary).
    """
    lines = b"".join(base64.b64encode(data) + b" " + str(rank).encode() + b"\n"
                     for rank, data in enumerate(gptoss.token_bytes[:ORDINARY]) if data is not None)
    digest = hashlib.sha256(lines).hexdigest()
    if digest != O200K_SHA256:
        raise TokenizerError(f"o200k_base rebuilt from {gptoss.name} has sha256 {digest}, not {O200K_SHA256}")
    return lines


@dataclass(frozen=True)
class HarmonyCalls:
    """What harmony reads in one completion: each message addressed to ``functions.NAME`` as
    ``(NAME, arguments)``, the arguments decoded from JSON where they are JSON; or the error that
    made it refuse the whole completion."""

    calls: list[tuple[str, Any]]
    error: str | None = None


class HarmonyReader:
    """openai-harmony's ``parse_messages_from_completion_tokens`` over gpt-oss token ids.

    Args:
        gptoss: gpt-oss's vocabulary (its ``o200k_base`` is written into ``cache``).
        cache: A folder for ``o200k_base.tiktoken``.

    Raises:
        ImportError: ``openai-harmony`` is not installed (the ``test`` extra).
        TokenizerError: ``gptoss`` is not gpt-oss's vocabulary.
    """

    def __init__(self, gptoss: Vocabulary, cache: Path) -> None:
        import openai_harmony  # type: ignore[import-untyped]

        lines = o200k_base(gptoss)
        cache.mkdir(parents=True, exist_ok=True)
        path = cache / "o200k_base.tiktoken"
        if not path.is_file() or path.read_bytes() != lines:
            path.write_bytes(lines)
        os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(cache)
        self._harmony = openai_harmony
        self.encoding = openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)

    def encode(self, tokens: list[int], vocab: Vocabulary) -> list[int]:
        """Token ids of another vocabulary as harmony's: each special token by its text (an end of
        sequence as ``<|return|>``), the text between them encoded as ordinary text."""
        out: list[int] = []
        pending = b""
        for tid in tokens:
            special = vocab.special.get(tid)
            if special is None:
                pending += vocab.token_bytes[tid] or b""
                continue
            out += self.encoding.encode(pending.decode("utf-8", errors="replace"), disallowed_special=())
            pending = b""
            out += self.encoding.encode("<|return|>" if tid in vocab.eos_ids else special, allowed_special="all")
        out += self.encoding.encode(pending.decode("utf-8", errors="replace"), disallowed_special=())
        return out

    def read(self, tokens: list[int]) -> HarmonyCalls:
        """The calls of an assistant completion given as harmony token ids."""
        try:
            messages = self.encoding.parse_messages_from_completion_tokens(tokens, self._harmony.Role.ASSISTANT)
        except Exception as error:  # harmony refuses the whole completion
            return HarmonyCalls([], f"{type(error).__name__}: {error}")
        calls: list[tuple[str, Any]] = []
        for message in messages:
            recipient = message.recipient or ""
            if recipient.startswith("functions."):
                text = "".join(getattr(part, "text", "") for part in message.content)
                try:
                    arguments: Any = json.loads(text)
                except json.JSONDecodeError:
                    arguments = text
                calls.append((recipient[len("functions."):], arguments))
        return HarmonyCalls(calls)
