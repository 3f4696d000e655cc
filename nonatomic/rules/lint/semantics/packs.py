"""Loading the YAML rule packs shipped next to the catalogue."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import yaml


@lru_cache(maxsize=None)
def load_pack(name: str) -> Any:
    """The parsed `nonatomic/rules/<name>.yaml`."""
    text = resources.files("nonatomic.rules").joinpath(f"{name}.yaml").read_text("utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml when built with it
