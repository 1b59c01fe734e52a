"""Fewest bytes to acceptance from an NFA state, given its counted regions' counter classes: the tables behind
``LazyDFA``'s distances (budgets, shortest completions) and pruning, computed once per automaton."""

from __future__ import annotations

import functools
import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from .nfa import NFA, TOP, stamp_plan

__all__ = ["INF", "MID", "Costs", "region_chains"]

MID = -1
"""Counter class: at least ``low`` and more than the window below ``high``."""
INF = 1 << 60


@dataclass
class _RegionInfo:
    unit_min: int = INF
    sep_min: int = 0
    passing: int = 0  # fewest bytes from entry to exit
    band: int = 0


class Costs:
    """Fewest bytes to acceptance from an NFA state given its regions' counter classes: each scope gets distances
    to its target (its loop state, or acceptance), inner regions contracted to one edge of their passing cost; a
    state's cost adds, region by region outwards, the units still owed (``low - count``) and the way out."""

    def __init__(self, nfa: NFA, accept: int, window: int) -> None:
        self.nfa = nfa
        self.window = window
        n = nfa.size
        self.local = [INF] * n
        self.chars = [INF] * n  # text regions: fewest characters to the region's end
        self.info = [_RegionInfo() for _ in nfa.regions]
        self._cdist: dict[tuple[int, int], int] = {}
        self._members = _members(nfa)
        self._children: dict[int, list[int]] = {}
        for rid, reg in enumerate(nfa.regions):
            self._children.setdefault(reg.parent, []).append(rid)
        copied = self._copy_stamps()
        for rid in range(len(nfa.regions) - 1, -1, -1):  # inner regions were created after outer ones
            if rid not in copied:
                self._scope(rid)
        self._scope(TOP, accept)
        self.reach = self._reaching()

    def _reaching(self) -> list[bool]:
        """Which NFA states can reach acceptance: their scope's target (or they are its ``decide`` or ``loop``),
        and its exit acceptance in turn (never less than a counted walk reaches)."""
        nfa, local = self.nfa, self.local
        ok: list[bool] = []  # per region: its exit reaches acceptance (a parent comes first)
        for region in nfa.regions:
            ok.append(local[region.exit] < INF and (region.parent == TOP or ok[region.parent]))
        reach = [d < INF and (scope == TOP or ok[scope]) for d, scope in zip(local, nfa.scope)]
        for rid, region in enumerate(nfa.regions):
            if ok[rid]:
                reach[region.decide] = reach[region.loop] = True
        return reach

    def _copy_stamps(self) -> set[int]:
        """Copy the tables of stamped pieces' regions from their template's; returns the regions copied."""
        copied: set[int] = set()
        for stamp in self.nfa.stamps:
            if not stamp.template.regions:
                continue
            local, chars, info = _template_tables(stamp.template, stamp.frag[1], self.window)
            end = stamp.base + stamp.template.size
            self.local[stamp.base:end] = local
            self.chars[stamp.base:end] = chars
            self.info[stamp.rbase:stamp.rbase + len(info)] = info
            copied.update(range(stamp.rbase, stamp.rbase + len(info)))
        return copied

    def class_of(self, region: int, count: int) -> int:
        """The exact count below ``low`` or within the band under ``high``, else ``MID``."""
        reg = self.nfa.regions[region]
        if count < reg.low:
            return count
        if reg.high is None or reg.high - count > self.info[region].band:
            return MID
        return count

    def _scope(self, rid: int, target: int | None = None) -> None:
        nfa = self.nfa
        region = nfa.regions[rid] if rid != TOP else None
        goal = (target if target is not None else -1) if region is None else region.loop
        members = self._members.get(rid, [])
        reverse: dict[int, list[tuple[int, int]]] = {s: [] for s in members}
        children = self._children.get(rid, [])
        edges, eps, scope = nfa.edges, nfa.eps, nfa.scope
        for src in members:
            if edges[src]:
                byte = (src, 1)
                for _, _, dst in edges[src]:
                    if scope[dst] == rid:
                        reverse[dst].append(byte)
            if eps[src]:
                free = (src, 0)
                for dst in eps[src]:
                    if scope[dst] == rid:
                        reverse[dst].append(free)
        for child in children:
            reg = nfa.regions[child]
            reverse[reg.exit].append((reg.entry, self.info[child].passing))
        self._dijkstra(goal, reverse, self.local)
        if region is None:
            return
        info = self.info[rid]
        if region.text:
            chars_rev: dict[int, list[tuple[int, int]]] = {s: [] for s in members}
            units = region.units
            for src in members:
                for _, _, dst in nfa.edges[src]:
                    if nfa.scope[dst] == rid:
                        chars_rev[dst].append((src, 1 if src in units else 0))
                for dst in nfa.eps[src]:
                    if nfa.scope[dst] == rid:
                        chars_rev[dst].append((src, 0))
            self._dijkstra(region.loop, chars_rev, self.chars)
            finite = [self.local[s] for s in members if self.local[s] < INF]
            info.band = self.window + (max(finite) if finite else 0)
            info.passing = self.text_dist(region.decide, region.high if region.high is not None else INF)
            info.unit_min = 1
            return
        (unit,) = region.units
        info.unit_min = self.local[unit]
        if region.separator is not None:
            info.sep_min = self.local[region.separator[0]] - info.unit_min
        info.band = self.window
        info.passing = 0 if region.low == 0 else region.low * info.unit_min + (region.low - 1) * info.sep_min

    @staticmethod
    def _dijkstra(goal: int, reverse: dict[int, list[tuple[int, int]]], out: list[int]) -> None:
        """Fewest-cost distances to ``goal`` over ``reverse`` (into ``out``), by buckets of equal distance: most
        weights are 0 or 1, so only the few distinct distances go through a heap (no tuple per move)."""
        if goal not in reverse:
            return
        out[goal] = 0
        buckets = {0: [goal]}
        pending = [0]
        pop, push = heapq.heappop, heapq.heappush
        while pending:
            d = pop(pending)
            bucket = buckets.pop(d)
            for node in bucket:  # grows while it is read (weight-0 moves)
                if out[node] != d:
                    continue  # reached more cheaply since it was put here
                for src, weight in reverse[node]:
                    cand = d + weight
                    if cand < out[src]:
                        out[src] = cand
                        if not weight:
                            bucket.append(src)
                        elif cand in buckets:
                            buckets[cand].append(src)
                        else:
                            buckets[cand] = [src]
                            push(pending, cand)

    def text_dist(self, state: int, budget: int) -> int:
        """Fewest bytes from ``state`` to its text region's end using at most ``budget`` characters."""
        if budget >= INF or self.chars[state] >= INF or self.chars[state] > budget:
            return self.local[state] if self.chars[state] <= budget else INF
        if self.local[state] <= budget:  # a path spends at most one character per byte, so the
            return self.local[state]  # fewest-bytes path fits (the common case: no search)
        key = (state, budget)
        found = self._cdist.get(key)
        if found is not None:
            return found
        nfa = self.nfa
        rid = nfa.scope[state]
        region = nfa.regions[rid]
        units = region.units
        best: dict[tuple[int, int], int] = {(state, budget): 0}
        heap = [(0, state, budget)]
        result = INF
        while heap:
            d, node, left = heapq.heappop(heap)
            if d > best.get((node, left), INF):
                continue
            if node == region.loop:
                result = d
                break
            for dst in nfa.eps[node]:
                if nfa.scope[dst] == rid and d < best.get((dst, left), INF):
                    best[(dst, left)] = d
                    heapq.heappush(heap, (d, dst, left))
            cost = 1 if node in units else 0
            if left - cost < 0:
                continue
            for _, _, dst in nfa.edges[node]:
                key2 = (dst, left - cost)
                if nfa.scope[dst] == rid and d + 1 < best.get(key2, INF):
                    best[key2] = d + 1
                    heapq.heappush(heap, (d + 1, dst, left - cost))
        self._cdist[key] = result
        return result

    def viable(self, state: int, classes: dict[int, int]) -> bool:
        if not self.reach[state]:
            return False
        rid = self.nfa.scope[state]
        if rid == TOP:
            return True
        region = self.nfa.regions[rid]
        cls = classes.get(rid, MID)
        if cls == MID or region.high is None or not region.text:
            return True
        return self.chars[state] <= region.high - cls

    def of(self, states: Iterable[int], classes: dict[int, int]) -> int:
        """Fewest bytes to acceptance from any of ``states`` with counters at ``classes``."""
        local, scope = self.local, self.nfa.scope
        memo: dict[int, int] = {}
        best = INF
        for s in states:  # a state outside every region costs its local distance
            found = local[s] if scope[s] == TOP else self.cost(s, classes, memo)
            if found < best:
                best = found
        return best if best < INF else -1

    def cost(self, state: int, classes: dict[int, int], memo: dict[int, int]) -> int:
        found = memo.get(state)
        if found is not None:
            return found
        nfa = self.nfa
        rid = nfa.scope[state]
        if rid == TOP:
            result = self.local[state]
        else:
            region = nfa.regions[rid]
            info = self.info[rid]
            cls = classes.get(rid, MID)
            out = self.cost(region.exit, classes, memo)
            if region.text:
                left = INF if cls == MID or region.high is None else region.high - cls
                result = self.text_dist(state, left) + out
            else:
                step = info.sep_min + info.unit_min

                def owed(c: int) -> int:
                    return 0 if c == MID else max(0, region.low - c) * step

                def after_one() -> int:
                    return owed(MID if cls == MID else self.class_of(rid, cls + 1)) + out

                if state in (region.decide, region.loop):
                    result = INF
                    if cls == MID or cls >= region.low:
                        result = out
                    if cls == MID or region.high is None or cls < region.high:
                        first = (info.sep_min if state == region.loop and region.separator is not None else 0)
                        result = min(result, first + info.unit_min + after_one())
                elif state in region.units or state in region.separator_states:
                    result = self.local[state] + after_one()
                else:
                    result = self.local[state] + owed(cls) + out
        result = min(result, INF)
        memo[state] = result
        return result


