"""The replay detector catalogue: one module per detector (`nr101_retry_after_rollback.py`),
found by code in DETECTORS.

Each module holds one detector's documentation, SQL and fixtures as `DETECTOR`;
the SQL stages they share are in `views.py`.
"""

import importlib
import pkgutil
import re

from nonatomic.rules.replay.base import Detector

_MODULE = re.compile(r"^nr\d{3}_\w+$")

DETECTORS: dict[str, Detector] = {
    detector.code: detector
    for detector in sorted(
        (
            importlib.import_module(f"{__name__}.{info.name}").DETECTOR
            for info in pkgutil.iter_modules(__path__)
            if _MODULE.match(info.name)
        ),
        key=lambda detector: detector.code,
    )
}
