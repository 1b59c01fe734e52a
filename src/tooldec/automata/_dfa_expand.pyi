"""Types of the compiled subset construction (``_dfa_expand.c``; see :mod:`tooldec.automata.dfa`)."""

from typing import Any

from .costs import Costs
from .dfa import LazyDFA
from .nfa import NFA

def tables(nfa: NFA, costs: Costs, accept: int, prune: bool, step_type: type[Any]) -> object: ...
def expand(tables: object, dfa: LazyDFA, sid: int) -> None: ...
