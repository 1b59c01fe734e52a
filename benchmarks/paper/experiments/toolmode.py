"""FuncQA with learned tokens, run as ToolkenGPT runs it: a reasoning context and a tool mode per call.

The model reasons under FuncQA's general prompt, which shows no tool (``llama_general.txt``).
When a learned token fires there, the tool is chosen: by the toolken itself (ToolkenGPT), or,
after ``<T>``, by decoding its name under the finite-state machine over all 13 operators in the
same context (ToolDec; greedy, or a beam over whole names). Then, as in ToolkenGPT's tool mode,
the arguments are written with the chosen operator's own demonstrations (``llama__<op>_.txt``)
and the answer so far as the prompt: under the grammar for ToolDec (the call cannot be invalid),
freely for ToolkenGPT. The call runs, ``<op>(args)=result`` joins the answer and reasoning goes
on. Only the choice of tool differs between the systems.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tooldec.decoding import Grammar, Machine
from tooldec.dialects import ToolkenGPT
from tooldec.learned.generator import LearnedGenerator
from tooldec.runtime import CallRecord, Executor
from tooldec.runtime.selection import NameSelector, Selection
from tooldec.tools import ToolSet

from .trigger_dialects import TriggerToolken

__all__ = ["Outcome", "ToolMode"]

ARGUMENT_TOKENS = 48


@dataclass
class Outcome:
    """One problem: the answer text with its calls and results, and what happened on the way."""

    text: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    fired: int = 0
    tokens: int = 0
    selections: list[Selection] = field(default_factory=list)


class ToolMode:
    """The two-context loop for one system.

    Args:
        reasoning: Generator with the learned rows; stops as soon as one fires
            (``stop_after_learned``) or at the end of the answer (``stop`` strings).
        plain: Tool name -> a generator without rows for its arguments. One llama.cpp context
            per tool keeps that tool's demonstrations evaluated in its KV cache, and the reasoning
            context keeps its own, so switching modes re-reads only the answer so far.
        tools: FuncQA's operators (runnable).
        templates: The folder of ``llama__<op>_.txt`` (``template_oh`` or ``template_mh``).
        width: ``None`` for ToolkenGPT (the toolken names the tool); else the beam width of the
            name choice after ``<T>`` (1: greedy).
    """

    def __init__(self, reasoning: LearnedGenerator, plain: Callable[[str], LearnedGenerator], tools: ToolSet,
                 templates: Path, *, width: int | None) -> None:
        self.reasoning = reasoning
        self.plain = plain
        self.tools = tools
        self.templates = templates
        self.width = width
        self.dialect = ToolkenGPT(tools)
        self.executor = Executor(10.0)
        self.names = Grammar(tools, reasoning.vocab, TriggerToolken(tools)) if width is not None else None
        self.selector = NameSelector(reasoning, width=width) if width is not None else None
        self._grammars: dict[str, Grammar] = {}  # one per vocabulary (the tool contexts share one)

    def _encode(self, text: str) -> list[int]:
        return list(self.reasoning.tokenizer.encode(text, add_special_tokens=False))

    def _decode(self, generator: LearnedGenerator, ids: list[int]) -> str:
        return generator.vocab.decode([t for t in ids if t not in generator.eos_ids]).decode("utf-8", errors="replace")

    def solve(self, prompt: str, question: str, budget: int, max_calls: int = 8) -> Outcome:
        """Answer one problem within ``budget`` generated tokens (reasoning and arguments)."""
        out = Outcome()
        while out.tokens < budget:
            self.reasoning.events.clear()
            generation = self.reasoning.generate(self._encode(prompt + out.text), max_new_tokens=budget - out.tokens)
            out.tokens += len(generation.ids)
            text = self._decode(self.reasoning, generation.ids)
            if not self.reasoning.events or len(out.calls) >= max_calls:
                out.text += text
                break
            out.fired += 1
            event = self.reasoning.events[0]
            if self.selector is None or self.names is None:  # the toolken names the tool
                name = event.name[1:-1]
                out.text += text.removesuffix(f"<{name}>(")  # its expansion is written again below
            else:
                out.text += text
                machine = Machine(self.names, tool_choice="required", parallel_tool_calls=False, max_calls=1)
                self.selector.choose(self._encode(prompt + out.text), machine, 64)
                out.selections.append(self.selector.selections.pop())
                name = out.selections[-1].name
            call_text = self._arguments(name, question, out, budget)
            self._run(call_text, out)
        return out

    def _arguments(self, name: str, question: str, out: Outcome, budget: int) -> str:
        """``<name>(args)=`` written with the tool's demonstrations in context."""
        template = (self.templates / f"llama__{name}_.txt").read_text()
        context = template.replace("[QUESTION]", question) + out.text
        left = max(1, min(ARGUMENT_TOKENS, budget - out.tokens))
        plain = self.plain(name)
        if self.selector is not None:  # ToolDec: the grammar writes a valid call to this tool
            grammar = self._grammars.get(plain.vocab.fingerprint)
            if grammar is None:
                grammar = self._grammars[plain.vocab.fingerprint] = Grammar(self.tools, plain.vocab, self.dialect)
            generation = plain.generate(self._encode(context), max_new_tokens=left, grammar=grammar, tool_choice=name,
                                        parallel_tool_calls=False, max_calls=1, stop_after_call=self.dialect)
            call_text = self._decode(plain, generation.ids)
        else:  # ToolkenGPT: the model writes the arguments freely
            start = f"<{name}>("
            generation = plain.generate(self._encode(context + start), max_new_tokens=left,
                                        stop_after_call=self.dialect, prefix=start)
            call_text = start + self._decode(plain, generation.ids)
        out.tokens += len(generation.ids)
        end = call_text.find(")=")
        return call_text[: end + 2] if end >= 0 else call_text

    def _run(self, call_text: str, out: Outcome) -> None:
        """Run the call and write its result after ``=`` (or an error), as FuncQA's prompts do."""
        calls = self.dialect.parse_calls(call_text)
        if not calls:
            out.errors.append("unparseable")
            out.text += call_text
            return
        call = calls[0]
        problems = self.tools[call.name].validate_arguments(call.arguments) if call.name in self.tools else ["unknown"]
        if problems:
            out.errors.append("invalid_arguments" if call.name in self.tools else "unknown_tool")
            out.text += call_text
            return
        record = self.executor.run(self.tools[call.name], call)
        out.calls.append(record)
        out.text += call_text + self.dialect.render_result(call, record.observation)
