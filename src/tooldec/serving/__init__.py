"""Serving tooldec behind an OpenAI-compatible endpoint.

``tooldec serve`` (:mod:`tooldec.serving.app`, :mod:`tooldec.serving.cli`): a server for one
machine on the llama.cpp backend. :mod:`tooldec.serving.vllm`: a logits processor and a tool
parser that put tooldec inside vLLM. Both compile request tool lists with
:mod:`tooldec.serving.engine`, step with :mod:`tooldec.backends.step`, and turn tokens into
content and ``tool_calls`` with :mod:`tooldec.serving.assemble`. Importing this package loads no
web or ML framework.

Concurrency contract (written here once): what requests share is immutable or locked (a
:class:`Constraints`, its bounded cache locked, and its compiler and grammars:
:mod:`tooldec.decoding`); a ``Machine`` belongs to one sequence, used by one thread at a time.
In ``tooldec serve`` the event loop touches no model and no cursor; request threads
(``Service.prepare``, several at once) validate, render and compile through the shared
``Constraints`` (a cursor made there to check a budget is their own); the worker thread alone
touches the model and the jobs' cursors, and waits for its ``Stepper``'s mask thread before it
moves a cursor. Events go back by ``call_soon_threadsafe``, a cancel by a ``threading.Event``;
``/health`` may read the worker's counters one job behind. In vLLM's processor one worker thread
compiles, moves cursors and fills the bitmask, joined before the bitmask is read.
"""

from .assemble import Assembler, CallEvent, ContentEvent
from .engine import Compiled, Constraints, tools_key

__all__ = ["Assembler", "CallEvent", "Compiled", "Constraints", "ContentEvent", "tools_key"]
