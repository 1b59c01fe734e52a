"""The ``tooldec`` command: ``demo`` answers a few questions with SmolLM2 and built-in tools, through
tooldec and unconstrained, so the difference is seen, not claimed; ``run`` does it for any model
and the user's own tools. Every option is checked before the model loads (seconds), and a mistake
is one line on stderr, with a suggestion when a name is close; exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import inspect
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from .dialects import DIALECTS, Dialect, dialect_for
from .dialects.detect import AUTO
from .errors import ToolDecError
from .runtime.trace import EventKind, Result
from .tools import Tool

__all__ = ["Palette", "load_tools", "main", "render_result"]

MODELS = ("smollm2", "qwen")
"""Model names ``--model`` knows besides a path: the SmolLM2 GGUF of ``make setup``, Qwen of ``make qwen``."""
BACKENDS = ("auto", "llamacpp", "transformers")
TOOL_CHOICES = ("auto", "required", "none")


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
        >>> from tooldec.dialects import Hermes
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
        elif event.kind is EventKind.NOTICE:
            parts.append(palette.dim(f"[{event.text}]"))
        else:
            parts.append(palette.invalid(f"[invalid call: {event.text}]"))
    return "\n".join(part.strip("\n") for part in parts if part.strip())


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _summary(result: Result) -> str:
    trace = result.trace
    masking = (f" (masking {trace.masking_seconds * 1000:.0f} ms, {trace.masking_seconds_per_step * 1000:.2f} ms a token)"
               if trace.masked_steps else " (unconstrained)")
    refused = "".join(f", refused {label} x{count}" for label, count in sorted(trace.refusals.items()))
    return (f"calls {len(result.calls)}, invalid calls {trace.invalid_calls}{refused}, tokens {trace.tokens_generated}, "
            f"{trace.seconds:.1f} s{masking}")


class UsageError(ToolDecError):
    """A command-line option that cannot work (reported before any model loads)."""


def suggest(value: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or nothing.

    Examples:
        >>> suggest("hermse", ["hermes", "react"])
        " (did you mean 'hermes'?)"
    """
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _choice(what: str, choices: Sequence[str]) -> Callable[[str], str]:
    """An argparse type that accepts one of ``choices``, or says which one was meant."""
    def check(value: str) -> str:
        if value not in choices:
            raise argparse.ArgumentTypeError(
                f"unknown {what} {value!r}{suggest(value, choices)}; choose from {', '.join(choices)}")
        return value
    return check


def load_tools(path: str | Path) -> list[Tool]:
    """The tools of a file: a Python file's ``TOOLS`` (else its public functions), JSON or YAML tool
    definitions, or an OpenAPI document (``tooldec.sources.load_tools_file``, which says what raises)."""
    from .sources import load_tools_file

    with load_tools_file(path) as loaded:
        return loaded.tools


def model_path(spec: str) -> Path:
    """``smollm2``, ``qwen`` (``TokenizerError`` if not installed), or the path of a ``.gguf`` file
    or a model folder (``UsageError`` if there is none)."""
    from .models import qwen_coder_gguf_path, smollm2_gguf_path

    if spec == "smollm2":
        return smollm2_gguf_path()
    if spec == "qwen":
        return qwen_coder_gguf_path()
    path = Path(spec)
    if not path.exists():
        hint = suggest(spec, MODELS) or " (give smollm2, qwen, a .gguf file or a model folder)"
        raise UsageError(f"no such file: {spec}{hint}")
    if path.is_file() and path.suffix != ".gguf":
        raise UsageError(f"{spec}: not a model (give a .gguf file or a model folder)")
    if path.is_file():
        with path.open("rb") as file:
            if file.read(4) != b"GGUF":
                raise UsageError(f"{spec}: not a GGUF file (it does not start with 'GGUF')")
    return path


def _load_model(args: argparse.Namespace, path: Path) -> tuple[Any, Any, Any, str]:
    """The model, tokenizer, vocabulary and backend; a damaged file is one line, not a traceback."""
    import struct

    from .backends import load

    try:
        return load(path, args.backend, threads=args.threads, progress=_stderr, context=args.context)
    except (struct.error, EOFError, ValueError, RuntimeError, OSError) as err:
        if isinstance(err, FileNotFoundError):
            raise
        kind = type(err).__name__ if type(err).__module__ == "builtins" else f"{type(err).__module__}.{type(err).__name__}"
        first = str(err).splitlines()[0] if str(err) else ""
        raise UsageError(f"{path}: cannot load the model (is the file complete? a truncated download fails "
                         f"like this): {kind}: {first}") from err


def _dialect(name: str, tools: Any) -> Dialect:
    cls = DIALECTS[name]
    return cls(tools=tools) if "tools" in inspect.signature(cls).parameters else cls()  # type: ignore[call-arg]


