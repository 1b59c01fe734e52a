"""Types of the compiled plain-schema walk (``_plain_form.c``; see :mod:`tooldec.tools.schema_plain`)."""

from typing import Any

def configure(read: frozenset[str], read_but_type: frozenset[str], scalars: frozenset[str],
              bfcl_types: dict[str, str], plain_own: dict[str, int], plain_member: int,
              plain_no_properties: int, plain_any: int, depth: int, /) -> None: ...
def plain_form_cost(schema: Any, /) -> tuple[dict[str, Any], int] | None: ...
