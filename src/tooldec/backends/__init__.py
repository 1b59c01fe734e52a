"""Where masks meet a model: one module per inference engine, and the step they share.

``tooldec.backends.hf`` (transformers, imports torch) and ``tooldec.backends.llamacpp``
(llama-cpp-python); import them explicitly, so that ``import tooldec.backends`` stays free of ML
frameworks. :func:`generator_for` picks the :class:`Generator` a loaded model needs.
"""

from .generation import Generation, Generator, Request, TokenGenerator
from .loading import Backend, generator_for, load, pick_backend
from .step import Stepper

__all__ = ["Backend", "Generation", "Generator", "Request", "Stepper", "TokenGenerator", "generator_for", "load",
           "pick_backend"]
