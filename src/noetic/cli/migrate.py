"""`noetic migrate --to postgresql://…`: copy this SQLite store into a PostgreSQL one."""

from __future__ import annotations

from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt
from noetic.cli.output import emit, esc, stdout


def migrate(
    to: Annotated[
        str,
        typer.Option("--to", help="The PostgreSQL store: postgresql://user@host:port/database."),
    ],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Copy every table of this SQLite store into a PostgreSQL store, then verify each table's
    row count and checksum. Running it again copies only what is new."""
    from noetic.operations.migrating import migrate_store

    with handled(json):
        report = migrate_store(store, to)
    result = {
        "target": report.target,
        "verified": report.verified,
        "copied": report.copied,
        "tables": [{**t.model_dump(), "verified": t.verified} for t in report.tables],
    }

    def render() -> None:
        out = stdout()
        out.print(f"copied {report.copied} rows into {esc(report.target)}", highlight=False)
        for t in report.tables:
            if t.source_rows:
                out.print(
                    f"  {t.table}: {t.source_rows} rows, {t.copied} new, checksum verified",
                    highlight=False,
                )

    emit(result, json, render)
