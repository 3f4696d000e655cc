"""Print pip constraints that pin every run-time dependency to its declared floor.

`pip install --constraint` with this output installs the oldest versions
pyproject.toml admits (`libcst>=1.1` becomes `libcst==1.1`), markers kept, so the
suite proves the floors true.
"""

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project's own dependency on 3.10
    import tomli as tomllib

_FLOOR = re.compile(r"^\s*([A-Za-z0-9._-]+)\s*>=\s*([^,;\s]+)\s*(;.*)?$")


def main() -> int:
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text("utf-8"))
    for requirement in project["project"]["dependencies"]:
        match = _FLOOR.match(requirement)
        if match is None:
            print(f"floors: {requirement!r} has no single `>=` floor", file=sys.stderr)
            return 1
        name, version, marker = match.groups()
        print(f"{name}=={version}{marker or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
