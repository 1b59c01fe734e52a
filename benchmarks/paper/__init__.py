"""The ToolDec paper's experiments, run from a checkout: ``python -m benchmarks.paper NAME ...``.

Not part of the installed package: the data loaders (``datasets``), the random walks the tests
and ``benchmarks/walks.py`` share (``walks``), and one module per experiment (``experiments``).
The data itself stays outside the repository (``--data``, ``$TOOLDEC_DATA`` or ``../shared/data``).
"""