def region_chains(nfa: NFA) -> list[tuple[int, ...]]:
    """Per NFA state, the regions it is inside of, innermost first (one tuple per region, shared)."""
    if not nfa.regions:
        return []
    by_region: list[tuple[int, ...]] = []
    for rid, region in enumerate(nfa.regions):  # a parent region is created before its children
        by_region.append((rid, *(by_region[region.parent] if region.parent != TOP else ())))
    return [by_region[scope] if scope != TOP else () for scope in nfa.scope]


@functools.lru_cache(maxsize=64)
def _template_tables(template: NFA, end: int, window: int) -> tuple[list[int], list[int], list[_RegionInfo]]:
    """A template's region tables, its top-level states at ``INF`` (they depend on where it is stamped); shared."""
    costs = Costs(template, end, window)
    top = [scope == TOP for scope in template.scope]
    local = [INF if t else v for t, v in zip(top, costs.local)]
    chars = [INF if t else v for t, v in zip(top, costs.chars)]
    return local, chars, costs.info


def _members(nfa: NFA) -> dict[int, list[int]]:
    """The states of each scope whose distances are computed here (of a stamped piece, its top-level ones)."""
    members: dict[int, list[int]] = {}
    scope = nfa.scope

    def add(states: Iterable[int]) -> None:
        for state in states:
            members.setdefault(scope[state], []).append(state)

    done = 0
    for stamp in nfa.stamps:  # in the order they were made: increasing, disjoint blocks
        add(range(done, stamp.base))
        if stamp.template.regions:
            add(stamp.base + offset for offset in stamp_plan(stamp.template).top)
        else:
            add(range(stamp.base, stamp.base + stamp.template.size))
        done = stamp.base + stamp.template.size
    add(range(done, nfa.size))
    return members
