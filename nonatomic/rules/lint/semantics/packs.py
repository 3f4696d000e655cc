"""Loading the YAML rule packs shipped next to the catalogue."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

# The packs are files beside the catalogue (read directly: importlib.resources costs
# a tenth of a clean file's whole lint to import).
PACKS = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=None)
def load_pack(name: str) -> Any:
    """The parsed `nonatomic/rules/<name>.yaml`."""
    text = (PACKS / f"{name}.yaml").read_text("utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml when built with it
