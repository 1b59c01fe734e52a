"""Where masks meet a model: one module per inference engine.

``tooldec.backends.hf`` (transformers, imports torch) and ``tooldec.backends.llamacpp``
(llama-cpp-python); import them explicitly, so that ``import tooldec.backends`` stays free of ML
frameworks. :func:`generator_for` picks the one a loaded model needs.
"""

from .generation import Backend, Generation, generator_for, load, pick_backend

__all__ = ["Backend", "Generation", "generator_for", "load", "pick_backend"]
