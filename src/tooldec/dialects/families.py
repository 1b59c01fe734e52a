"""The call formats of today's open model families, each one declaration (``.declared``).

Where a family thinks only in one mode of its template (DeepSeek V3.1, Magistral), the section
is a constant to pass as ``reasoning=``; the default is the template's default.
"""

from __future__ import annotations

from typing import ClassVar

from ..automata.json_schema import Style, Whitespace
from .base import Reasoning
from .declared import CallFormat, CallIndex, DeclaredDialect, JsonArguments
from .hermes import Hermes
from .key_values import KeyValueArguments

__all__ = [
    "DEEPSEEK_THINKING",
    "MAGISTRAL_THINKING",
    "THINK",
    "DeepSeekV31",
    "GLM45",
    "GptOss",
    "KimiK2",
    "MiniMaxM2",
    "MistralTekken",
    "Qwen3",
    "Qwen3Coder",
]

THINK = Reasoning("<think>", "</think>")
"""``<think>`` ... ``</think>`` at the start of the answer (Qwen3, GLM-4.5, MiniMax-M2)."""
DEEPSEEK_THINKING = Reasoning("<think>", "</think>", inside_at_start=True)
"""DeepSeek V3.1's thinking mode: its template ends the prompt with ``<think>``."""
MAGISTRAL_THINKING = Reasoning("[THINK]", "[/THINK]", markers=("[THINK]", "[/THINK]"))
"""Magistral's reasoning section (Tekken v13 tokenizers with think tokens)."""

_LOOSE_JSON = JsonArguments(Style(whitespace=Whitespace.FLEXIBLE))
"""Arguments whose spacing the template leaves to the model (it wrote them as it liked)."""


class Qwen3(Hermes):
    """Qwen3 and QwQ: Hermes' ``<tool_call>`` with a ``<think>`` section first (vLLM: ``hermes``).
    ``reasoning=None`` when the template's ``enable_thinking`` is off."""

    name: ClassVar[str] = "qwen3"
    reasoning = THINK


class Qwen3Coder(DeclaredDialect):
    """Qwen3-Coder and Qwen3.5: XML parameters inside ``<tool_call>``."""

    format = CallFormat(
        name="qwen3_coder",
        families="Qwen3-Coder, Qwen3.5",
        opener="<tool_call>",
        head="\n<function=",
        after_name=(">\n",),
        arguments=KeyValueArguments("<parameter=", ">\n", "\n</parameter>\n",
                                    stops=("</parameter>", "<parameter=", "</function>")),
        call_end="</function>\n</tool_call>",
        result="<tool_response>\n{result}\n</tool_response>",
        refused=("<tool_response>", "<function="),  # vLLM's parser opens a call at <function= alone
        vllm_parser="qwen3_coder",
    )


class GLM45(DeclaredDialect):
    """GLM-4.5 and GLM-4.6: the name after ``<tool_call>``, then key/value tags; thinks first."""

    format = CallFormat(
        name="glm45",
        families="GLM-4.5, GLM-4.6",
        opener="<tool_call>",
        head="",
        after_name=("\n",),
        arguments=KeyValueArguments("<arg_key>", "</arg_key>\n<arg_value>", "</arg_value>\n", stops=("</arg_value>",)),
        call_end="</tool_call>",
        markers=("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
                 "<think>", "</think>", "<|observation|>"),
        reasoning=THINK,
        result="<|observation|>\n<tool_response>\n{result}\n</tool_response>",
        refused=("<|observation|>\n<tool_response>", "<tool_response>"),
        vllm_parser="glm45",
    )


class MiniMaxM2(DeclaredDialect):
    """MiniMax-M2: ``<invoke name="...">`` blocks of ``<parameter name="...">`` tags; thinks first."""

    format = CallFormat(
        name="minimax_m2",
        families="MiniMax-M2",
        opener="<minimax:tool_call>",
        head='\n<invoke name="',
        after_name=('">\n',),
        arguments=KeyValueArguments('<parameter name="', '">', "</parameter>\n",
                                    stops=("</parameter>", "<parameter name=", "</invoke>")),
        call_end="</invoke>\n",
        next_call='<invoke name="',
        block_end="</minimax:tool_call>",
        markers=("</minimax:tool_call>", "<minimax:tool_call>"),
        reasoning=THINK,
        result="<response>{result}</response>",
        refused=("<response>",),
        vllm_parser="minimax_m2",
    )


