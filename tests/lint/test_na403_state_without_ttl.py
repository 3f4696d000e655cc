"""NA403's state-words option."""

from __future__ import annotations


def test_state_words_option_replaces_the_default(lint):
    code = "import redis\nr = redis.Redis()\nr.hset(f'ticket:{tid}', 'status', 'open')\nr.hset(f'task:{tid}', 'a', 1)\n"
    findings = lint(code, select=["NA403"], rule_options={"NA403": {"state-words": ["ticket"]}}).findings
    assert [(f.code, f.line) for f in findings] == [("NA403", 3)]
