"""tooldec inside vLLM (docs/serving.md, "Inside vLLM"): a V1 logits processor
(:mod:`.processor`), an OpenAI-server tool parser (:mod:`.tool_parser`) and the request's
arguments (:mod:`.args`). Importing this package does not import vLLM."""

from __future__ import annotations

from pathlib import Path

from .args import KEY, ToolDecArgs, extra_args, extra_body

__all__ = ["KEY", "ToolDecArgs", "chat_template_path", "extra_args", "extra_body"]


def chat_template_path() -> Path:
    """The ChatML chat template with Hermes-style tools (``--chat-template`` for SmolLM2)."""
    return Path(__file__).with_name("chatml_tools.jinja")
