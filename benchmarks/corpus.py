"""The real-code corpus the lint benchmark and real-code checks use: pinned
agent frameworks and the libraries they call, as published on the registry."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PINNED = [
    "langchain-core==1.8.4", "langgraph==1.2.24", "openai-agents==0.24.0", "crewai==1.15.30",
    "smolagents==1.26.0", "llama-index-core==0.14.25", "langchain==1.5.2",
    "langchain-community==0.4.2", "langchain-openai==1.7.4", "langchain-anthropic==1.7.10",
    "openai==3.57.0", "anthropic==2.14.0", "autogen-agentchat==0.7.5", "autogen-core==0.7.5",
    "pydantic-ai-slim==2.68.0", "dspy==3.4.1", "haystack-ai==3.4.1", "tenacity==9.2.1",
    "backoff==2.2.1", "stamina==26.1.0", "httpx==0.28.1", "requests==2.34.2", "redis==8.1.0",
]


# The Python a wheel is asked for when none is published for the running one.
NEWEST_PYTHON = "3.13"


def corpus_dir() -> Path:
    """Downloaded once into the temp dir (or NONATOMIC_BENCH_CORPUS) and reused."""
    default = Path(tempfile.gettempdir()) / "nonatomic-bench" / "corpus"
    return Path(os.environ.get("NONATOMIC_BENCH_CORPUS", default))


def ensure_corpus(pins: list[str] = PINNED, root: Path | None = None) -> Path:
    """Download the pinned wheels (no dependencies) once and extract one folder per package."""
    root = root or corpus_dir()
    done = root / ".complete"
    if done.exists():
        return root
    wheels = root.parent / f"{root.name}-wheels"
    wheels.mkdir(parents=True, exist_ok=True)

    def download(*what: str, binary: str = "--only-binary", check: bool = False) -> bool:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", binary, ":all:",
                   "--dest", str(wheels), *what]
        # quiet where a failure is retried below; the last try fails loudly
        return subprocess.run(command, check=check, stderr=None if check else subprocess.DEVNULL).returncode == 0

    if not download(*pins):
        # Only the source is read, never run: a wheel published for a newer Python than this
        # one (`Requires-Python >=3.12`, a cp312 wheel) serves as well, and so does the source
        # archive of a release whose wheels were taken down.
        for pin in pins:
            if not download(pin) and not download("--python-version", NEWEST_PYTHON, pin):
                download(pin, binary="--no-binary", check=True)
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root / wheel.name.split("-", 1)[0])
    for archive in sorted(wheels.glob("*.tar.gz")):
        with tarfile.open(archive) as sources:
            sources.extractall(root, filter="data")  # each unpacks into its own `name-version/`
    done.touch()
    return root


def python_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))
