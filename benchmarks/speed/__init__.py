"""Speed benchmark: tooldec against XGrammar, llguidance and outlines-core (see README.md)."""
