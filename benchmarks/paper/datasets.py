"""The benchmark sets in ``../shared/data`` (or ``$TOOLDEC_DATA``) as tool inventories and items.

Only readers live here. The full sets are never copied into the repository; the tests carry a
few items of each, in the same layout, under ``tests/fixtures/data``. See DEVELOPERS.md for
where each set comes from and how it is scored.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tooldec.learned.features import Demonstration, Mark

__all__ = [
    "FUNCQA_OPS",
    "bfcl_items",
    "bfcl_tools",
    "data_dir",
    "find_data_dir",
    "funcqa_demonstrations",
    "funcqa_tools",
    "kamel_demonstrations",
    "kamel_tools",
    "toolbench_tools",
]

FUNCQA_OPS: dict[str, tuple[str, int]] = {
    "add": ("Add the numbers.", 0),
    "subtract": ("Subtract the second number from the first.", 2),
    "multiply": ("Multiply the numbers.", 0),
    "divide": ("Divide the first number by the second.", 2),
    "power": ("Raise the first number to the power of the second.", 2),
    "sqrt": ("Square root of a number.", 1),
    "log": ("Logarithm of the first number to the base of the second (base 10 if omitted).", -2),
    "ln": ("Natural logarithm of a number.", 1),
    "lcm": ("Least common multiple of the integers.", 0),
    "gcd": ("Greatest common divisor of the integers.", 0),
    "remainder": ("Remainder of the first integer divided by the second.", 2),
    "choose": ("Number of ways to choose k items out of n (n choose k).", 2),
    "permutate": ("Number of ordered arrangements of k items out of n.", 2),
}
"""FuncQA's 13 operators: description and arity (0: any number of operands, as in the
templates' ``<add>(277, 209, 72)``; -2: one or two, as ``<log>(100)`` and ``<log>(8, 2)``)."""


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``explicit``, else ``$TOOLDEC_DATA``, else ``../shared/data`` beside the repository.

    Returns a path even when nothing is there (``../shared/data``), for the error message of
    whoever reads it; :func:`find_data_dir` says whether the data was found.
    """
    if explicit:
        return Path(explicit)
    return find_data_dir() or Path("../shared/data")


def find_data_dir() -> Path | None:
    """Where the full benchmark data is: ``$TOOLDEC_DATA`` when set (whether or not it exists),
    else the ``shared/data`` folder beside the current directory or beside one of this file's
    parents (a checkout next to ``shared/``); ``None`` when there is none."""
    if os.environ.get("TOOLDEC_DATA"):
        return Path(os.environ["TOOLDEC_DATA"])
    for base in (Path.cwd(), *Path(__file__).resolve().parents):
        candidate = base.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


def funcqa_tools() -> list[dict[str, Any]]:
    """The 13 FuncQA operators as tools with number arguments."""
    tools = []
    for name, (description, arity) in FUNCQA_OPS.items():
        if arity == 0:
            params: dict[str, Any] = {
                "type": "object",
                "properties": {"numbers": {"type": "array", "items": {"type": "number"}, "minItems": 1}},
                "required": ["numbers"],
            }
        else:
            names = ["a", "b"][: abs(arity)]
            required = names[:1] if arity < 0 else names
            params = {"type": "object", "properties": {n: {"type": "number"} for n in names}, "required": required}
        tools.append({"name": name, "description": description, "parameters": params})
    return tools


def kamel_tools(data: Path | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """KAMEL's Wikidata relations as one-argument tools, in ``api_desc.json`` order."""
    desc = json.loads((data_dir(data) / "kamel" / "api_desc.json").read_text())
    tools: list[dict[str, Any]] = []
    names: set[str] = set()
    for rel, text in list(desc.items())[:limit]:
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)\(([^)]*)\):\s*(.*)", text)
        if not match:
            raise ValueError(f"kamel/api_desc.json: {rel}: cannot read {text!r}")
        name, args, description = match.groups()
        if name in names:  # several relations share a function name: keep them apart
            name = f"{name}_{rel}"
        names.add(name)
        params = [re.sub(r"\W+", "_", a.strip()) for a in args.split(",")]
        tools.append(
            {
                "name": name,
                "description": f"{description} ({rel})",
                "parameters": {"type": "object", "properties": {a: {"type": "string"} for a in params}, "required": params},
            }
        )
    return tools


