from __future__ import annotations

from nonatomic.rules.lint.base import Invalid, LintRule


class SyntaxError_(LintRule):
    """
    ## What it does
    Reports a file that does not parse, at the line where parsing failed. The
    engine raises it; the file is skipped by every other rule and every other
    file is still linted. In a test tree (a `tests/`, `fixtures/` or
    `testdata/` folder, a `test_*.py` file) it is `info`: there a file that
    does not parse is nearly always a fixture broken on purpose, and a test
    module broken by mistake fails the test run that collects it.

    ## Why is this bad?
    A file the linter cannot read is a file nobody checked: a half-merged
    conflict in a payment tool would otherwise pass CI silently. Python 2 files,
    stray merge markers and truncated generated files all end up here.

    ## Example
    ```python
    def refund(order_id)
        return gateway.refund(order_id)
    ```

    ## Use instead
    ```python
    def refund(order_id):
        return gateway.refund(order_id)
    ```
    """

    code = "NA000"
    VALID = [
        """
        def refund(order_id):
            return order_id
        """,
    ]
    INVALID = [
        Invalid("""
            def refund(order_id)
                return order_id
            """, line=1),
        Invalid("""
            x = 1
            print 'hello'
            """, line=2),
        Invalid("""
            <<<<<<< HEAD
            x = 1
            =======
            x = 2
            >>>>>>> branch
            """, line=1),
    ]
