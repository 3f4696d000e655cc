"""NA201 with the constructors a project declares."""

from __future__ import annotations


def test_a_constructor_the_user_declares_makes_sessions_it_returns(lint):
    source = "from mylib import make_session\n\ndef fetch(url):\n    s = make_session()\n    return s.get(url)\n"
    assert lint(source, select=["NA201"]).findings == []
    types = {"types": {"requests.Session": ["mylib.make_session"]}}
    [finding] = lint(source, select=["NA201"], tools=types).findings
    assert (finding.line, finding.message.split(":")[0]) == (5, "`Session.get(...)` has no timeout")
