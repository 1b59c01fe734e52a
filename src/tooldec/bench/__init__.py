"""Benchmark data loaders and experiments (the data itself stays outside the repository)."""
