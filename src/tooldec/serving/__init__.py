"""Serving tooldec behind an OpenAI-compatible endpoint.

``tooldec serve`` (:mod:`tooldec.serving.app`, :mod:`tooldec.serving.cli`): a server for one
machine on the llama.cpp backend. :mod:`tooldec.serving.vllm`: a logits processor and a tool
parser that put tooldec inside vLLM. Both compile request tool lists with
:mod:`tooldec.serving.engine`, step with :mod:`tooldec.backends.step`, and turn tokens into
content and ``tool_calls`` with :mod:`tooldec.serving.assemble`. Importing this package loads no
web or ML framework.

Which thread may touch what is written once, in docs/DESIGN.md (concurrency contract).
"""

from .assemble import Assembler, CallEvent, ContentEvent
from .engine import Compiled, Constraints, tools_key

__all__ = ["Assembler", "CallEvent", "Compiled", "Constraints", "ContentEvent", "tools_key"]
