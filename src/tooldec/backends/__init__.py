"""Where masks meet a model: one module per inference engine.

``tooldec.backends.hf`` (transformers) imports torch; import it explicitly, so that
``import tooldec.backends`` stays free of ML frameworks.
"""

__all__: list[str] = []
