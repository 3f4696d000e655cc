"""Tool calls seen by a tracing hook, written as canonical guard-log events (start and end of each call).

A hook sees a call once it has ended, with its own start and end times, so
the events carry those times; the task is the conversation, else the trace.
Steps and attempts follow the trace reader's rule: calls of one tool with the
same arguments in a task are attempts of one step.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from nonatomic.guard import GuardLog
from nonatomic.replay.ingest.conventions import ToolCall
from nonatomic.replay.ingest.otlp import default_target

TASKS_KEPT = 10_000
"""Tasks whose numbering is remembered; the oldest is forgotten past this (a long-lived process)."""


class ToolCallLog:
    def __init__(self, sink) -> None:
        self._at = 0.0
        self.guard = GuardLog(sink, clock=lambda: self._at)
        self._lock = threading.Lock()
        self._tasks: OrderedDict[str, tuple] = OrderedDict()

    def record(self, task_id: str, call: ToolCall, start_s: float, end_s: float, **extra) -> None:
        """One ended tool call of `task_id`, started and ended at these epoch seconds."""
        key = (call.tool, json.dumps(call.arguments, sort_keys=True, default=str))
        with self._lock:
            if task_id not in self._tasks:
                self._tasks[task_id] = (self.guard.task(task_id), {})
                if len(self._tasks) > TASKS_KEPT:
                    self._tasks.popitem(last=False)
            task, steps = self._tasks[task_id]
            self._tasks.move_to_end(task_id)
            step, attempts = steps.get(key, (len(steps) + 1, 0))
            steps[key] = (step, attempts + 1)
            common = {"step": step, "attempt": attempts + 1, "tool": call.tool,
                      "target": default_target(call.arguments), "tool_call_id": call.call_id, **extra}
            self._at = start_s
            self.guard.emit(task, "call", {**common, "phase": "start", "status": "started"})
            self._at = end_s
            self.guard.emit(task, "call", {**common, "phase": "end", "status": call.status, "code": call.code,
                                           "error": call.error})

    def close(self) -> None:
        self.guard.close()
