"""The replay detector catalogue: one module per detector, found by code in DETECTORS.

Each module holds one detector's documentation, SQL and fixtures; the SQL
stages they share are in `views.py`.
"""

from nonatomic.rules.replay import (
    nr101_retry_after_rollback,
    nr102_rollback_retry_overlap,
    nr201_lock_leak,
    nr202_foreign_lock_release,
    nr203_lock_overlap,
    nr301_duplicate_effect,
    nr302_retry_after_non_retryable,
    nr303_retry_without_verify,
    nr304_retry_storm,
    nr401_zombie_write,
    nr402_unresolved_unknown,
    nr403_attempt_disorder,
)
from nonatomic.rules.replay.base import Detector

DETECTORS: dict[str, Detector] = {
    module.DETECTOR.code: module.DETECTOR
    for module in (
        nr101_retry_after_rollback,
        nr102_rollback_retry_overlap,
        nr201_lock_leak,
        nr202_foreign_lock_release,
        nr203_lock_overlap,
        nr301_duplicate_effect,
        nr302_retry_after_non_retryable,
        nr303_retry_without_verify,
        nr304_retry_storm,
        nr401_zombie_write,
        nr402_unresolved_unknown,
        nr403_attempt_disorder,
    )
}
