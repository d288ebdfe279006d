"""`noetic migrate --to postgresql://…` (or another store's folder): copy this SQLite store into
it; `--merge` brings it in beside the rows the target already holds."""

from __future__ import annotations

from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt
from noetic.cli.output import emit, esc, stdout


def migrate(
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="The store to copy into: postgresql://user@host:port/database, or the folder "
            "of another SQLite store.",
        ),
    ],
    merge: Annotated[
        bool,
        typer.Option(
            "--merge",
            help="The target holds another store's rows (a team's shared store): bring this "
            "one's in beside them, each row whose id is taken there under a new one.",
        ),
    ] = False,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Copy every table of this SQLite store into another store in one transaction, then verify
    each table's rows. Running it again copies only what is new. A target that already holds
    other rows is refused, with nothing written, unless --merge."""
    from noetic.operations.maintenance import migrate_store

    with handled(json):
        report = migrate_store(store, to, merge=merge)
    result = {
        "target": report.target,
        "verified": report.verified,
        "merged": report.merged,
        "copied": report.copied,
        "tables": [t.model_dump() for t in report.tables],
    }

    def render() -> None:
        out = stdout()
        how = "merged" if report.merged else "copied"
        out.print(f"{how} {report.copied} rows into {esc(report.target)}")
        for t in report.tables:
            if t.source_rows:
                extra = f", {t.rekeyed} under new ids" if t.rekeyed else ""
                extra += f", {t.kept} kept as the target had them" if t.kept else ""
                out.print(f"  {t.table}: {t.source_rows} rows, {t.copied} new{extra}, verified")

    emit(result, json, render)
