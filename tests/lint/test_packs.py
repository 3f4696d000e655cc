"""The rule packs are parsed once and kept parsed beside them, as Python keeps bytecode."""

import os
import sys

import pytest

from nonatomic.rules.lint.semantics import packs


@pytest.fixture
def pack_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(packs, "PACKS", tmp_path)
    (tmp_path / "demo.yaml").write_text("verbs: [refund, charge]\n")
    return tmp_path


def load(name):
    return packs.load_pack.__wrapped__(name)  # past the per-process memo


def test_a_pack_is_parsed_then_read_back_without_the_yaml_parser(pack_dir, monkeypatch):
    assert load("demo") == {"verbs": ["refund", "charge"]}
    kept = pack_dir / "__pycache__" / f"demo.{sys.implementation.cache_tag}.marshal"
    assert kept.exists()
    monkeypatch.setitem(sys.modules, "yaml", None)  # an import of yaml now fails
    assert load("demo") == {"verbs": ["refund", "charge"]}


def test_an_edited_pack_is_parsed_again(pack_dir):
    load("demo")
    source = pack_dir / "demo.yaml"
    source.write_text("verbs: [refund, charge, transfer]\n")
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert load("demo") == {"verbs": ["refund", "charge", "transfer"]}


def test_a_torn_copy_is_ignored(pack_dir):
    load("demo")
    (pack_dir / "__pycache__" / f"demo.{sys.implementation.cache_tag}.marshal").write_bytes(b"\x00garbage")
    assert load("demo") == {"verbs": ["refund", "charge"]}


def test_a_read_only_install_still_loads(pack_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(type(pack_dir), "mkdir", refuse)
    assert load("demo") == {"verbs": ["refund", "charge"]}
