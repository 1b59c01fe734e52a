"""What every paper experiment shares: the model, the three systems, the run loop and its files.

A run is one experiment, one model and one system over some subsets of a benchmark: a progress
bar per subset, one JSON line per item (``<out>/<bench>/<model>/<system>/<subset>.jsonl``), a
``summary.json`` beside them, and a Markdown table and a PNG plot over every system found under
``<out>/<bench>/<model>/`` (so running the three systems one after the other fills the table).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldec.backends.loading import Backend, load
from tooldec.dialects import Dialect, Hermes, ToolCall
from tooldec.tools import ToolSet

__all__ = [
    "SYSTEMS",
    "Once",
    "Session",
    "System",
    "beamed",
    "call_errors",
    "constrained",
    "hermes_dialect",
    "markdown_table",
    "mean",
    "run_subset",
    "wilson",
]

System = str
"""A system's name: ``baseline``, ``repair``, ``tooldec``, ``tooldec_beam`` (ToolDec choosing each
name by a beam over whole names), or one an experiment defines in its ``SYSTEMS`` (``tooldec_tag``,
``tooldec_any``, ``tooldec_beam_any``: :func:`hermes_dialect`)."""
SYSTEMS: tuple[System, ...] = ("baseline", "repair", "tooldec")
"""The systems of an experiment that does not name its own."""


def constrained(system: System) -> bool:
    """Whether ``system`` decodes with ToolDec's grammar."""
    return system in ("tooldec", "tooldec_beam", "tooldec_tag", "tooldec_any", "tooldec_beam_any")


def beamed(system: System) -> bool:
    """Whether ``system`` chooses names by a beam over whole names (``tooldec_beam``, ``tooldec_beam_any``)."""
    return system in ("tooldec_beam", "tooldec_beam_any")


def hermes_dialect(system: System) -> Hermes:
    """The dialect ``system`` decodes with: the tag alone (``tooldec_tag``), any opener for a
    required call too (``tooldec_any``, and the beam's ``tooldec_beam_any``: what ``tooldec`` and
    ``tooldec_beam`` did before 2026-11-25), else the default (the tag for a required call).

    Examples:
        >>> [[o.name for o in hermes_dialect(s).forced_openers()] for s in ("tooldec_tag", "tooldec", "tooldec_beam")]
        [['tag'], ['tag'], ['tag']]
        >>> len(hermes_dialect("tooldec").openers()), len(hermes_dialect("tooldec_any").forced_openers())
        (6, 6)
        >>> len(hermes_dialect("tooldec_beam_any").forced_openers())
        6
    """
    if system == "tooldec_tag":
        return Hermes(openers=["tag"])
    if system in ("tooldec_any", "tooldec_beam_any"):
        every = [o.name for o in Hermes().openers()]
        return Hermes(forced=every)
    return Hermes()


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else float("nan")


def resolve_model(spec: str) -> Path:
    """``smollm2``, ``qwen`` or a path to a local HF folder or GGUF file."""
    from tooldec.models import qwen_coder_gguf_path, smollm2_gguf_path

    if spec == "smollm2":
        return smollm2_gguf_path()
    if spec == "qwen":
        return qwen_coder_gguf_path()
    if spec == "qwen15":
        return qwen15_gguf_path()
    return Path(spec)


def qwen15_gguf_path() -> Path:
    """Qwen2.5-Coder-1.5B-Instruct Q4_K_M, fetched by ``make qwen15`` (``$TOOLDEC_QWEN15_GGUF`` overrides).

    Raises:
        FileNotFoundError: Not fetched yet (the message says how).
    """
    if os.environ.get("TOOLDEC_QWEN15_GGUF"):
        return Path(os.environ["TOOLDEC_QWEN15_GGUF"])
    relative = Path(".cache") / "models" / "qwen2.5-coder-1.5b-instruct" / QWEN15_GGUF
    for base in (Path.cwd(), *Path(__file__).resolve().parents):
        if (base / relative).is_file():
            return base / relative
    raise FileNotFoundError(f"{QWEN15_GGUF} not found: run `make qwen15` (scripts/fetch_qwen15.sh) at the repository root")


QWEN15_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


