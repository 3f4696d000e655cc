"""Loading the YAML rule packs shipped next to the catalogue."""

from __future__ import annotations

import marshal
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

# The packs are files beside the catalogue (read directly: importlib.resources costs
# a tenth of a clean file's whole lint to import).
PACKS = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=None)
def load_pack(name: str) -> Any:
    """The parsed `nonatomic/rules/<name>.yaml`.

    Kept parsed in `__pycache__` beside the packs, as Python keeps bytecode: valid while
    the pack's modification time and size are those it was parsed at.  Importing the YAML
    parser and parsing the packs cost a one-file lint (a pre-commit run) a tenth of its time."""
    source = PACKS / f"{name}.yaml"
    stat = source.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    parsed = PACKS / "__pycache__" / f"{name}.{sys.implementation.cache_tag}.marshal"
    try:
        kept, data = marshal.loads(parsed.read_bytes())
        if kept == stamp:
            return data
    except (OSError, ValueError, EOFError, TypeError):
        pass  # none yet, or another Python's, or torn: parse the pack
    import yaml  # only when a pack changed or was never parsed here

    data = yaml.load(source.read_text("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    try:  # written whole and then renamed: parallel workers never read half a file
        parsed.parent.mkdir(exist_ok=True)
        partial = parsed.with_name(f"{parsed.name}.{os.getpid()}")
        partial.write_bytes(marshal.dumps((stamp, data)))
        os.replace(partial, parsed)
    except (OSError, ValueError):
        pass  # a read-only install parses its packs each time
    return data
