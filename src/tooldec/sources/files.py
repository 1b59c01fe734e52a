"""A tools file, whatever the user wrote it as: a Python module, a JSON (or YAML) file of tool
definitions in the OpenAI, MCP or Anthropic shape, or an OpenAPI 3 document. Every tool is
registered when the file is read, so a mistake is one line naming the file (and line) before any
model loads.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import sys
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ToolRegistrationError, ToolSourceError
from ..tools import Tool
from ._background import Closing
from .http import OpenAPISource

__all__ = ["ToolFile", "load_tools_file", "python_tools", "read_document"]

Kind = Literal["python", "definitions", "openapi"]


@dataclass
class ToolFile(Closing):
    """The tools of one file; ``close`` (or ``with``) releases an OpenAPI source's connections.
    ``kind`` ``definitions``: tool dicts, with no function, so calls are checked but not run."""

    path: Path
    kind: Kind
    tools: list[Tool]
    source: OpenAPISource | None = field(default=None, repr=False)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()


def load_tools_file(path: str | Path, *, base_url: str | None = None, headers: Mapping[str, str] | None = None,
                    credentials: Mapping[str, str] | None = None) -> ToolFile:
    """Read and register the tools of ``path``; the kind is told by the suffix and the content.

    Args:
        path: A ``.py`` file (its ``TOOLS`` list, else its public functions), or a ``.json``,
            ``.yaml`` or ``.yml`` file: an OpenAPI 3 document (it has an ``openapi`` key), or
            tool definitions (a list of them, one, or ``{"tools": [...]}`` as MCP lists them).
        base_url: For an OpenAPI document, overrides its ``servers``.
        headers: For an OpenAPI document, sent with every request.
        credentials: For an OpenAPI document, security scheme name -> secret.

    Raises:
        FileNotFoundError: No such file.
        ToolSourceError: The file does not parse, defines no tools, or a tool cannot be
            registered; one line naming the file (and the line, where there is one).
    """
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no such file: {file}")
    if file.suffix == ".py":
        return ToolFile(file, "python", python_tools(file))
    document = read_document(file)
    if isinstance(document, Mapping) and "swagger" in document:
        raise ToolSourceError(f"{file}: a Swagger 2.0 document; convert it to OpenAPI 3 first")
    if isinstance(document, Mapping) and "openapi" in document:
        try:
            source = OpenAPISource(document, base_url=base_url, headers=headers, credentials=credentials)
        except ToolRegistrationError as err:
            raise ToolSourceError(f"{file}: {err}") from err
        return ToolFile(file, "openapi", source.tools, source)
    specs = document.get("tools") if isinstance(document, Mapping) and "tools" in document else document
    specs = [specs] if isinstance(specs, Mapping) else specs
    if not isinstance(specs, list) or not specs:
        raise ToolSourceError(f"{file}: expected tool definitions (a list of them, one, or {{\"tools\": [...]}}) "
                              "or an OpenAPI document (with an 'openapi' key)")
    return ToolFile(file, "definitions", _register(file, ((f"tool {i}", None, spec) for i, spec in enumerate(specs))))


def read_document(path: Path) -> Any:
    """A JSON or YAML file as data (YAML needs ``pyyaml``).

    Raises:
        ToolSourceError: It does not parse: ``file:line:column: the reason``.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as err:
            raise ToolSourceError(f"{path}: reading YAML needs pyyaml: pip install 'tooldec[sources]'") from err
        try:
            return yaml.safe_load(text)
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark
            where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
            raise ToolSourceError(f"{path}{where}: not valid YAML: {err.problem}") from None
        except yaml.YAMLError as err:
            raise ToolSourceError(f"{path}: not valid YAML: {err}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ToolSourceError(f"{path}:{err.lineno}:{err.colno}: not valid JSON: {err.msg}") from None


def python_tools(file: Path) -> list[Tool]:
    """The tools of a Python file: its ``TOOLS`` list, else the public functions defined in it,
    registered (``ToolSourceError`` ``file:line: ...`` for any mistake)."""
    source = file.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=str(file))
    except SyntaxError as err:
        raise ToolSourceError(f"{file}:{err.lineno}: syntax error: {err.msg}") from None
    name = f"tooldec_user_tools_{file.stem}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ToolSourceError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and typing.get_type_hints look the module up
    try:
        spec.loader.exec_module(module)
    except BaseException as err:
        if isinstance(err, KeyboardInterrupt):
            raise
        line = next((frame.lineno for frame in reversed(traceback.extract_tb(err.__traceback__))
                     if Path(frame.filename).resolve() == file.resolve()), None)
        raise ToolSourceError(f"{file}:{line or 1}: {type(err).__name__}: {err}") from None
    assigned = _assignment_line(tree, "TOOLS")
    tools = getattr(module, "TOOLS", None)
    if tools is None:
        found = [(attr, obj) for attr, obj in vars(module).items()
                 if inspect.isfunction(obj) and not attr.startswith("_") and obj.__module__ == name]
        if not found:
            raise ToolSourceError(f"{file}: defines no tools: write public functions or a TOOLS list")
        return _register(file, ((attr, obj.__code__.co_firstlineno, obj) for attr, obj in found))
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise ToolSourceError(f"{file}:{assigned or 1}: TOOLS must be a list of tools (functions, tool dicts, "
                              f"Pydantic models), got {type(tools).__name__}")
    listed = list(tools)
    if not listed:
        raise ToolSourceError(f"{file}:{assigned or 1}: TOOLS is empty")
    return _register(file, ((f"TOOLS[{i}]", _line_of(obj) or assigned, obj) for i, obj in enumerate(listed)))


def _register(file: Path, entries: Iterable[tuple[str, int | None, Any]]) -> list[Tool]:
    tools = []
    for what, line, obj in entries:
        try:
            tools.append(Tool.coerce(obj))
        except ToolRegistrationError as err:
            where = f"{file}:{line}" if line else f"{file}: {what}"
            raise ToolSourceError(f"{where}: {err}") from err
    return tools


def _assignment_line(tree: ast.Module, name: str) -> int | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node.lineno
    return None


def _line_of(obj: Any) -> int | None:
    code = getattr(obj, "__code__", None)
    return getattr(code, "co_firstlineno", None)
