"""The `[tool.nonatomic.tools]` table and the shipped `tools.yaml` it extends: what
the table may hold, and the key spellings.  No libcst here: the engine validates
configuration before it imports any rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from nonatomic.rules.lint.semantics.packs import load_pack

LEVELS = ("none", "low", "high", "irreversible")
_TABLE_LISTS = ("write", "read", "idempotency_keys")


def tool_pack() -> dict[str, Any]:
    return load_pack("tools")


def constructor_types(tools: Mapping[str, Any]) -> dict[str, str]:
    """Constructor dotted name -> the type it makes: `objects.yaml` plus the table's `types`."""
    types = {**load_pack("objects")["types"], **tools.get("types", {})}
    return {ctor: type_name for type_name, ctors in types.items() for ctor in ctors}


@lru_cache(maxsize=None)
def client_packages() -> frozenset[str]:
    """Packages whose objects are clients of something outside (`objects.yaml`)."""
    return frozenset(load_pack("objects")["client_packages"])


def client_class(name: str | None) -> bool:
    """A class of a client package, by its resolved dotted name: `opensearchpy.OpenSearch`
    (a capitalised last name: `requests.get` is a function, not a class)."""
    if not name or "." not in name:
        return False
    root, _, rest = name.partition(".")
    return root in client_packages() and rest.rsplit(".", 1)[-1][:1].isupper()


def normal_key(name: str) -> str:
    """A key spelling as compared: `Idempotency-Key`, `idempotency_key` -> "idempotencykey"."""
    return name.replace("-", "").replace("_", "").lower()


def validate_tools_table(table: Any) -> list[str]:
    """What is wrong with a `[tool.nonatomic.tools]` table (empty when nothing)."""
    if not isinstance(table, Mapping):
        return ["[tool.nonatomic.tools] must be a table"]
    errors = []
    for key, value in table.items():
        if key in _TABLE_LISTS:
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                errors.append(f"[tool.nonatomic.tools] `{key}` must be a list of names")
        elif key == "levels":
            if not isinstance(value, Mapping):
                errors.append("[tool.nonatomic.tools] `levels` must be a table of name = level")
                continue
            for name, level in value.items():
                if level not in LEVELS:
                    errors.append(
                        f"[tool.nonatomic.tools.levels] `{name}`: level must be one of {', '.join(LEVELS)}"
                    )
        elif key == "types":
            if not isinstance(value, Mapping) or not all(
                isinstance(v, list) and all(isinstance(c, str) for c in v) for v in value.values()
            ):
                errors.append("[tool.nonatomic.tools] `types` must be a table of type = [constructors]")
        else:
            known = ", ".join([*_TABLE_LISTS, "levels", "types"])
            errors.append(f"[tool.nonatomic.tools] unknown key `{key}` (known: {known})")
    return errors