def _open_tools(args: argparse.Namespace, stack: contextlib.ExitStack) -> list[Tool]:
    """Every tool of ``--tools`` and ``--mcp``, registered; MCP tools tooldec refuses are noted."""
    from .sources import MCPSource, load_tools_file

    tools: list[Tool] = []
    if args.tools:
        headers = dict(_header(h) for h in args.header)
        loaded = stack.enter_context(load_tools_file(args.tools, base_url=args.base_url, headers=headers))
        if loaded.kind == "definitions":
            _stderr(f"note: the tools of {args.tools} have no implementation: calls are checked, not run")
        tools.extend(loaded.tools)
    env = mcp_environment(args.mcp_env, os.environ) if args.mcp else None
    for server in args.mcp:
        source = stack.enter_context(MCPSource(server, env=env))
        for refused in source.refused:
            _stderr(f"note: MCP tool {refused.name!r} left out: {refused.error}")
        tools.extend(source.tools)
    return tools


def mcp_environment(settings: Sequence[str], caller: Mapping[str, str]) -> dict[str, str]:
    """The environment of the MCP stdio servers: the caller's whole environment (as VS Code starts
    them: a key set in the shell reaches the server), each ``NAME=VALUE`` of ``--mcp-env`` set over
    it; a bare ``NAME`` must be set in the caller's (else ``UsageError``)."""
    env = dict(caller)
    for setting in settings:
        name, sep, value = setting.partition("=")
        if not name:
            raise UsageError(f"--mcp-env {setting!r}: write it as NAME=VALUE, or NAME to pass this shell's value")
        if not sep and name not in caller:
            raise UsageError(f"--mcp-env {name}: {name} is not set in this environment; write {name}=VALUE")
        env[name] = value if sep else caller[name]
    return env


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise UsageError(f"--header {text!r}: write it as 'Name: value'")
    return name.strip(), value.strip()


def _check_tool_choice(choice: str, tools: Any) -> None:
    if choice in TOOL_CHOICES or choice in tools:
        return
    raise UsageError(f"--tool-choice {choice!r} is neither {', '.join(TOOL_CHOICES)} nor a tool"
                     f"{suggest(choice, [*TOOL_CHOICES, *tools.names])}; the tools are {', '.join(tools.names)}")


