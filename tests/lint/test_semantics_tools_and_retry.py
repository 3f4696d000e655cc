"""The code semantics the rules share: the tool registry, retry-like names and retry scopes."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from nonatomic.config import ConfigError
from nonatomic.lint.config import load_settings
from nonatomic.rules.lint.semantics.names import named_like_retry
from nonatomic.rules.lint.semantics.retry import RetryProvider
from nonatomic.rules.lint.semantics.tool_config import validate_tools_table
from nonatomic.rules.lint.semantics.tools import ToolRegistry


def model_of(code: str):
    wrapper = MetadataWrapper(cst.parse_module(textwrap.dedent(code)))
    return wrapper.module, wrapper.resolve(RetryProvider)[wrapper.module]


def test_validate_tools_table():
    assert validate_tools_table({"write": ["charge_card"], "read": [], "idempotency_keys": ["txn"]}) == []
    assert validate_tools_table({"levels": {"refund": "irreversible"}, "types": {"x.Client": ["x.Client"]}}) == []
    errors = validate_tools_table({"write": "charge_card", "levels": {"refund": "huge"}, "writes": []})
    assert len(errors) == 3
    assert any("`write` must be a list" in e for e in errors)
    assert any("level must be one of" in e for e in errors)
    assert any("unknown key `writes`" in e for e in errors)


def test_bad_tools_table_is_a_configuration_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.nonatomic.tools]\nwrite = "refund"\n')
    with pytest.raises(ConfigError, match="`write` must be a list"):
        load_settings(start=tmp_path)


def test_name_levels():
    registry = ToolRegistry()
    assert registry.name_level("refund_payment") == ("irreversible", False)
    assert registry.name_level("createTicket") == ("high", False)
    assert registry.name_level("get_or_create_user") == ("high", False)
    assert registry.name_level("get_refund_status")[0] is None
    assert registry.name_level("create_task")[0] is None  # a factory, not a tool
    assert registry.name_level("gather_with_cancel")[0] is None
    assert registry.name_level("update")[0] == "low"
    assert ToolRegistry({"levels": {"create_ticket": "low"}}).name_level("create_ticket")[0] == "low"


def test_retry_like_names():
    assert named_like_retry("retry_with_backoff")
    assert named_like_retry("utils.call_with_retry")
    assert named_like_retry("retry_on_failure")
    for name in ("should_retry", "on_retry", "max_retries", "retry_delay", "retry_if_exception_type",
                 "websocket_pre_event_retries_disabled", "tenacity.retry_if_result"):
        assert not named_like_retry(name), name


def test_scopes_expose_their_configuration_for_other_rules():
    module, model = model_of('''
        import time
        import backoff
        from tenacity import retry, stop_after_attempt, wait_fixed

        @retry(stop=stop_after_attempt(3), wait=wait_fixed(2))
        def a(api):
            api.create_order()

        @backoff.on_exception(backoff.constant, TimeoutError, max_tries=4, jitter=None)
        def b(api):
            api.create_order()

        def c(api):
            while True:
                try:
                    return api.create_order()
                except (TimeoutError, ConnectionError):
                    time.sleep(1)
    ''')
    by_kind = {}
    for scope in model.scopes:
        by_kind.setdefault((scope.kind, scope.library), scope)
    tenacity = by_kind[("decorator", "tenacity")]
    assert {role: module.code_for_node(arg.value) for role, arg in tenacity.config.items()} == {
        "stop": "stop_after_attempt(3)", "wait": "wait_fixed(2)",
    }
    backoff_scope = by_kind[("decorator", "backoff")]
    assert set(backoff_scope.config) == {"wait", "predicate", "stop", "jitter"}
    loop = by_kind[("loop", None)]
    assert loop.bound is None  # `while True`: NA105's unbounded retry
    assert loop.caught == ("TimeoutError", "ConnectionError")
    assert [module.code_for_node(s) for s in loop.sleeps] == ["time.sleep(1)"]
    assert len(model.retried) == 3
    assert all(len(r.scopes) == 1 for r in model.retried)