@dataclass
class Once:
    """One generation without running tools: the text, its calls and what was wrong with them."""

    text: str
    calls: list[ToolCall]
    errors: list[str]
    tokens: int
    seconds: float
    prompt_tokens: int


class Session:
    """A loaded model, shared by every item (and every system) of a run.

    Args:
        model: ``smollm2``, ``qwen``, ``qwen15``, or a local HF folder or ``.gguf`` file.
        backend: ``llamacpp`` (GGUF files as quantised), ``transformers``, or ``auto``.
        progress: Whether to print loading messages.
        loaded: ``(model, tokenizer, vocab)`` already in memory (tests share one).
        beam_width: Partial names kept per step by ``tooldec_beam``.
    """

    def __init__(self, model: str, *, backend: Backend = "auto", progress: bool = True,
                 loaded: tuple[Any, Any, Any] | None = None, beam_width: int = 5) -> None:
        self.path = resolve_model(model)
        self.label = model if model in ("smollm2", "qwen", "qwen15") else self.path.stem
        self.beam_width = beam_width
        self.out: Path | None = None
        """Where the run writes (experiments keep files they make, such as learned tokens, there)."""
        if loaded is not None:
            from tooldec.backends.llamacpp import is_llama

            self.model, self.tokenizer, self.vocab = loaded
            self.backend = "llamacpp" if is_llama(self.model) else "transformers"
        else:
            self.model, self.tokenizer, self.vocab, self.backend = load(
                self.path, backend, progress=print if progress else None)
        self._cache: dict[Any, Any] = {}

    def describe(self) -> dict[str, Any]:
        """Model file, backend, machine: for the results' header."""
        setup = {"model": self.label, "file": self.path.name, "python": platform.python_version(),
                 "cores": os.cpu_count()}
        if self.backend == "llamacpp":
            import llama_cpp

            threads = self.model.context_params.n_threads
            return {**setup, "backend": f"llama.cpp (llama-cpp-python {llama_cpp.__version__}, GGUF as quantised)",
                    "machine": f"{platform.machine()} {threads} threads"}
        import torch

        backend = "transformers (GGUF dequantised to float32)" if self.path.suffix == ".gguf" else "transformers"
        return {**setup, "backend": backend, "torch": torch.__version__,
                "machine": f"{platform.machine()} {torch.get_num_threads()} threads"}

    def cached(self, key: Any, make: Callable[[], Any]) -> Any:
        """Build something once per run (decoders: their grammar caches masks across items)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def decoder(self, system: System, tools: ToolSet, dialect: Dialect, **options: Any) -> Any:
        """A ``ToolDecoder`` for ``system`` (``RepairDecoder`` for ``repair``; for ``tooldec_beam``
        and ``tooldec_beam_any`` its generator chooses names with :class:`~tooldec.runtime.selection.NameSelector`),
        greedy by default."""
        from tooldec.runtime import ToolDecoder
        from tooldec.runtime.selection import NameSelector

        from .repair import RepairDecoder

        options.setdefault("temperature", 0.0)
        if system == "repair":
            return RepairDecoder(self.model, self.tokenizer, tools, dialect=dialect, vocab=self.vocab, **options)
        decoder = ToolDecoder(self.model, self.tokenizer, tools, dialect=dialect, vocab=self.vocab,
                              constrained=constrained(system), **options)
        if beamed(system):
            decoder.generator = NameSelector(decoder.generator, width=self.beam_width)
        return decoder

    def chat(self, messages: Sequence[Mapping[str, Any]], *, tools: ToolSet | None = None,
             dialect: Dialect | None = None) -> str:
        """The prompt text of ``messages`` through the model's chat template, ready to generate.

        ``tools`` go through the template when it takes them (Qwen's own tool prompt), else into a
        system message written by ``tool_instructions`` (SmolLM2's template has no tools), as the
        runtime does.
        """
        from tooldec.runtime import Conversation

        return Conversation(self.tokenizer, tools if tools is not None else ToolSet([]), dialect or Hermes(),
                            messages).prompt_text()

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def once(self, decoder: Any, system: System, prompt: str, *, max_new_tokens: int,
             tool_choice: Any = "auto") -> Once:
        """Generate one assistant message with ``decoder``'s tools and dialect; run no tool.

        For benchmarks scored on the calls written (BFCL, KAMEL, RestBench's plan). ``required``
        (or a tool name) is had unconstrained by writing the call's start into the prompt, as
        the runtime does; ToolDec gets it from the mask.
        """
        from tooldec.runtime import forced_start

        dialect, tools = decoder.dialect, decoder.tools
        forced = "" if constrained(system) else forced_start(dialect, tool_choice)
        ids = list(self.tokenizer.encode(prompt + forced, add_special_tokens=False))
        start = time.perf_counter()
        generation = decoder.generator.generate(
            ids, max_new_tokens=max_new_tokens, temperature=decoder.temperature,
            grammar=decoder.grammar if constrained(system) else None, tool_choice=tool_choice,
            parallel_tool_calls=decoder.parallel_tool_calls, max_calls=decoder.max_calls_per_turn,
            stop_after_call=dialect if dialect.stop_after_call or not decoder.parallel_tool_calls else None,
            prefix=forced)
        seconds = time.perf_counter() - start
        text = forced + decoder._text(generation.ids)
        calls = dialect.parse_calls(text)
        if system == "repair":
            from .repair import repair_call

            calls = [repair_call(c, tools, dialect) for c in calls]
        return Once(text, calls, call_errors(text, calls, tools, dialect), len(generation.ids), seconds, len(ids))


def call_errors(text: str, calls: Sequence[ToolCall], tools: ToolSet, dialect: Dialect) -> list[str]:
    """The tool errors in one output, by the paper's three kinds.

    ``unparseable`` (a call started, by its trigger, but does not parse), ``unknown_tool``,
    ``invalid_arguments`` (missing, unexpected or mistyped, by the tool's JSON Schema).

    Examples:
        >>> from tooldec.dialects import Hermes
        >>> from tooldec.tools import Tool
        >>> tools = ToolSet([Tool.from_dict({"name": "f", "parameters": {"type": "object",
        ...     "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": False}})])
        >>> text = '<tool_call>{"name": "g", "arguments": {}}</tool_call><tool_call>{"name": "f"'
        >>> call_errors(text, Hermes().parse_calls(text), tools, Hermes())
        ['unknown_tool', 'unparseable']
    """
    errors = []
    for call in calls:
        if call.name not in tools:
            errors.append("unknown_tool")
        elif tools[call.name].validate_arguments(call.arguments):
            errors.append("invalid_arguments")
    if dialect.trigger:
        errors.extend(["unparseable"] * max(text.count(dialect.trigger) - len(calls), 0))
    return errors


def run_subset(name: str, items: Sequence[Any], score: Callable[[Any], dict[str, Any]], path: Path,
               *, desc: str, resume: bool = False) -> list[dict[str, Any]]:
    """Score every item with a progress bar, one JSON line per item (flushed, so a stopped run keeps its rows).

    With ``resume``, the rows already in ``path`` are kept and only the items after them are
    scored (a run stopped half-way goes on where it was).
    """
    from tqdm import tqdm  # type: ignore[import-untyped]

    path.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    if resume and path.exists():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by the stop
                break
        rows = [r for i, r in enumerate(rows) if r.get("index") == i][: len(items)]
    with path.open("w") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        out.flush()
        bar = tqdm(items, desc=desc, unit="item", dynamic_ncols=True, initial=len(rows), total=len(items))
        for index in range(len(rows), len(items)):
            row = {"subset": name, "index": index, **score(items[index])}
            rows.append(row)
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            out.flush()
            bar.update(1)
        bar.close()
    return rows


def wilson(successes: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default).

    Examples:
        >>> [round(x, 3) for x in wilson(20, 25)]
        [0.609, 0.911]
        >>> wilson(0, 0)
        (nan, nan)
    """
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table; floats with 3 significant digits.

    Examples:
        >>> print(markdown_table([{"system": "tooldec", "accuracy": 0.125}], ["system", "accuracy"]))
        | system | accuracy |
        | --- | --- |
        | tooldec | 0.125 |
    """
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return "nan" if value != value else f"{value:.3g}"
        return str(value)

    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
