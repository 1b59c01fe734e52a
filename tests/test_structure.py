"""The package's shape: no private name crosses a module boundary, and the core imports one way.

Read from the source with ``ast`` (nothing is imported), so the checks take well under a second.

- A *private name* is one that starts with ``_`` and is not a dunder. A module whose own name
  starts with ``_`` (the compiled ``_trie_walk``, ``_dfa_expand``, ``_value_key``,
  ``_plain_form``; ``_gguf``, ``_background``) is a module, not a private name: importing it, or a public name from it, is
  allowed; taking a ``_name`` out of it is not.
- A crossing is ``from .x import _y`` (or ``import`` of a module then ``x._y``) where ``_y`` is
  not a module; and ``anything._y`` where no class or module body of the reading module assigns or
  defines ``_y`` (so ``self._y``, ``other._y`` of the module's own class and ``cls._y`` are fine,
  while ``grammar._snapshot`` read outside ``Grammar``'s module is not); likewise a keyword
  argument ``f(_y=...)`` (a private dataclass field set from outside). Namedtuple's documented
  ``_replace``/``_asdict``/``_fields``/``_make`` are public API despite their names.
  A name that some other module also defines escapes this (it is read as the module's own).
- An import edge is every import of a tooldec module that runs: at module level and inside
  functions alike (a circle closed late is still a circle). Imports under ``if TYPE_CHECKING:``
  are not edges: they name a type for the checker and load nothing, as a function that takes a
  ``Grammar`` from a module that ``grammar.py`` imports does (``masking``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tooldec"
"""The installed package's sources in this checkout."""

ONE_WAY = ("tooldec.decoding", "tooldec.automata", "tooldec.backends")
"""The packages that must have no import circle among their own modules."""

NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}
"""Namedtuple's public methods, which start with ``_`` so as not to clash with field names."""


def module_name(path: Path) -> str:
    """``src/tooldec/decoding/grammar.py`` -> ``tooldec.decoding.grammar`` (``__init__`` is the package)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, tuple[Path, ast.Module]]:
    """Every Python module of the package, parsed, by dotted name."""
    return {module_name(p): (p, ast.parse(p.read_text(), str(p))) for p in sorted(PACKAGE.rglob("*.py"))}


def modules_on_disk() -> set[str]:
    """Dotted names of every module and package, compiled ones included (``_trie_walk.c``)."""
    names = {module_name(p) for p in PACKAGE.rglob("*.py")}
    names |= {module_name(p.with_suffix(".py")) for p in PACKAGE.rglob("*.c")}
    names |= {module_name(p / "__init__.py") for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    return names


def resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name that a (relative) ``from`` import in ``module`` names."""
    if level == 0:
        return target or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def is_private(name: str) -> bool:
    """``_x`` but not ``__x__``."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """The nodes under ``if TYPE_CHECKING:`` (never run)."""
    return {inner for node in ast.walk(tree) if isinstance(node, ast.If)
            and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
            for part in node.body for inner in ast.walk(part)}


def imports(name: str, path: Path, tree: ast.Module, known: set[str],
            run_only: bool = False) -> Iterator[tuple[str, str, int]]:
    """``(imported module, imported name or "", line)`` for each tooldec name the module imports
    (``run_only``: not those under ``if TYPE_CHECKING:``)."""
    is_package = path.name == "__init__.py"
    skipped = type_checking_only(tree) if run_only else set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "tooldec":
                    yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = resolve(name, is_package, node.level, node.module)
            if source.split(".")[0] != "tooldec":
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:
                    yield submodule, "", node.lineno
                else:
                    yield source, alias.name, node.lineno


def owned_private_names(tree: ast.Module) -> set[str]:
    """The ``_names`` a module defines: globals, class members, parameters, ``self._y = ...``, slots."""
    owned: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            owned.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            owned.add(node.id)  # globals, class members, dataclass fields, locals
        elif isinstance(node, ast.arg):
            owned.add(node.arg)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del))
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            owned.add(node.attr)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
            owned |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return {n for n in owned if is_private(n)}


def private_crossings() -> list[str]:
    """Each place where a module reads another module's private name, as ``module:line: what``."""
    parsed = sources()
    known = modules_on_disk()
    private_modules = {m.rsplit(".", 1)[-1] for m in known if is_private(m.rsplit(".", 1)[-1])}
    found = []
    for name, (path, tree) in parsed.items():
        for source, imported, line in imports(name, path, tree, known):
            if imported and is_private(imported):
                found.append(f"{name}:{line}: imports {imported} from {source}")
        owned = owned_private_names(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and is_private(node.attr) and node.attr not in owned
                    and node.attr not in NAMEDTUPLE_API
                    and node.attr not in private_modules):
                found.append(f"{name}:{node.lineno}: reads {ast.unparse(node)}")
            elif isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg and is_private(keyword.arg) and keyword.arg not in owned:
                        found.append(f"{name}:{node.lineno}: passes {keyword.arg}= to {ast.unparse(node.func)}")
    return sorted(found)


def import_graph() -> dict[str, set[str]]:
    """Module -> the tooldec modules it imports when it runs (packages included, as ``tooldec.decoding``)."""
    parsed = sources()
    known = modules_on_disk()
    graph: dict[str, set[str]] = {name: set() for name in parsed}
    for name, (path, tree) in parsed.items():
        for source, _, _ in imports(name, path, tree, known, run_only=True):
            if source != name and source in parsed:
                graph[name].add(source)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def test_no_private_name_crosses_a_module() -> None:
    found = private_crossings()
    assert not found, "private names read outside their module (give them a public name):\n" + "\n".join(found)


def test_the_core_packages_import_one_way() -> None:
    graph = import_graph()
    for package in ONE_WAY:
        inside = {m: {n for n in graph[m] if n.startswith(package + ".")} for m in graph if m.startswith(package + ".")}
        assert circles(inside) == [], f"import circles in {package}"


def test_the_checks_see_what_they_look_for() -> None:
    """The walkers are not blind: a circle and a crossing written out are found."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse("from .grammar import _commit\nfrom . import _trie_walk\nx = grammar._snapshot\n"
                     "if TYPE_CHECKING:\n    from .masks import Mask\n")
    path = PACKAGE / "decoding" / "probe.py"
    known = modules_on_disk()
    assert list(imports("tooldec.decoding.probe", path, tree, known)) == [
        ("tooldec.decoding.grammar", "_commit", 1), ("tooldec.decoding._trie_walk", "", 2),
        ("tooldec.decoding.masks", "Mask", 5)]
    assert len(list(imports("tooldec.decoding.probe", path, tree, known, run_only=True))) == 2
    assert "_snapshot" not in owned_private_names(tree)
    graph = import_graph()
    assert "tooldec.decoding.grammar" in graph["tooldec.decoding.machine"]
    assert "tooldec.decoding.grammar" not in graph["tooldec.decoding.masking"]  # under TYPE_CHECKING


if __name__ == "__main__":  # what the tests find, for a reader: python tests/test_structure.py
    print("\n".join(private_crossings()))
    for group in circles(import_graph()):
        print("circle:", " ".join(group))
