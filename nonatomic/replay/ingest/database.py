"""Opening the DuckDB database that holds events, quarantine and the ingest ledger."""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager

import duckdb

from nonatomic.config import usable_cpus
from nonatomic.replay.ingest.ledger import LEDGER_DDL
from nonatomic.replay.ingest.schema import (EVENT_ROWS_DDL, EVENTS_DDL, FILES_DDL, QUARANTINE_DDL,
                                            SPANLESS_DOCUMENTS_DDL, TRACE_SPANS_DDL)

_DDL = (FILES_DDL, EVENT_ROWS_DDL, EVENTS_DDL, QUARANTINE_DDL, LEDGER_DDL, TRACE_SPANS_DDL, SPANLESS_DOCUMENTS_DDL)


class DatabaseError(Exception):
    """The database cannot be opened or a DuckDB setting is invalid (exit code 2)."""


IN_MEMORY = "replay"
"""The in-memory database's name (DuckDB's own `memory` does not compress)."""
# What a DuckDB database file holds at byte 8 (its header's magic).
_DUCKDB_MAGIC = b"DUCK"
# A name DuckDB would hand to an extension (`md:`, `sqlite:`, `postgres:`, `s3://`), but
# not a Windows drive (`C:`).
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")
# The tables and views of a replay database, and the columns each must have.
_OURS = {"log_files", "event_rows", "events", "quarantine", "ingested_files", "trace_spans",
         "spanless_documents"}


def connect(db: str | None = None, memory_limit: str | None = None, threads: int | None = None):
    """A connection with the replay tables; in memory unless `db` names a file, which
    must be a DuckDB file (or not exist yet) holding nothing but a replay database."""
    if db is not None:
        _check_database_file(db)
    config: dict[str, object] = {
        # Line numbers are row positions in converted tables: rows keep file order
        # unless a statement runs `unordered`.
        "preserve_insertion_order": True,
        # Never fetch or load an extension behind the user's back (a database name, a
        # file or a function could otherwise make DuckDB download one).
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
    }
    if memory_limit is not None:
        config["memory_limit"] = memory_limit
    if threads is not None:
        config["threads"] = min(threads, usable_cpus())
    if db is None:
        # DuckDB would spill an in-memory database into ./.tmp of whatever directory we run in.
        config["temp_directory"] = os.path.join(tempfile.gettempdir(), f"nonatomic-spill-{os.getpid()}")
    try:
        con = duckdb.connect(db or ":memory:", config=config)
    except duckdb.Error as exc:
        raise DatabaseError(f"{db or 'in-memory database'}: {exc}") from exc
    con.execute("SET enable_progress_bar = false")  # it writes to stdout, into the report
    if db is None:
        # An in-memory database compresses its tables as a file does when checkpointed (ingest does):
        # 1M events took 19 MB instead of 213 MB.
        con.execute(f"ATTACH ':memory:' AS {IN_MEMORY} (COMPRESS)")
        con.execute(f"USE {IN_MEMORY}")
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
    foreign = _foreign_tables(con)
    if foreign:
        con.close()
        raise DatabaseError(f"{db}: not a nonatomic replay database (it holds {', '.join(foreign[:5])}); "
                            "give --db a new file or one an earlier replay wrote")
    for ddl in _DDL:
        con.execute(ddl)
    return con


def _check_database_file(db: str) -> None:
    """Refuse a --db that is not a path, or names a file DuckDB did not write."""
    if _SCHEME.match(db) and not os.path.exists(db):
        raise DatabaseError(f"{db}: --db takes the path of a DuckDB file, not a URL or another database's name")
    if os.path.isdir(db):
        raise DatabaseError(f"{db}: is a directory")
    try:
        with open(db, "rb") as fh:
            head = fh.read(12)
    except FileNotFoundError:
        return  # DuckDB creates it
    except OSError as exc:
        raise DatabaseError(f"{db}: cannot open: {exc.strerror}") from exc
    if head and head[8:12] != _DUCKDB_MAGIC:
        kind = "a SQLite database" if head.startswith(b"SQLite for") else "not a DuckDB database"
        raise DatabaseError(f"{db}: {kind}; --db keeps the replay's own DuckDB file (a log goes in LOGS)")


def _foreign_tables(con) -> list[str]:
    """Tables and views of the database that a replay database does not have, or has with
    other columns."""
    names = [name for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database() "
        "AND NOT internal ORDER BY 1").fetchall()]
    foreign = [name for name in names if name not in _OURS]
    if set(names) & _OURS:
        reference = duckdb.connect(":memory:")
        try:
            for ddl in _DDL:
                reference.execute(ddl)
            for name in sorted(set(names) & _OURS):
                if _columns(con, name) != _columns(reference, name):
                    foreign.append(f"{name} (other columns)")
        finally:
            reference.close()
    return foreign


def _columns(con, name: str) -> list[tuple[str, str]]:
    return con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() "
                       "AND table_name = $name ORDER BY column_index", {"name": name}).fetchall()


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
    """One file's events, quarantine and ledger entry land together or not at all.  When
    the commit itself fails (a full disk), that error is the one raised: DuckDB has already
    ended the transaction, and the rollback's own complaint would hide it."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    try:
        con.execute("COMMIT")
    except duckdb.Error as exc:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass  # the failed commit ended the transaction
        raise DatabaseError(f"cannot write the database: {str(exc).splitlines()[0]}") from exc