def _demo(args: argparse.Namespace, out: TextIO) -> int:
    from .demo import QUESTIONS, TOOLS
    from .runtime import ToolDecoder

    palette = Palette.for_stream(out, args.color)
    path = model_path(args.model)
    model, tokenizer, vocab, backend = _load_model(args, path)
    questions = args.question or QUESTIONS
    settings = dict(tool_choice="required", parallel_tool_calls=False, max_new_tokens=args.max_new_tokens,
                    temperature=args.temperature, seed=args.seed, context_window=args.context)
    constrained = ToolDecoder(model, tokenizer, TOOLS, constrained=True, vocab=vocab, **settings)  # type: ignore[arg-type]
    baseline = ToolDecoder(model, tokenizer, TOOLS, constrained=False, vocab=vocab, **settings)  # type: ignore[arg-type]
    decoders = {"tooldec": constrained, "unconstrained": baseline}
    dialect = decoders["tooldec"].dialect
    label = "SmolLM2-135M-Instruct" if args.model == "smollm2" else path.name
    print(palette.bold("tools: ") + ", ".join(decoders["tooldec"].tools.names), file=out)
    print(palette.dim(f"Each question is answered twice by {label} ({backend}), which must start with a tool call: "
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
    from .runtime import ToolDecoder
    from .tools import ToolSet

    palette = Palette.for_stream(out, args.color)
    if not args.tools and not args.mcp:
        raise UsageError("no tools: give --tools FILE (Python, JSON or YAML tool definitions, an OpenAPI "
                         "document) and/or --mcp SERVER (a command or a URL)")
    path = model_path(args.model)  # every check before the slow model load
    with contextlib.ExitStack() as stack:
        tools = ToolSet(_open_tools(args, stack))
        _check_tool_choice(args.tool_choice, tools)
        named = None if args.dialect == AUTO else _dialect(args.dialect, tools)
        model, tokenizer, vocab, _ = _load_model(args, path)  # a file that cannot load says so first
        dialect = named if named is not None else dialect_for(path)
        decoder = ToolDecoder(model, tokenizer, tools, dialect=dialect, vocab=vocab, tool_choice=args.tool_choice,
                              parallel_tool_calls=args.parallel, max_new_tokens=args.max_new_tokens,
                              temperature=args.temperature, seed=args.seed, constrained=not args.unconstrained,
                              context_window=args.context, tool_timeout=args.tool_timeout,
                              jump_forward=args.jump_forward)
        result = decoder.run([{"role": "user", "content": args.question}])
    print(render_result(result, dialect, palette), file=out)
    for record in result.calls:
        line = f"{record.call.name}({record.call.to_openai()['function']['arguments']}) -> {record.observation}"
        print(palette.dim("call: ") + (palette.result(line) if record.ok else palette.invalid(line)), file=out)
    print(palette.dim(_summary(result)), file=out)
    return 0


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {number}")
    return number


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tooldec", description="Tool calls that are valid by construction.")
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser, max_new_tokens: int) -> None:
        sub.add_argument("--model", default="smollm2",
                         help="smollm2 (installed by make setup, the default), qwen (after make qwen), "
                              "or a .gguf file or a model folder")
        sub.add_argument("--max-new-tokens", type=_positive, default=max_new_tokens, help="token budget of a turn")
        sub.add_argument("--context", type=_positive, default=None,
                         help="the model's context window in tokens (llama.cpp: what it is loaded with, "
                              "default 8192); raise it for long prompts or tool results")
        sub.add_argument("--temperature", type=float, default=0.0, help="0: greedy (default); else sampling")
        sub.add_argument("--seed", type=int, default=0, help="seed for sampling")
        sub.add_argument("--color", action=argparse.BooleanOptionalAction, default=None,
                         help="ANSI colours (default: when writing to a terminal)")
        sub.add_argument("--threads", type=_positive, default=None,
                         help="CPU threads (default: the backend's choice; try 1 on a busy machine)")
        sub.add_argument("--backend", type=_choice("backend", BACKENDS), default="auto",
                         help="llama.cpp runs a .gguf file as quantised; transformers dequantises it "
                              "(default: auto, llama.cpp for a .gguf file when it is installed)")

    demo = commands.add_parser("demo", help="SmolLM2-135M with built-in tools, tooldec vs unconstrained")
    demo.add_argument("--question", action="append", help="ask this instead of the built-in questions (repeatable)")
    common(demo, 96)
    run = commands.add_parser("run", help="run a model with your tools (a file, an OpenAPI document, MCP servers)")
    run.add_argument("--tools", help="a Python file (its TOOLS list, else its public functions), a JSON or YAML "
                                     "file of OpenAI / MCP / Anthropic tool definitions, or an OpenAPI document")
    run.add_argument("--mcp", action="append", default=[], metavar="SERVER",
                     help="an MCP server: the command that starts it (stdio) or its URL (repeatable); a stdio "
                          "server gets this shell's whole environment (as VS Code starts MCP servers; the MCP "
                          "SDK alone would pass only HOME, PATH and a few more), plus --mcp-env")
    run.add_argument("--mcp-env", action="append", default=[], metavar="NAME[=VALUE]",
                     help="set an environment variable for the MCP stdio servers (repeatable): NAME=VALUE sets "
                          "it, a bare NAME passes this shell's value (an error if it is unset)")
    run.add_argument("--base-url", help="for an OpenAPI document: where the API is (default: its servers)")
    run.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                     help="for an OpenAPI document: a header sent with every request (repeatable); "
                          "credentials also come from TOOLDEC_AUTH_<SCHEME>")
    run.add_argument("--dialect", type=_choice("dialect", [AUTO, *sorted(DIALECTS)]), default=AUTO,
                     help=f"how calls are written: {', '.join(sorted(DIALECTS))} (default: auto, found from the "
                          "model's tokens and chat template)")
    run.add_argument("--tool-choice", default="auto", help="auto, required, none, or a tool name")
    run.add_argument("--parallel", action=argparse.BooleanOptionalAction, default=True,
                     help="allow several calls in one message")
    run.add_argument("--tool-timeout", type=float, default=30.0, help="seconds a tool may run (default 30)")
    run.add_argument("--unconstrained", action="store_true", help="no grammar (the baseline)")
    run.add_argument("--jump-forward", action=argparse.BooleanOptionalAction, default=True,
                     help="evaluate the tokens the grammar forces in one batch, each confirmed by the model (default: on)")
    run.add_argument("question", help="the user's message")
    common(run, 512)
    commands.add_parser("serve", help="an OpenAI-compatible server: tooldec serve [--model GGUF] (see tooldec serve --help)")
    commands.add_parser("train-trigger", help="learn ToolDec's <T> (or toolkens) for your tools (see its --help)")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``tooldec`` console script; the exit status is 0, or 2 for a usage error
    or a tool, model or tokenizer that cannot be loaded (one line on stderr says which)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:  # the OpenAI-compatible server has its own options (tooldec.serving.cli)
        from .serving.cli import main as serve_main

        return serve_main(argv[1:])
    if argv[:1] == ["train-trigger"]:  # learned <T> / toolkens (tooldec.learned.cli)
        from .learned.cli import main as train_main

        return int(train_main(argv[1:]) or 0)
    args = _parser().parse_args(argv)
    stream = out if out is not None else sys.stdout
    start = time.perf_counter()
    try:
        status = _demo(args, stream) if args.command == "demo" else _run(args, stream)
    except (FileNotFoundError, ImportError, ValueError, ToolDecError) as err:
        message = " ".join(str(err).split("\n")[:1]) if not isinstance(err, ToolDecError) else str(err)
        print(f"tooldec {args.command}: error: {message}", file=sys.stderr)
        return 2
    print(Palette.for_stream(stream, args.color).dim(f"done in {time.perf_counter() - start:.0f} s"), file=stream)
    return status


if __name__ == "__main__":
    sys.exit(main())
