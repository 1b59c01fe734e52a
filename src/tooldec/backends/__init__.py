"""Where masks meet a model: one module per inference engine (``hf``, ``llamacpp``: import them
explicitly, so ``import tooldec.backends`` loads no ML framework), and the step they share."""

from .generation import Generation, Generator, Request, TokenGenerator
from .loading import Backend, generator_for, load, pick_backend
from .step import Stepper

__all__ = ["Backend", "Generation", "Generator", "Request", "Stepper", "TokenGenerator", "generator_for", "load",
           "pick_backend"]
