"""The members of a JSON object: declared properties in order, then extra keys (see :mod:`.json_schema` for the
choices), with ``minProperties``/``maxProperties`` counted."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .nfa import Frag

if TYPE_CHECKING:
    from .json_schema import SchemaCompiler

__all__ = ["Members"]

_KEY_ENCODER = json.JSONEncoder(ensure_ascii=False)
"""``json.dumps(key, ensure_ascii=False)``'s encoder, made once (not per key)."""


class Members:
    """The members of one object; with ``minProperties``/``maxProperties`` the states count the declared members
    written so far (up to what the bounds need), each optional property built once per count."""

    def __init__(self, compiler: SchemaCompiler, schema: Mapping[str, Any], kwargs: bool) -> None:
        self.c, self.nfa, self.kwargs = compiler, compiler.nfa, kwargs
        props = schema.get("properties", {})
        self.props = [(n, s) for n, s in props.items() if s is not False]
        self.declared = tuple(props)
        self.required = set(schema.get("required", []))
        self.patterns = dict(schema.get("patternProperties", {})) if not kwargs else {}
        extra = schema.get("additionalProperties", True)
        allowed = extra is not False and ("additionalProperties" in schema or not props)
        self.extra: Any = extra if allowed and not kwargs else False
        self.low = int(schema.get("minProperties", 0))
        self.high: int | None = schema.get("maxProperties")
        self.cap = min(len(self.props), max(self.low, self.high or 0))
        self.nodes: dict[tuple[int, int, bool], int] = {}

    def node(self, i: int, count: int, written: bool) -> int:
        key = (i, min(count, self.cap), written)
        if key not in self.nodes:
            self.nodes[key] = self.nfa.state()
        return self.nodes[key]

    def build(self) -> Frag:
        nfa, c = self.nfa, self.c
        sep = c.style.item_sep
        key_sep = b"=" if self.kwargs else c.style.key_sep
        start = self.node(0, 0, False)
        frontier = {(0, False)}
        for i, (name, sub) in enumerate(self.props):
            key = name.encode() if self.kwargs else _KEY_ENCODER.encode(name).encode()
            nxt: set[tuple[int, bool]] = set()
            for count in sorted({k for k, _ in frontier}):
                if self.high is not None and count >= self.high:
                    continue
                begin, end = nfa.seq(nfa.literal(key), c.separator(key_sep), c.value(sub))
                for k, written in frontier:
                    if k != count:
                        continue
                    if written:
                        s2, e2 = c.separator(sep)
                        nfa.epsilon(self.node(i, k, True), s2)
                        nfa.epsilon(e2, begin)
                    else:
                        nfa.epsilon(self.node(i, k, False), begin)
                nfa.epsilon(end, self.node(i + 1, count + 1, True))
                nxt.add((min(count + 1, self.cap), True))
            if name not in self.required:
                for k, written in frontier:
                    nfa.epsilon(self.node(i, k, written), self.node(i + 1, k, written))
                    nxt.add((k, written))
            frontier = nxt
        out = nfa.state()
        n = len(self.props)
        for count, written in frontier:
            self.finish(self.node(n, count, written), count, written, out)
        return start, out

    def finish(self, here: int, count: int, written: bool, out: int) -> None:
        """From after the declared members: the extra members the counts allow, then the end."""
        nfa, c = self.nfa, self.c
        extras = self.extra is not False or bool(self.patterns)
        need = self.low - count  # distinct keys still needed; extra keys count once (they may repeat)
        if need <= 0:
            nfa.epsilon(here, out)
        if not extras or need > 1:
            return
        high = None if self.high is None else self.high - count
        if high is not None and high < 1:
            return
        low = max(need, 1)
        if written:
            body = c.counted(lambda: nfa.seq(c.separator(c.style.item_sep), self.member()), low, high)
        else:
            body = c.counted(self.member, low, high, sep=lambda: c.separator(c.style.item_sep))
        nfa.epsilon(here, body[0])
        nfa.epsilon(body[1], out)

    def member(self) -> Frag:
        """One extra member: a pattern's key and value, or an additional key and value."""
        nfa, c = self.nfa, self.c
        key_sep = c.separator
        options = []
        patterns = tuple(self.patterns)
        for pattern, sub in self.patterns.items():
            if sub is False:
                continue
            others = tuple(p for p in patterns if p != pattern)
            options.append(nfa.seq(c.pattern_key(pattern, others, self.declared), key_sep(c.style.key_sep), c.value(sub)))
        if self.extra is not False:
            key = c.pattern_key(None, patterns, self.declared) if patterns else c.extra_key(set(self.declared))
            options.append(nfa.seq(key, key_sep(c.style.key_sep), c.value(self.extra if isinstance(self.extra, Mapping) else True)))
        return nfa.alt(*options)