class DeepSeekV31(DeclaredDialect):
    """DeepSeek V3.1 and V3.2-Exp: special-token blocks, JSON arguments (``reasoning=
    DEEPSEEK_THINKING`` in thinking mode)."""

    format = CallFormat(
        name="deepseek_v31",
        families="DeepSeek V3.1, V3.2-Exp",
        opener="<｜tool▁calls▁begin｜>",
        head="<｜tool▁call▁begin｜>",
        after_name=("<｜tool▁sep｜>",),
        arguments=JsonArguments(),  # spaced as json.dumps: vLLM's reader stops a call at a raw newline
        call_end="<｜tool▁call▁end｜>",
        next_call="<｜tool▁call▁begin｜>",
        block_end="<｜tool▁calls▁end｜>",
        markers=("<｜tool▁calls▁end｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
                 "<｜tool▁call▁end｜>", "<｜tool▁output▁begin｜>"),
        result="<｜tool▁output▁begin｜>{result}<｜tool▁output▁end｜>",
        refused=("<｜tool▁output▁begin｜>", "<｜tool▁call▁begin｜>"),  # vLLM reads a call from <｜tool▁call▁begin｜> alone
        vllm_parser="deepseek_v31",
    )


class KimiK2(DeclaredDialect):
    """Kimi K2: a section of calls, each named ``functions.NAME:INDEX``, JSON arguments."""

    format = CallFormat(
        name="kimi_k2",
        families="Kimi K2",
        opener="<|tool_calls_section_begin|>",
        head="<|tool_call_begin|>functions.",
        after_name=(":", CallIndex(), "<|tool_call_argument_begin|>"),
        arguments=_LOOSE_JSON,
        call_end="<|tool_call_end|>",
        next_call="<|tool_call_begin|>functions.",
        block_end="<|tool_calls_section_end|>",
        markers=("<|tool_calls_section_end|>", "<|tool_calls_section_begin|>", "<|tool_call_begin|>",
                 "<|tool_call_argument_begin|>", "<|tool_call_end|>"),
        result="## Return of {id}\n{result}",
        refused=("## Return of functions.",),
        vllm_parser="kimi_k2",
    )


class GptOss(DeclaredDialect):
    """gpt-oss in OpenAI's harmony format: reasoning on the analysis channel, a call on the
    commentary channel addressed ``to=functions.NAME``, ended by ``<|call|>``."""

    format = CallFormat(
        name="gpt_oss",
        families="gpt-oss",
        opener="<|channel|>commentary to=functions.",
        head="",
        after_name=(" <|constrain|>json<|message|>",),
        arguments=_LOOSE_JSON,
        call_end="<|call|>",
        call_ends_output=True,
        answer_prefix="<|channel|>final<|message|>",
        markers=("<|channel|>", "<|constrain|>", "<|message|>", "<|call|>", "<|end|>", "<|start|>"),
        reasoning=Reasoning("<|channel|>analysis<|message|>", "<|end|><|start|>assistant",
                            refused_inside=("<|channel|>", "<|constrain|>", "<|message|>", "<|call|>", "<|end|>",
                                            "<|start|>")),
        result="<|start|>functions.{name} to=assistant<|channel|>commentary<|message|>{result}<|end|>",
        refused=("<|start|>functions.",),
        vllm_parser="openai",
    )


class MistralTekken(DeclaredDialect):
    """Mistral's Tekken tokenizers v11 and on (Mistral Small 3.2, Magistral, Devstral):
    ``[TOOL_CALLS]name[ARGS]{...}`` per call (``reasoning=MAGISTRAL_THINKING`` for Magistral)."""

    format = CallFormat(
        name="mistral_tekken",
        families="Mistral Small 3.2, Magistral, Devstral",
        opener="[TOOL_CALLS]",
        head="",
        after_name=("[ARGS]",),
        arguments=JsonArguments(),
        call_end="",
        markers=("[TOOL_CALLS]", "[ARGS]", "[TOOL_RESULTS]"),
        result="[TOOL_RESULTS]{result}[/TOOL_RESULTS]",
        refused=("[TOOL_RESULTS]",),
        vllm_parser="mistral",
    )