def bfcl_items(category: str, data: Path | None = None) -> Iterator[dict[str, Any]]:
    """BFCL items of one category (``simple_python``, ``multiple``, ...), with gold answers when present."""
    root = data_dir(data) / "bfcl"
    answers: dict[str, Any] = {}
    gold = root / "possible_answer" / f"BFCL_v4_{category}.json"
    if gold.exists():
        for line in gold.read_text().splitlines():
            item = json.loads(line)
            answers[item["id"]] = item["ground_truth"]
    for line in (root / f"BFCL_v4_{category}.json").read_text().splitlines():
        item = json.loads(line)
        item["ground_truth"] = answers.get(item["id"])
        yield item


def bfcl_tools(data: Path | None = None, categories: tuple[str, ...] = ("simple_python", "multiple", "parallel", "parallel_multiple")) -> list[dict[str, Any]]:
    """Every distinct BFCL function (first definition of each name wins)."""
    seen: dict[str, dict[str, Any]] = {}
    for category in categories:
        for item in bfcl_items(category, data):
            for fn in item["function"]:
                seen.setdefault(fn["name"], fn)
    return list(seen.values())


def toolbench_tools(data: Path | None = None) -> list[dict[str, Any]]:
    """Every distinct ToolEval tool of the I2-Category and I3-Instruction evaluation sets."""
    seen: dict[str, dict[str, Any]] = {}
    folder = data_dir(data) / "toolbench" / "toolbench_default_evalset_gpt35_CoT"
    for path in sorted(folder.glob("*.json")):
        for item in json.loads(path.read_text()).values():
            for tool in item["available_tools"]:
                seen.setdefault(tool["name"], tool)
    return list(seen.values())


def funcqa_demonstrations(data: Path | None = None) -> list[Demonstration]:
    """FuncQA's ``train.json`` (650 texts, 50 per operator) with the call marked at the result.

    ``...5572 mod 3241=2331.`` with ``tar_eq`` ``<remainder>(5572,3241)=2331``: the call is made
    where the result is written (right after ``=``, or before the space in ``which is 1321``) and
    stands for ``2331`` (ToolkenGPT's toolken replaces the result). The three items without a
    call are left out; ``group`` is the operator.
    """
    demos = []
    for item in json.loads((data_dir(data) / "funcqa" / "train.json").read_text()):
        marks = []
        text = item["text"]
        search_end = len(text)
        for eq, number in reversed(list(zip(item["tar_eq"], item["tar_number"]))):
            op = re.match(r"<(\w+)>", eq)
            at = text.rfind(number, 0, search_end)
            if op is None or at < 0:
                break
            start = at - 1 if at > 0 and text[at - 1] == " " else at
            marks.append(Mark(start, at + len(number), op.group(1)))
            search_end = start
        if marks and len(marks) == len(item["tar_eq"]):
            demos.append(Demonstration(text, tuple(reversed(marks)), marks[0].tool))
    return demos


def kamel_demonstrations(data: Path | None = None) -> list[Demonstration]:
    """KAMEL's ``train_clean.json`` (9,096 synthetic texts) with the call marked at the answer.

    ``Who owns Nike? The owner entity of Nike is Mark G. Parker.`` with the call
    ``<f>P127("Nike")="Mark G. Parker"</f>``: the call is made before the space that precedes the
    answer and stands for it. Texts whose answer is not found are left out; ``group`` is the tool
    name (as :func:`kamel_tools` names the relation).
    """
    names = {rel: spec["name"] for rel, spec in zip(json.loads((data_dir(data) / "kamel" / "api_desc.json").read_text()),
                                                     kamel_tools(data))}
    demos = []
    for item in json.loads((data_dir(data) / "kamel" / "train_clean.json").read_text()):
        match = re.search(r'="(.*)"</f>$', item["call"][0]) if item.get("call") else None
        if match is None or item["api"] not in names:
            continue
        answer, text = match.group(1), item["text"]
        at = text.rfind(answer)
        if not answer or at < 0:
            continue
        start = at - 1 if at > 0 and text[at - 1] == " " else at
        demos.append(Demonstration(text, (Mark(start, at + len(answer), names[item["api"]]),), names[item["api"]]))
    return demos
