"""NA203 on code that keeps what a timeout leaves running."""

from __future__ import annotations

import textwrap


def test_shielded_call_whose_timeout_records_the_outcome_is_clean(lint):
    code = textwrap.dedent(
        '''
        import asyncio

        async def charge(order):
            task = asyncio.create_task(payments.charge(order))
            try:
                return await asyncio.wait_for(asyncio.shield(task), timeout=15)
            except asyncio.TimeoutError:
                outcomes[order.id] = "unknown"
                raise
        '''
    )
    assert lint(code, select=["NA203"]).findings == []
