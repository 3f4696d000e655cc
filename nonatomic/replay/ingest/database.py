"""Opening the DuckDB database that holds events, quarantine and the ingest ledger."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager

import duckdb

from nonatomic.replay.ingest.ledger import LEDGER_DDL
from nonatomic.replay.ingest.schema import EVENT_ROWS_DDL, EVENTS_DDL, FILES_DDL, QUARANTINE_DDL


class DatabaseError(Exception):
    """The database cannot be opened or a DuckDB setting is invalid (exit code 2)."""


def connect(db: str | None = None, memory_limit: str | None = None, threads: int | None = None):
    """A connection with the replay tables; in memory unless `db` names a file."""
    config: dict[str, object] = {
        # Line numbers are row positions in converted tables: rows keep file order
        # unless a statement runs `unordered`.
        "preserve_insertion_order": True,
    }
    if memory_limit is not None:
        config["memory_limit"] = memory_limit
    if threads is not None:
        config["threads"] = threads
    if db is None:
        # DuckDB would spill an in-memory database into ./.tmp of whatever directory we run in.
        config["temp_directory"] = os.path.join(tempfile.gettempdir(), f"nonatomic-spill-{os.getpid()}")
    try:
        con = duckdb.connect(db or ":memory:", config=config)
    except duckdb.Error as exc:
        raise DatabaseError(f"{db or 'in-memory database'}: {exc}") from exc
    con.execute("SET enable_progress_bar = false")  # it writes to stdout, into the report
    try:
        con.execute("SET TimeZone = 'UTC'")
    except duckdb.Error:
        pass  # without the ICU extension DuckDB keeps every TIMESTAMPTZ in UTC anyway
    older = con.execute("SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() "
                        "AND schema_name = 'main' AND table_name = 'events'").fetchone()
    if older:
        con.close()
        raise DatabaseError(f"{db}: written by an older nonatomic (events are now stored by file number); "
                            "replay the logs into a new database")
    for ddl in (FILES_DDL, EVENT_ROWS_DDL, EVENTS_DDL, QUARANTINE_DDL, LEDGER_DDL):
        con.execute(ddl)
    return con


@contextmanager
def unordered(con):
    """Statements inside may write rows in any order, which lets DuckDB skip re-ordering them."""
    kept = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0]
    con.execute("SET preserve_insertion_order = false")
    try:
        yield
    finally:
        con.execute(f"SET preserve_insertion_order = {'true' if kept else 'false'}")


@contextmanager
def transaction(con):
    """One file's events, quarantine and ledger entry land together or not at all."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
