"""The tool loop: generate, run the calls, give the results back (``Conversation``), generate
again, until the model stops without calling a tool or a budget runs out. With
``constrained=False`` it is the baseline: broken calls are counted, not run. The turn stays inside
the context window: results are cut to a share of the room left (``limits.truncate_tokens``), and
a full window ends the turn with a notice in its trace rather than an error."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..backends.generation import Generator
from ..backends.loading import generator_for  # it imports torch or llama.cpp only for a model
from ..decoding import Grammar, ToolChoice
from ..dialects import Dialect, Hermes, ToolCall
from ..errors import ContextLengthError
from ..tools import Tool, ToolLike, ToolSet
from .executor import Executor, clean_text
from .limits import context_window as window_of
from .limits import truncate_tokens
from .trace import CallRecord, Event, EventKind, InvalidCall, InvalidKind, Result, Trace

__all__ = ["Conversation", "ToolDecoder", "add_instructions", "forced_start", "takes_tools", "tool_instructions"]

Message = Mapping[str, Any]


class ToolDecoder:
    """A model, its tools and a dialect: ``run`` answers one user turn, calling tools as needed.

    Args:
        model: A transformers causal language model, or a ``llama_cpp.Llama`` (see
            ``tooldec.backends.llamacpp.load_llama``).
        tokenizer: Its transformers tokenizer (its chat template renders message prompts).
        tools: A ``ToolSet`` or anything ``ToolSet`` takes (functions, tool dicts, Pydantic models).
        dialect: How calls are written (default: ``Hermes()``).
        tool_choice: For the first generation of a turn: ``"auto"``, ``"required"``, ``"none"``
            or a tool name. Later generations (after tool results) use ``"auto"`` (or ``"none"``).
        parallel_tool_calls: Whether one message may hold several calls (off: a generation stops
            as its call closes).
        max_calls_per_turn: Calls allowed in a turn; then tools are switched off.
        max_new_tokens: Token budget of the whole turn, over all generations. A call is never
            cut off by it (constrained decoding only).
        temperature: 0 for greedy decoding, else sampling at this temperature.
        seed: Seeds the backend's sampler at the start of each ``run`` (reproducible sampling).
        constrained: ``False`` runs the same loop unconstrained (the baseline).
        tool_timeout: Seconds a tool may run before its call fails with a timeout.
        vocab: The model's vocabulary, if already built (default: read from the tokenizer).
        context_window: The model's context in tokens (default: what the backend loaded it with,
            see ``limits.context_window``; ``None`` there means no limit is enforced).
        result_share: The share (0 to 1] of the context room left after a generation that the
            results of its calls may take together; a longer result is cut, and says so.
        jump_forward: Evaluate the tokens the grammar forces in one batch, each confirmed by
            the model's pick, not a forward pass each (``tooldec.backends.jump``; on by default).

    Raises:
        ValueError: A budget, the timeout, the window or the share is out of range.
        ToolRegistrationError: A tool cannot be added (or the dialect cannot write it).
        ToolNotFoundError: ``tool_choice`` names no tool.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        tools: ToolSet | Iterable[ToolLike],
        *,
        dialect: Dialect | None = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        max_calls_per_turn: int = 8,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        seed: int | None = None,
        constrained: bool = True,
        tool_timeout: float = 10.0,
        vocab: Any = None,
        context_window: int | None = None,
        result_share: float = 0.5,
        jump_forward: bool = True,
    ) -> None:
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if max_calls_per_turn < 0:
            raise ValueError(f"max_calls_per_turn must be >= 0, got {max_calls_per_turn}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if context_window is not None and context_window < 2:
            raise ValueError(f"context_window must be >= 2 tokens, got {context_window}")
        if not 0 < result_share <= 1:
            raise ValueError(f"result_share must be in (0, 1], got {result_share}")
        self.tools = tools if isinstance(tools, ToolSet) else ToolSet(tools)
        self.dialect = dialect if dialect is not None else Hermes()
        self.tool_choice = tool_choice
        self.parallel_tool_calls = parallel_tool_calls
        self.max_calls_per_turn = max_calls_per_turn
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed
        self.constrained = constrained
        self.executor = Executor(tool_timeout)
        self.tokenizer = tokenizer
        self.generator: Generator = generator_for(model, tokenizer, vocab, jump_forward=jump_forward)
        self.vocab = self.generator.vocab
        self.grammar = Grammar(self.tools, self.vocab, self.dialect)
        self.context_window = context_window if context_window is not None else window_of(model, tokenizer)
        self.result_share = result_share
        if tool_choice not in ("auto", "required", "none") and tool_choice not in self.tools:
            self.tools[tool_choice]  # raises ToolNotFoundError with the names there are

    def run(self, messages_or_prompt: str | Sequence[Message]) -> Result:
        """Answer one turn: chat messages, rendered with the tokenizer's chat template and the tools,
        or a plain prompt, continued as it is. A tool that misbehaves or a full context still gives
        a result (``trace.stop_reason`` says so).

        Raises:
            ContextLengthError: The prompt alone does not fit the context window.
        """
        start = time.perf_counter()
        if self.seed is not None:
            self.generator.seed(self.seed)
        context = Conversation(self.tokenizer, self.tools, self.dialect, messages_or_prompt)
        trace = Trace()
        records: list[CallRecord] = []
        budget = self.max_new_tokens
        answer = ""
        first = True
        while budget > 0:
            calls_left = self.max_calls_per_turn - len(records)
            choice = self._choice(first, calls_left)
            forced = "" if self.constrained else forced_start(self.dialect, choice)
            prompt = context.prompt_ids(forced)
            room = budget if self.context_window is None else min(budget, self.context_window - len(prompt))
            if room < 1:
                if first:
                    raise ContextLengthError(
                        f"the prompt has {len(prompt)} tokens but the model's context holds {self.context_window}: "
                        "load the model with a larger context (tooldec run --context N; "
                        "tooldec.backends.load(path, context=N)) or shorten the prompt")
                trace.stop_reason = (f"the context is full ({len(prompt)} of {self.context_window} tokens): "
                                     "the turn ends here")
                trace.events.append(Event(EventKind.NOTICE, trace.stop_reason))
                break
            generation = self.generator.generate(
                prompt,
                max_new_tokens=room,
                temperature=self.temperature,
                grammar=self.grammar if self.constrained else None,
                tool_choice=choice,
                parallel_tool_calls=self.parallel_tool_calls,
                max_calls=max(calls_left, 0),
                stop_after_call=self.dialect if self.dialect.stop_after_call or not self.parallel_tool_calls else None,
                prefix=forced,
            )
            budget -= len(generation.ids)
            trace.generations += 1
            trace.tokens_generated += len(generation.ids)
            trace.masking_seconds += generation.masking_seconds
            trace.masked_steps += generation.masked_steps
            trace.forced_steps += generation.forced_steps
            for label, count in generation.refusals.items():
                trace.refusals[label] = trace.refusals.get(label, 0) + count
            text = forced + self._text(generation.ids)
            answer = text
            trace.events.append(Event(EventKind.TEXT, text))
            calls = self.dialect.parse_calls(text)
            self._count_unparseable(text, trace)
            if not calls:
                context.add_text(text)
                break
            round_records = [self._check_and_run(call, trace, calls_left - i) for i, call in enumerate(calls)]
            round_records = self._fit(round_records, len(prompt) + len(generation.ids))
            records.extend(round_records)
            context.add_round(text, round_records)
            for record in round_records:
                trace.events.append(Event(EventKind.RESULT, self.dialect.render_result(record.call, record.observation),
                                          record.call))
            first = False
            if not generation.ended and not generation.call_closed:  # the budget ran out
                if room < budget and len(generation.ids) >= room:
                    trace.stop_reason = f"the context is full ({self.context_window} tokens): the turn ends here"
                    trace.events.append(Event(EventKind.NOTICE, trace.stop_reason))
                break
            if calls_left - len(calls) <= 0 and not self.constrained:
                break
        trace.seconds = time.perf_counter() - start
        return Result(context.transcript, answer, records, trace)

    def _fit(self, records: list[CallRecord], used: int) -> list[CallRecord]:
        """Cut the observations of one round to ``result_share`` of the room the context has left."""
        if self.context_window is None or not records:
            return records
        limit = max(int(self.result_share * (self.context_window - used) / len(records)), 1)
        fitted = []
        for record in records:
            text = record.result if record.result is not None else record.error or ""
            cut, total = truncate_tokens(text, self.tokenizer, limit)
            if total is None:
                fitted.append(record)
            elif record.result is not None:
                fitted.append(dataclasses.replace(record, result=cut, truncated_from=total))
            else:
                fitted.append(dataclasses.replace(record, error=cut, truncated_from=total))
        return fitted

    def _choice(self, first: bool, calls_left: int) -> ToolChoice:
        if self.tool_choice == "none" or calls_left <= 0:
            return "none"
        return self.tool_choice if first else "auto"

    def _text(self, ids: Sequence[int]) -> str:
        """The generated text, special tokens spelled out, the final end-of-sequence token dropped."""
        kept = [t for t in ids if t not in self.generator.eos_ids]
        return str(self.vocab.decode(kept).decode("utf-8", errors="replace"))

    def _count_unparseable(self, text: str, trace: Trace) -> None:
        """Count call-like text that did not become a call, never as prose (DESIGN invariant 3);
        with a one-character trigger (ToolkenGPT's ``<``) the count is an upper bound."""
        for snippet in self.dialect.scan(text).broken:
            message = f"call-like text that does not parse as a call: {snippet[:80]!r}"
            trace.invalid.append(InvalidCall(InvalidKind.UNPARSEABLE, message))
            trace.events.append(Event(EventKind.INVALID, message))

    def _check_and_run(self, call: ToolCall, trace: Trace, calls_left: int) -> CallRecord:
        """Validate a parsed call and run it; an invalid call becomes an error record."""
        if calls_left <= 0:
            return CallRecord(call, None, f"not run: the limit of {self.max_calls_per_turn} calls per turn is reached", 0.0)
        if call.name not in self.tools:
            error = f"unknown tool {call.name!r}; the tools are {', '.join(self.tools.names)}"
            return self._invalid(call, InvalidKind.UNKNOWN_TOOL, error, trace)
        tool = self.tools[call.name]
        problems = tool.validate_arguments(call.arguments)
        if problems:
            error = f"invalid arguments for {call.name}: {'; '.join(problems)}"
            return self._invalid(call, InvalidKind.INVALID_ARGUMENTS, error, trace)
        return self.executor.run(tool, call)

    @staticmethod
    def _invalid(call: ToolCall, kind: InvalidKind, error: str, trace: Trace) -> CallRecord:
        trace.invalid.append(InvalidCall(kind, error, call))
        trace.events.append(Event(EventKind.INVALID, error, call))
        return CallRecord(call, None, error, 0.0)


def forced_start(dialect: Dialect, choice: ToolChoice) -> str:
    """The start of a call (trigger, head, name) written into an unconstrained model's prompt: the
    only way to have a ``required`` or named call there. Empty for ``auto`` and ``none``.

    Examples:
        >>> forced_start(Hermes(), "required"), forced_start(Hermes(), "auto")
        ('<tool_call>\\n{"name": "', '')
    """
    if choice in ("auto", "none"):
        return ""
    start = (dialect.trigger or "") + dialect.head.decode()
    return start if choice == "required" else start + choice


def tool_instructions(tools: ToolSet, dialect: Dialect) -> str:
    """A system prompt that lists the tools and shows how this dialect writes a call, for chat
    templates that take no ``tools=`` (SmolLM2's): Hermes gets Qwen 2.5's wording, others an example.

    Examples:
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two integers.'''
        ...     return a + b
        >>> print(tool_instructions(ToolSet([add]), Hermes()).splitlines()[-3])
        <tool_call>
    """
    specs = "\n".join(json.dumps(_openai_tool(tool), ensure_ascii=False) for tool in tools)
    if isinstance(dialect, Hermes):
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n"
            f"<tools>\n{specs}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
        )
    example = ""
    first = next(iter(tools), None)
    if first is not None:
        try:
            example = "\n\nWrite a call exactly like this example:\n" + dialect.format_call(
                ToolCall(first.name, _example_arguments(first)))
        except ValueError:
            example = ""
    return f"# Tools\n\nYou can call these tools:\n{specs}{example}"


