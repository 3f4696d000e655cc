"""The tenacity fix NA104 and NA105 share: the arguments each adds, and the imports they use."""

from __future__ import annotations

import textwrap

import libcst as cst

from nonatomic.lint.config import select_codes
from nonatomic.lint.runner import RulePlan, lint_source
from tests.lint.conftest import make_settings


def fixed(code: str, select: list[str], *, unsafe: bool = True, **options) -> str | None:
    """The source after `--fix` (`--unsafe-fixes` with `unsafe`), None when nothing changed."""
    settings = make_settings(enabled=select_codes(select, []), rule_options=options)
    result = lint_source("agent.py", code.encode(), RulePlan(settings), fix=True, unsafe_fixes=unsafe)
    assert not result.crashes, result.crashes
    return result.fixed.decode() if result.fixed is not None else None


MODULE = textwrap.dedent('''
    """Ticket tools."""
    from __future__ import annotations

    import logging
    from tenacity import (
        retry,  # retries are owned by the gateway team
    )

    log = logging.getLogger(__name__)


    @retry()
    def open_ticket(crm, payload):
        # Transient CRM errors only.
        return crm.tickets.create(payload)
''')


def test_both_rules_fix_a_bare_tenacity_retry_with_its_imports():
    after = fixed(MODULE, ["NA104", "NA105"])
    assert after == MODULE.replace(
        "    retry,  # retries are owned by the gateway team\n",
        "    wait_random_exponential, stop_after_attempt, retry,  # retries are owned by the gateway team\n",
    ).replace(
        "@retry()\n",
        "@retry(stop=stop_after_attempt(5), wait=wait_random_exponential(multiplier=1, max=30))\n",
    )
    cst.parse_module(after)
    assert fixed(after, ["NA104", "NA105"]) is None  # idempotent


def test_the_import_joins_the_existing_one_and_options_set_the_values():
    code = '"""Tools."""\nimport tenacity as t\nfrom tenacity import retry\n\n@retry\ndef send(api, m):\n    api.send_message(m)\n'
    assert fixed(code, ["NA105"], NA105={"fix-attempts": 3}) == (
        '"""Tools."""\nimport tenacity as t\nfrom tenacity import stop_after_attempt, retry\n\n'
        "@retry(stop=stop_after_attempt(3))\ndef send(api, m):\n    api.send_message(m)\n"
    )


def test_an_aliased_module_is_used_as_written_and_needs_no_import():
    code = "import tenacity as t\n\n@t.retry\ndef send(api, m):\n    api.send_message(m)\n"
    assert fixed(code, ["NA104", "NA105"]) == (
        "import tenacity as t\n\n"
        "@t.retry(stop=t.stop_after_attempt(5), wait=t.wait_random_exponential(multiplier=1, max=30))\n"
        "def send(api, m):\n    api.send_message(m)\n"
    )


def test_the_fix_is_unsafe_and_needs_opt_in():
    assert fixed(MODULE, ["NA104", "NA105"], unsafe=False) is None


def test_only_tenacity_decorators_are_fixed():
    loop = "from tenacity import Retrying\n\ndef f(api):\n    for a in Retrying():\n        with a:\n            api.send_message(1)\n"
    assert fixed(loop, ["NA104", "NA105"]) is None
