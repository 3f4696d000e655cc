"""Fixtures every test directory shares."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest


@pytest.fixture
def on_a_terminal():
    """Run `nonatomic ARGS` with its standard output on a pseudo-terminal (where
    `--color auto` colours) and return what it wrote there."""

    def run(args: list[str], env: dict | None = None) -> bytes:
        leader, follower = pty.openpty()
        try:
            subprocess.run([sys.executable, "-m", "nonatomic", *args], stdout=follower, stderr=subprocess.DEVNULL,
                           env=env, timeout=120)
            os.close(follower)
            chunks = []
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(leader)

    return run


@pytest.fixture
def without_no_color():
    """The environment with NO_COLOR unset (CI systems may set it)."""
    return {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