def takes_tools(tokenizer: Any) -> bool:
    """Whether the tokenizer's chat template reads a ``tools`` variable."""
    template = getattr(tokenizer, "chat_template", None) or ""
    return isinstance(template, str) and "tools" in template


def add_instructions(messages: list[dict[str, Any]], tools: ToolSet, dialect: Dialect) -> None:
    """Put :func:`tool_instructions` at the end of ``messages``' system message, or in a new one first
    (for a chat template that takes no ``tools=``)."""
    instructions = tool_instructions(tools, dialect)
    if messages and messages[0].get("role") == "system":
        messages[0] = {**messages[0], "content": f"{messages[0].get('content', '')}\n\n{instructions}"}
    else:
        messages.insert(0, {"role": "system", "content": instructions})


def _openai_tool(tool: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": tool.name, "description": tool.description, "parameters": tool.source_parameters or tool.parameters}}


def _example_arguments(tool: Tool) -> dict[str, Any]:
    """Placeholder values for the required parameters, for an example call in a prompt."""
    samples = {"integer": 1, "number": 1.5, "string": "text", "boolean": True, "array": [], "object": {}}
    properties = tool.parameters.get("properties", {})
    out: dict[str, Any] = {}
    for name in tool.parameters.get("required", list(properties)):
        schema = properties.get(name, {})
        if "enum" in schema:
            out[name] = schema["enum"][0]
        else:
            kind = schema.get("type", "string")
            out[name] = samples.get(kind if isinstance(kind, str) else kind[0], "text")
    return out


class Conversation:
    """The prompt as the turn goes on: chat messages (``source``), or a plain prompt that grows.

    Chat formats add an assistant message with the calls and a result message per call; when the
    template takes no ``tools=``, the tools go in a system prompt and the results in one ``tool``
    message in the dialect's form (SmolLM2 answers better after a ``tool`` turn than a ``user``
    one). Inline formats (``stop_after_call``) write each result right after its call.
    """

    def __init__(self, tokenizer: Any, tools: ToolSet, dialect: Dialect, source: str | Sequence[Message]) -> None:
        self.tokenizer = tokenizer
        self.tools = tools
        self.dialect = dialect
        self.raw = source if isinstance(source, str) else None
        self.template_takes_tools = takes_tools(tokenizer)
        self.messages: list[dict[str, Any]] = [] if isinstance(source, str) else [dict(m) for m in source]
        if self.raw is None and not self.template_takes_tools and len(tools):
            add_instructions(self.messages, tools, dialect)
        self.pending = ""  # the open assistant message (inline results), or the plain prompt's tail
        self.transcript = ""

    def prompt_text(self) -> str:
        """The prompt for the next generation, as text (lone surrogates, which no tokenizer
        encodes, replaced by U+FFFD wherever they came from)."""
        if self.raw is not None:
            return clean_text(self.raw + self.pending)
        tools = [_openai_tool(t) for t in self.tools] if self.template_takes_tools and len(self.tools) else None
        return clean_text(str(self.tokenizer.apply_chat_template(
            self.messages, tools=tools, add_generation_prompt=True, tokenize=False)) + self.pending)

    def prompt_ids(self, forced: str = "") -> list[int]:
        """The prompt for the next generation; ``forced`` is text the assistant is made to begin with."""
        return list(self.tokenizer.encode(self.prompt_text() + forced, add_special_tokens=False))

    def add_text(self, text: str) -> None:
        """The model's last words of the turn."""
        self.transcript += text
        self.pending += text

    def add_round(self, text: str, records: list[CallRecord]) -> None:
        """A generation that made calls, and their outcomes."""
        rendered = [self.dialect.render_result(r.call, r.observation) for r in records]
        if self.dialect.stop_after_call or self.raw is not None:
            inline = "".join(rendered) if self.dialect.stop_after_call else "\n" + "\n".join(rendered) + "\n"
            self.transcript += text + inline
            self.pending += text + inline
            return
        self.transcript += text + "\n" + "\n".join(rendered) + "\n"
        if self.template_takes_tools:
            content = text.split(self.dialect.trigger)[0].strip() if self.dialect.trigger else ""
            self.messages.append({"role": "assistant", "content": content, "tool_calls": [
                {"id": r.call.id, "type": "function",
                 "function": {"name": r.call.name, "arguments": dict(r.call.arguments)}} for r in records]})
            self.messages.extend(
                {"role": "tool", "tool_call_id": r.call.id, "name": r.call.name, "content": r.observation}
                for r in records)
        else:
            self.messages.append({"role": "assistant", "content": text})
            self.messages.append({"role": "tool", "content": "\n".join(rendered)})
