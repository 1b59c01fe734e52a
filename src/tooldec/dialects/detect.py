"""Which call format a model writes, from its special tokens and, where they cannot tell (Qwen3
and Qwen3-Coder share a tokenizer), its chat template. The first rule that matches wins."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UnknownDialectError
from ..tokens import Vocabulary
from .base import Dialect
from .registry import DIALECTS, get_dialect

__all__ = ["AUTO", "Signals", "dialect_for", "dialect_named", "signals_of"]

AUTO = "auto"
"""The dialect name that asks :func:`dialect_for` (``tooldec serve --dialect auto``, the default)."""


@dataclass(frozen=True)
class Signals:
    """A model's markup-like single tokens (``<...>``, ``[...]``) and chat template ('' if unknown)."""

    tokens: frozenset[str]
    template: str = ""

    def has(self, *texts: str) -> bool:
        return all(t in self.tokens for t in texts)

    def writes(self, *texts: str) -> bool:
        """Whether the chat template holds every one of ``texts``."""
        return all(t in self.template for t in texts)


def signals_of(vocab: Vocabulary, template: str = "") -> Signals:
    """The markup-like tokens of ``vocab`` (special or ordinary) and ``template``."""
    found = set(vocab.special.values())
    for data in vocab.token_bytes:
        if data and len(data) > 2 and data[:1] in (b"<", b"[") and data[-1:] in (b">", b"]"):
            found.add(data.decode("utf-8", errors="replace"))
    return Signals(frozenset(found), template)


_Rule = tuple[str, Callable[[Signals], bool], dict[str, Any]]


def _rules() -> list[_Rule]:
    return [
        ("gpt_oss", lambda s: s.has("<|channel|>", "<|constrain|>", "<|call|>"), {}),
        ("deepseek_v31", lambda s: s.has("<｜tool▁calls▁begin｜>", "<｜tool▁sep｜>") and not s.writes("```json"), {}),
        ("kimi_k2", lambda s: s.has("<|tool_calls_section_begin|>", "<|tool_call_argument_begin|>"), {}),
        ("glm45", lambda s: s.has("<arg_key>", "<arg_value>"), {}),
        ("minimax_m2", lambda s: s.has("<minimax:tool_call>"), {}),
        ("mistral_tekken", lambda s: s.has("[TOOL_CALLS]", "[ARGS]"), {}),
        ("mistral", lambda s: s.has("[TOOL_CALLS]"), {}),
        ("qwen3_coder", lambda s: s.has("<tool_call>") and s.writes("<function=", "<parameter="), {}),
        ("qwen3", lambda s: s.has("<tool_call>", "<think>"), {}),
        ("hermes", lambda s: s.has("<tool_call>") or s.writes("<tool_call>"), {}),
        ("pythonic", lambda s: s.has("<|python_start|>"), {"openers": ["start", "call"]}),  # Llama 4
        ("pythonic", lambda s: s.has("<start_of_turn>"), {"openers": ["start", "call"]}),  # Gemma 3: Google's guide asks for [f(x=1)]
        ("llama3_json", lambda s: s.has("<|python_tag|>") or s.has("<|start_header_id|>"), {}),
        ("hermes", lambda s: s.has("<|im_start|>"), {}),  # ChatML without tool tokens: tooldec's prompts write Hermes
    ]


def dialect_for(source: Vocabulary | str | Path, *, template: str | None = None,
                exclude: Collection[str] = ()) -> Dialect:
    """The call format of the model whose vocabulary (or GGUF file, ``tokenizer.json`` or Hugging
    Face folder) is ``source``.

    Args:
        source: A vocabulary, or a path to load one from (a GGUF file's or folder's chat template
            is read too).
        template: The model's chat template, when ``source`` does not carry it.

    Raises:
        UnknownDialectError: No rule matches; the message lists the formats and how to name one.

    Examples:
        >>> from tooldec.tokens import Vocabulary
        >>> vocab = Vocabulary.from_tokens(["a", "<tool_call>", "<think>"])
        >>> dialect_for(vocab).name
        'qwen3'
        >>> dialect_for(vocab, template="<tool_call>\\n<function=f>\\n<parameter=x>").name
        'qwen3_coder'
    """
    vocab, found_template = _load(source)
    signals = signals_of(vocab, template if template is not None else found_template)
    for name, matches, options in _rules():
        if name not in exclude and matches(signals):
            return get_dialect(name, **options)
    raise UnknownDialectError(
        f"{vocab.name}: no known call format matches this model's tokens and chat template; name one "
        f"(tooldec serve --dialect NAME, tooldec.dialects.get_dialect(NAME)) among: {', '.join(sorted(DIALECTS))}")


def dialect_named(name: str, source: Vocabulary | str | Path, **options: Any) -> Dialect:
    """The dialect ``name`` with ``options``, or for :data:`AUTO` the one :func:`dialect_for`
    finds for ``source`` (made again with ``options`` where any is given)."""
    given = {key: value for key, value in options.items() if value is not None}
    if name != AUTO:
        return get_dialect(name, **given)
    found = dialect_for(source)
    return get_dialect(found.name, **given) if given else found


def _load(source: Vocabulary | str | Path) -> tuple[Vocabulary, str]:
    """The vocabulary of ``source`` and the chat template found beside it ('' if none)."""
    if isinstance(source, Vocabulary):
        return source, ""
    from ..tokens import load_vocabulary
    from ..tokens.templates import chat_template

    return load_vocabulary(source), chat_template(source)
