"""The algebra of normalized schemas (core form, :mod:`.schema_core`): conjunction, canonical form, disjointness."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from jsonschema import Draft202012Validator

from tooldec.automata.regex import fsm_of, length_range, string_regexes
from tooldec.automata.regex_fsm import MAX_PATTERN_UNITS
from tooldec.errors import SchemaTooComplexError, UnsupportedSchemaError
from tooldec.tools.schema_core import (
    ALL_TYPES,
    KIND_KEYS,
    MAX_BRANCHES,
    MAX_NODES,
    Schema,
    dedupe,
    has_number,
    is_writable,
    kinds,
    lengths_meet,
    lower_bound,
    regex_items,
    set_regexes,
    tighter,
    union_by_type,
    upper_bound,
    value_key,
)

__all__ = ["Algebra"]


class Algebra:
    """Conjunction and canonical form of core schemas, with the errors and bounds of one schema; ``reasons``
    collects why subschemas were unsatisfiable (pointer, reason), so an unsatisfiable root names its cause."""

    def __init__(self, tool: str | None, validator: Callable[[Schema], Draft202012Validator],
                 matches: Callable[[str, str], bool]) -> None:
        self.tool = tool
        self.validator = validator
        self.matches = matches
        self.reasons: list[tuple[str, str]] = []
        self.nodes = 0

    # -- errors -------------------------------------------------------------------------------

    def unsupported(self, message: str, pointer: str, keyword: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(message, tool=self.tool, pointer=pointer, keyword=keyword)

    def too_complex(self, message: str, pointer: str, keyword: str) -> SchemaTooComplexError:
        return SchemaTooComplexError(message, tool=self.tool, pointer=pointer, keyword=keyword)

    def empty(self, pointer: str, reason: str) -> bool:
        self.reasons.append((pointer, reason))
        return False

    # -- combinators --------------------------------------------------------------------------

    def any_of(self, branches: list[Schema], ptr: str, keyword: str = "anyOf") -> Schema:
        flat: list[Schema] = []
        for branch in branches:
            if branch is True:
                return True
            if isinstance(branch, dict) and set(branch) == {"anyOf"}:
                flat.extend(branch["anyOf"])
            elif branch is not False:
                flat.append(branch)
        if len(flat) > MAX_BRANCHES:
            raise self.too_complex(
                f"{len(flat)} alternatives after combining this schema's keywords (at most {MAX_BRANCHES});"
                " simplify the anyOf/oneOf/allOf combination", ptr, keyword)
        if not flat:
            return self.empty(ptr, f"every {keyword} branch is unsatisfiable")
        return flat[0] if len(flat) == 1 else union_by_type(flat)

    def conj_all(self, schemas: Iterable[Schema], ptr: str) -> Schema:
        out: Schema = True
        for s in schemas:
            out = self.conj(out, s, ptr)
        return out

    def conj(self, a: Schema, b: Schema, ptr: str) -> Schema:
        """The schema of the values both ``a`` and ``b`` accept (``ptr`` names the place)."""
        if a is False or b is False:
            return False
        if a is True:
            return b
        if b is True:
            return a
        if "anyOf" in a:
            return self.any_of([self.conj(x, b, ptr) for x in a["anyOf"]], ptr)
        if "anyOf" in b:
            return self.any_of([self.conj(a, y, ptr) for y in b["anyOf"]], ptr)
        if "enum" in a or "enum" in b:
            if "enum" in a and "enum" in b:
                keys = {value_key(v) for v in b["enum"]}
                values = [v for v in a["enum"] if value_key(v) in keys]
            else:
                literal, rest = (a, b) if "enum" in a else (b, a)
                values = [v for v in literal["enum"] if self.validator(rest).is_valid(v)]
            return {"enum": values} if values else self.empty(ptr, "no value of the enum fits the other keywords")
        out: dict[str, Any] = {}
        ka, kb = kinds(a), kinds(b)
        both = [k for k in ka if k in kb or (k == "integer" and "number" in kb)]
        both += [k for k in kb if k == "integer" and "number" in ka and k not in both]
        if not both:
            return self.empty(ptr, f"the types {ka} and {kb} do not meet")
        if "type" in a or "type" in b:
            out["type"] = both
        if has_number(both):
            self.conj_numbers(a, b, out, ptr)
        if "string" in both:
            for key, pick in (("minLength", max), ("maxLength", min)):
                found = [s[key] for s in (a, b) if key in s]
                if found:
                    out[key] = pick(found)
            set_regexes(out, list(dict.fromkeys(regex_items(a) + regex_items(b))))
        if "array" in both:
            self.conj_arrays(a, b, out, ptr)
        if "object" in both:
            self.conj_objects(a, b, out, ptr)
        if "not" in a or "not" in b:
            out["not"] = {"enum": dedupe([*a.get("not", {}).get("enum", []), *b.get("not", {}).get("enum", [])])}
        return self.canonical(out, ptr)

    def conj_numbers(self, a: Mapping[str, Any], b: Mapping[str, Any], out: dict[str, Any], ptr: str) -> None:
        low = tighter(lower_bound(a), lower_bound(b), lower=True)
        high = tighter(upper_bound(a), upper_bound(b), lower=False)
        if low is not None:
            out["exclusiveMinimum" if low[1] else "minimum"] = low[0]
        if high is not None:
            out["exclusiveMaximum" if high[1] else "maximum"] = high[0]
        if "multipleOf" in a or "multipleOf" in b:
            out["multipleOf"] = math.lcm(a.get("multipleOf", 1), b.get("multipleOf", 1))

    def conj_arrays(self, a: Mapping[str, Any], b: Mapping[str, Any], out: dict[str, Any], ptr: str) -> None:
        for key, pick in (("minItems", max), ("maxItems", min)):
            found = [s[key] for s in (a, b) if key in s]
            if found:
                out[key] = pick(found)
        pa, pb = a.get("prefixItems", []), b.get("prefixItems", [])
        ia, ib = a.get("items", True), b.get("items", True)
        if pa or pb:
            out["prefixItems"] = [
                self.conj(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib, f"{ptr}/prefixItems/{i}")
                for i in range(max(len(pa), len(pb)))]
        if "items" in a or "items" in b:
            out["items"] = self.conj(ia, ib, f"{ptr}/items")

    def key_schema(self, schema: Mapping[str, Any], name: str, ptr: str) -> Schema:
        """What ``schema`` requires of the value under key ``name``."""
        if name in schema.get("properties", {}):
            return schema["properties"][name]  # type: ignore[no-any-return]
        matched = [s for p, s in schema.get("patternProperties", {}).items() if self.matches(p, name)]
        if matched:
            return self.conj_all(matched, ptr)
        return schema.get("additionalProperties", True)  # type: ignore[no-any-return]

    def conj_objects(self, a: Mapping[str, Any], b: Mapping[str, Any], out: dict[str, Any], ptr: str) -> None:
        names = list(dict.fromkeys([*a.get("properties", {}), *b.get("properties", {})]))
        if names:
            out["properties"] = {
                n: self.conj(self.key_schema(a, n, ptr), self.key_schema(b, n, ptr), f"{ptr}/properties/{n}")
                for n in names}
        required = list(dict.fromkeys([*a.get("required", []), *b.get("required", [])]))
        if required:
            out["required"] = required
        for key, pick in (("minProperties", max), ("maxProperties", min)):
            found = [s[key] for s in (a, b) if key in s]
            if found:
                out[key] = pick(found)
        pa, pb = a.get("patternProperties", {}), b.get("patternProperties", {})
        xa, xb = a.get("additionalProperties", True), b.get("additionalProperties", True)
        if pa and pb and (xa is not True or xb is not True):
            raise self.unsupported(
                "both schemas have patternProperties and one limits additional properties: keys matching one"
                " schema's patterns only would need the other's additionalProperties, which tooldec cannot"
                " write exactly; merge the patterns by hand", ptr, "patternProperties")
        patterns: dict[str, Schema] = {}
        for p, s in pa.items():
            patterns[p] = self.conj(s, xb if not pb else True, f"{ptr}/patternProperties/{p}")
        for p, s in pb.items():
            patterns[p] = self.conj(patterns[p], s, ptr) if p in patterns else \
                self.conj(s, xa if not pa else True, f"{ptr}/patternProperties/{p}")
        if patterns:
            out["patternProperties"] = patterns
        if "additionalProperties" in a or "additionalProperties" in b:
            out["additionalProperties"] = self.conj(xa, xb, f"{ptr}/additionalProperties")

    # -- canonical form -----------------------------------------------------------------------

    def canonical(self, schema: dict[str, Any], ptr: str) -> Schema:
        """``schema`` (a dict of core keywords) in canonical form, ``False`` if nothing fits."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.too_complex(
                f"more than {MAX_NODES} subschemas once references are unrolled and combinations"
                " distributed", ptr, "$ref")
        if "enum" in schema:
            rest = {k: v for k, v in schema.items() if k != "enum"}
            check = self.validator(rest) if rest else None
            values = [v for v in dedupe(schema["enum"]) if is_writable(v) and (check is None or check.is_valid(v))]
            return {"enum": values} if values else self.empty(ptr, "no value of the enum fits the other keywords")
        ks = kinds(schema)
        out = dict(schema)
        if has_number(ks) and not self.canonical_numbers(out, ks, ptr):
            ks = [k for k in ks if k not in ("number", "integer")]
        if "string" in ks and not self.canonical_string(out, ptr):
            ks.remove("string")
        if "array" in ks and not self.canonical_array(out, ptr):
            ks.remove("array")
        if "object" in ks and not self.canonical_object(out, ptr):
            ks.remove("object")
        excluded = out.get("not", {}).get("enum", [])
        if excluded:
            for k in ("null", "boolean"):
                if k in ks and {value_key(v) for v in ([None] if k == "null" else [True, False])} \
                        <= {value_key(v) for v in excluded}:
                    ks.remove(k)
        if "number" in ks and "integer" in ks:
            ks.remove("integer")
        if not ks:
            return self.empty(ptr, "no JSON type is left that satisfies every keyword")
        all_kinds = [k for k in ALL_TYPES if k != "integer"]
        if "type" in out or set(ks) != set(all_kinds):
            if set(ks) == set(all_kinds):
                out.pop("type", None)
            else:
                out["type"] = ks[0] if len(ks) == 1 else ks
        for kind, keys in KIND_KEYS.items():
            if kind not in ks and not (kind == "number" and "integer" in ks):
                for key in keys:
                    out.pop(key, None)
        if excluded:
            relevant = [v for v in excluded if self.validator({k: v for k, v in out.items() if k != "not"}).is_valid(v)]
            if relevant:
                out["not"] = {"enum": relevant}
            else:
                out.pop("not")
        return out if out else True

    def canonical_numbers(self, out: dict[str, Any], ks: list[str], ptr: str) -> bool:
        low, high = lower_bound(out), upper_bound(out)
        multiple = out.get("multipleOf", 1)
        if "multipleOf" in out and "number" in ks:
            ks[ks.index("number")] = "integer"  # multiples (of 1 too) are written as integers
        if multiple == 1:
            out.pop("multipleOf", None)
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            out.pop(key, None)
        if "number" in ks:
            if low is not None:
                out["exclusiveMinimum" if low[1] else "minimum"] = low[0]
            if high is not None:
                out["exclusiveMaximum" if high[1] else "maximum"] = high[0]
            if low is not None and high is not None and (
                    low[0] > high[0] or (low[0] == high[0] and (low[1] or high[1]))):
                return self.empty(ptr, "the numeric range is empty")
            return True
        lo = None if low is None else (math.floor(Fraction(low[0])) + 1 if low[1] else math.ceil(Fraction(low[0])))
        hi = None if high is None else (math.ceil(Fraction(high[0])) - 1 if high[1] else math.floor(Fraction(high[0])))
        if multiple != 1:  # tighten to the nearest multiples
            lo = None if lo is None else -(-lo // multiple) * multiple
            hi = None if hi is None else hi // multiple * multiple
        if lo is not None:
            out["minimum"] = lo
        if hi is not None:
            out["maximum"] = hi
        if lo is not None and hi is not None and lo > hi:
            return self.empty(ptr, "no integer lies in the range")
        return True

    def canonical_string(self, out: dict[str, Any], ptr: str) -> bool:
        low, high = out.get("minLength", 0), out.get("maxLength")
        if low == 0:
            out.pop("minLength", None)
        if high is not None and low > high:
            return self.empty(ptr, f"minLength {low} > maxLength {high}")
        regexes = string_regexes(out)
        if not regexes:
            return True
        fsm = fsm_of(regexes)
        span = length_range(fsm)
        grown = len(fsm.states) * low  # minLength is intersected into the automaton as [\s\S]{low,}
        if span is not None and span[0] < low and (span[1] is None or span[1] >= low) and grown > MAX_PATTERN_UNITS:
            raise self.too_complex(
                f"minLength {low} beside a pattern or format is built into the pattern's automaton: its"
                f" {len(fsm.states)} states times {low} characters (at most {MAX_PATTERN_UNITS}); without a pattern"
                " or format the length is counted", f"{ptr}/minLength", "minLength")
        if not lengths_meet(regexes, low, high):
            what = "these lengths" if "minLength" in out or "maxLength" in out else "one string"
            return self.empty(ptr, f"no string matches every pattern and format in {what}")
        if span is not None and span[0] >= low and high is not None and span[1] is not None and span[1] <= high:
            out.pop("minLength", None)  # the regexes alone already keep the length in range
            out.pop("maxLength", None)
        elif span is not None and span[0] >= low:
            out.pop("minLength", None)
        return True

    def canonical_array(self, out: dict[str, Any], ptr: str) -> bool:
        low, high = out.get("minItems", 0), out.get("maxItems")
        if low == 0:
            out.pop("minItems", None)
        if high is not None and low > high:
            return self.empty(ptr, f"minItems {low} > maxItems {high}")
        prefix = out.get("prefixItems", [])
        if high is not None and len(prefix) > high:
            prefix = out["prefixItems"] = prefix[:high]
        rest = out.get("items", True)
        for i in range(low):
            item = prefix[i] if i < len(prefix) else rest
            if item is False:
                return self.empty(f"{ptr}/prefixItems/{i}" if i < len(prefix) else f"{ptr}/items",
                                  f"array item {i} is required (minItems {low}) but unsatisfiable")
            if i >= len(prefix):
                break
        if "prefixItems" in out and not prefix:
            del out["prefixItems"]
        return True

    def canonical_object(self, out: dict[str, Any], ptr: str) -> bool:
        props = dict(out.get("properties", {}))
        patterns = out.get("patternProperties", {})
        for name in list(props):
            matched = [s for p, s in patterns.items() if self.matches(p, name)]
            if matched:
                props[name] = self.conj_all([props[name], *matched], f"{ptr}/properties/{name}")
            if not is_writable(name):
                props[name] = False  # a key with a lone surrogate cannot be written in UTF-8
        required = out.get("required", [])
        for name in required:
            if name not in props:
                props[name] = self.key_schema(out, name, ptr)
            if props[name] is False:
                if name in out.get("properties", {}):
                    return self.empty(f"{ptr}/properties/{name}", f"required property {name!r} can have no value")
                return self.empty(f"{ptr}/required", f"required property {name!r} is not in 'properties' and"
                                                     " additionalProperties is false")
        if props:
            out["properties"] = props
        low, high = out.get("minProperties", 0), out.get("maxProperties")
        if low <= len(required):
            out.pop("minProperties", None)
        if high is not None and high < max(low, len(required)):
            return self.empty(ptr, f"maxProperties {high} is below the {max(low, len(required))} properties needed")
        extra = out.get("additionalProperties", True)
        if extra is False and not patterns and low > sum(1 for s in props.values() if s is not False):
            return self.empty(ptr, f"minProperties {low} exceeds the properties that may be written")
        return True

    # -- oneOf --------------------------------------------------------------------------------

    def without(self, schema: Schema, keys: set[str], ptr: str) -> Schema:
        """``schema`` whose objects may not have ``keys`` (a subset of its values)."""
        if not isinstance(schema, dict) or not keys:
            return schema
        if "anyOf" in schema:
            return self.any_of([self.without(b, keys, ptr) for b in schema["anyOf"]], ptr)
        declared = schema.get("properties", {})
        if "object" not in kinds(schema):
            return schema
        return self.canonical({**schema, "properties": {**declared, **dict.fromkeys(sorted(keys), False)}}, ptr)

    @staticmethod
    def required_keys(schema: Schema) -> set[str]:
        """Keys every object of ``schema`` has."""
        if not isinstance(schema, dict):
            return set()
        if "anyOf" in schema:
            sets = [Algebra.required_keys(b) for b in schema["anyOf"]]
            return set.intersection(*sets) if sets else set()
        return set(schema.get("required", []))

    def disjoint(self, a: Schema, b: Schema, ptr: str) -> bool:
        """Whether no value can satisfy both (a sound test: ``False`` when unsure)."""
        if a is False or b is False:
            return True
        if a is True or b is True:
            return False
        if "anyOf" in a:
            return all(self.disjoint(x, b, ptr) for x in a["anyOf"])
        if "anyOf" in b:
            return all(self.disjoint(a, y, ptr) for y in b["anyOf"])
        if "enum" in a or "enum" in b:
            literal, rest = (a, b) if "enum" in a else (b, a)
            return not any(self.validator(rest).is_valid(v) for v in literal["enum"])
        ka, kb = kinds(a), kinds(b)
        for kind in ka:
            if kind in kb or (kind == "integer" and "number" in kb) or (kind == "number" and "integer" in kb):
                if not self.disjoint_kind(a, b, kind, ptr):
                    return False
        return True

    def disjoint_kind(self, a: Mapping[str, Any], b: Mapping[str, Any], kind: str, ptr: str) -> bool:
        if kind in ("number", "integer"):
            for x, y in ((a, b), (b, a)):
                high, low = upper_bound(x), lower_bound(y)
                if high is not None and low is not None and (
                        high[0] < low[0] or (high[0] == low[0] and (high[1] or low[1]))):
                    return True
            return False
        if kind in ("string", "array"):
            lo, hi = ("minLength", "maxLength") if kind == "string" else ("minItems", "maxItems")
            if any(y.get(hi) is not None and x.get(lo, 0) > y[hi] for x, y in ((a, b), (b, a))):
                return True
            # wide readings: what ``re`` might match, so an empty meeting proves them apart
            regexes = tuple(dict.fromkeys(string_regexes(a, wide=True) + string_regexes(b, wide=True))) \
                if kind == "string" else ()
            highs = [s[hi] for s in (a, b) if hi in s]
            return bool(regexes) and not lengths_meet(regexes, max(a.get(lo, 0), b.get(lo, 0)),
                                                      min(highs) if highs else None)
        if kind != "object":
            return False
        for x, y in ((a, b), (b, a)):
            for name in x.get("required", []):
                other = self.key_schema(y, name, ptr)
                if other is False:
                    return True
                if name in y.get("required", []) and self.disjoint(x["properties"][name], other, ptr):
                    return True
        return False
