"""Named query parameters: how every value that is not ours reaches DuckDB.

File paths, field names from mappings and headers, and mapped values are
bound as parameters and never spliced into SQL text.
"""

from __future__ import annotations


class Params:
    def __init__(self) -> None:
        self.values: dict[str, object] = {}

    def __call__(self, value: object) -> str:
        """Bind a value; returns the `$name` to write in the SQL text."""
        name = f"p{len(self.values)}"
        self.values[name] = value
        return f"${name}"
