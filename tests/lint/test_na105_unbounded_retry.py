"""NA105 on whole modules."""

from __future__ import annotations

import textwrap


def lines(lint, code: str, select: str = "NA105") -> list[int]:
    return [f.line for f in lint(code, select=[select]).findings]


def line_of(code: str, marker: str) -> int:
    return next(i for i, text in enumerate(code.splitlines(), 1) if marker in text)


WORKER = textwrap.dedent('''
    """Background worker of the booking agent."""
    import time

    from tenacity import retry


    @retry  # case: bare-retry
    def sync_calendar(calendar_api, booking):
        return calendar_api.events.create(booking.as_event(), idempotency_key=booking.key)


    def deploy(release_api, build):
        done = False
        while not done:  # case: success-flag
            try:
                release_api.deploy_release(build)
                done = True
            except ConnectionError:
                time.sleep(10)


    def book_slot(booking_api, slot, deadline):
        while True:
            try:
                return booking_api.book_room(slot)
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)


    def poll_inbox(mail_api, since):
        while True:
            messages = mail_api.list_messages(since=since)
            if messages:
                return messages
            time.sleep(30)


    def transaction(redis_client, fn, key):
        with redis_client.pipeline() as pipe:
            while True:  # case: optimistic
                try:
                    pipe.watch(key)
                    fn(pipe)
                    return pipe.execute()
                except WatchError:
                    continue
''')


def test_unbounded_retries_are_flagged_and_bounded_ones_and_polls_are_not(lint):
    assert lines(lint, WORKER) == [
        line_of(WORKER, "case: bare-retry"),
        line_of(WORKER, "case: success-flag"),
        line_of(WORKER, "case: optimistic"),
    ]


def test_a_counter_in_the_handler_bounds_a_while_true_loop(lint):
    retry_forever = "            except WatchError:\n                continue\n"
    assert retry_forever in WORKER
    bounded = WORKER.replace(
        retry_forever,
        "            except WatchError:\n                conflicts += 1\n                if conflicts > 10:\n"
        "                    raise\n",
    )
    assert line_of(WORKER, "case: optimistic") not in lines(lint, bounded)


# -- the fix ----------------------------------------------------------------------------
