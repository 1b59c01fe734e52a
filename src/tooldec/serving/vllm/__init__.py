"""tooldec inside vLLM: a V1 logits processor and an OpenAI-server tool parser.

* :mod:`tooldec.serving.vllm.processor`: ``ToolDecLogitsProcessor`` (``--logits-processors``
  or the ``vllm.logits_processors`` entry point) masks each request that carries
  ``extra_args["tooldec"]``.
* :mod:`tooldec.serving.vllm.tool_parser`: ``--tool-call-parser tooldec`` copies a request's
  ``tools`` into those extra arguments and parses calls with the dialect.
* :mod:`tooldec.serving.vllm.args`: the extra arguments, and helpers for clients that call a
  server without the tool parser (:func:`extra_body`) or vLLM's offline ``LLM`` (:func:`extra_args`).
* :func:`chat_template_path`: a ChatML template that writes the tools into the system prompt,
  for models whose own template ignores ``tools`` (SmolLM2).

Importing this package does not import vLLM.
"""

from __future__ import annotations

from pathlib import Path

from .args import KEY, ToolDecArgs, extra_args, extra_body

__all__ = ["KEY", "ToolDecArgs", "chat_template_path", "extra_args", "extra_body"]


def chat_template_path() -> Path:
    """The ChatML chat template with Hermes-style tools (``--chat-template`` for SmolLM2)."""
    return Path(__file__).with_name("chatml_tools.jinja")
