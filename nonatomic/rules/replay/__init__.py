"""The replay detector catalogue: one module per detector, found by code in DETECTORS.

Each module holds one detector's documentation, SQL and fixtures; the SQL
stages they share are in `views.py`.
"""

from nonatomic.rules.replay import (
    nr101_retry_after_rollback,
)
from nonatomic.rules.replay.base import Detector

DETECTORS: dict[str, Detector] = {
    module.DETECTOR.code: module.DETECTOR
    for module in (
        nr101_retry_after_rollback,
    )
}
