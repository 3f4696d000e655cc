"""The replay engine: guard logs into DuckDB, detectors over them, reports.

`open_logs` (the notebook API) is loaded on first use so that importing a
submodule such as `nonatomic.replay.ingest.schema` stays cheap.
"""

from __future__ import annotations


def __getattr__(name: str):
    if name in ("open_logs", "Replay"):
        from nonatomic.replay import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
