"""Token ids as exact byte strings: the vocabulary every token mask is computed against.

Importing this package loads neither torch nor transformers; ``tooldec.tokens.hf`` adapts a
transformers tokenizer object when you have one.
"""

from tooldec.tokens.loaders import from_gguf, from_sentencepiece, from_tekken, from_tokenizer_json, load_vocabulary
from tooldec.tokens.vocabulary import VocabKind, Vocabulary

__all__ = [
    "VocabKind",
    "Vocabulary",
    "from_gguf",
    "from_sentencepiece",
    "from_tekken",
    "from_tokenizer_json",
    "load_vocabulary",
]
