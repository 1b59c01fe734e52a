"""How many tokens the longest-match cut of a text given as runs has, without spelling the runs.

Inside a repeat, far enough from its end, a longest-match step depends only on the position
modulo the piece, so once the cut comes back to a phase each period adds the same tokens: the
count skips the periods before the repeat's last ``longest`` bytes and walks the rest.
"""

from __future__ import annotations

from collections.abc import Callable

from ..automata.shortest import Runs, spell

__all__ = ["count_runs"]


class _Text:
    """Random access to the text of runs: ``size`` bytes from ``offset`` into run ``i``."""

    def __init__(self, runs: Runs, longest: int) -> None:
        self.runs = runs
        self.lengths = [len(piece) * times for piece, times in runs]
        # each piece repeated enough that any window of ``longest`` bytes inside its run is one slice
        self.wide = [piece * min(times, -(-longest // len(piece)) + 1) for piece, times in runs]

    def read(self, i: int, offset: int, size: int) -> bytes:
        out = b""
        while size > 0 and i < len(self.runs):
            length = self.lengths[i]
            if offset < length:
                take = min(size, length - offset)
                phase = offset % len(self.runs[i][0])
                out += self.wide[i][phase : phase + take] if phase + take <= len(self.wide[i]) else \
                    (self.runs[i][0] * (-(-(phase + take) // len(self.runs[i][0]))))[phase : phase + take]
                size -= take
                offset = 0
            else:
                offset -= length
            i += 1
        return out


def count_runs(runs: Runs, longest_prefix: Callable[[bytes], int], longest: int,
               count_text: Callable[[bytes], int | None]) -> int | None:
    """Tokens in the longest-match cut of the text of ``runs`` (``None``: some step finds no
    token), by ``longest_prefix`` steps that look ``longest`` bytes ahead and ``count_text`` for
    the plain text after the last repeat."""
    text = _Text(runs, longest)
    lengths = text.lengths
    last = len(runs)  # past the last repeat: what is left from there is counted in one call
    while last and runs[last - 1][1] == 1:
        last -= 1
    i = offset = count = 0
    phases: dict[int, tuple[int, int]] = {}  # phase in the repeat -> (offset, count) when a step started there
    while i < len(runs):
        if offset >= lengths[i]:
            offset -= lengths[i]
            i += 1
            phases.clear()
            continue
        room = lengths[i] - offset
        if i >= last or (i == last - 1 and room <= 4 * longest):  # a cut point: the rest counts alone
            rest = count_text(text.read(i, offset, room) + spell(runs[i + 1 :]))
            return None if rest is None else count + rest
        piece, times = runs[i]
        if times > 1 and room >= longest:  # the step reads inside the repeat only: its phase decides it
            phase = offset % len(piece)
            before = phases.get(phase)
            if before is not None:
                period, gained = offset - before[0], count - before[1]
                skip = (room - longest) // period
                if skip:
                    offset += skip * period
                    count += skip * gained
                    phases.clear()
                    continue
            phases[phase] = (offset, count)
        size = longest_prefix(text.read(i, offset, longest))
        if not size:
            return None
        offset += size
        count += 1
    return count
