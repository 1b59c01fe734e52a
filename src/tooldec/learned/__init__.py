"""Learned tokens on a frozen model: ToolDec's ``<T>`` trigger and ToolkenGPT's toolkens.

``features`` runs the model over demonstrations, ``train`` fits the output rows, ``tokens`` keeps
them in a small file, ``generator`` decodes with them (llama.cpp). ``tooldec train-trigger`` is the
command (``cli``).
"""

from __future__ import annotations

from .features import Demonstration, Features, Mark, extract
from .tokens import TRIGGER, LearnedTokenError, LearnedTokens
from .train import SwitchScores, fit_rows, switch_scores

__all__ = [
    "TRIGGER",
    "Demonstration",
    "Features",
    "LearnedTokenError",
    "LearnedTokens",
    "Mark",
    "SwitchScores",
    "extract",
    "fit_rows",
    "switch_scores",
]
