"""`noetic token create|list|revoke`: the per-person tokens ``noetic serve`` accepts."""

from __future__ import annotations

from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt, group
from noetic.cli.output import emit, esc, stderr, stdout
from noetic.cli.render import table
from noetic.store import open_store

app = group("Access tokens for `noetic serve`: create, list, revoke (stored hashed).")

NameArg = Annotated[str, typer.Argument(help="The token's name, e.g. the person's.")]


@app.command()
def create(
    name: NameArg,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="It may read (dashboard, read tools), not write.")
    ] = False,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Make a token and print it, this once: only its hash is kept."""
    from noetic.operations.access_tokens import create_token

    with handled(json):
        made = create_token(open_store(store, create=True), name, read_only=read_only)

    def render() -> None:
        kind = "read-only token" if made["read_only"] else "token"
        stderr().print(f"{kind} {esc(name)} made; it is shown this once, keep it now:")
        stdout().print(made["token"], markup=False)
        stderr().print("[dim]clients send it as 'Authorization: Bearer TOKEN'[/]")

    emit(made, json, render)


@app.command("list")
def list_(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Every token: name, read-only or not, when made and revoked (never the token)."""
    from noetic.operations.access_tokens import list_tokens

    with handled(json):
        tokens = list_tokens(open_store(store))

    def render() -> None:
        if not tokens:
            stdout().print("no tokens; make one with: noetic token create NAME", markup=False)
            return
        shown = table("name", "access", "created", "revoked")
        for t in tokens:
            shown.add_row(
                esc(t["name"]),
                "read-only" if t["read_only"] else "read-write",
                t["created_at"][:19],
                (t["revoked_at"] or "")[:19],
            )
        stdout().print(shown)

    emit(tokens, json, render)


@app.command()
def revoke(name: NameArg, store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Revoke a token: a running server refuses it from its next request on."""
    from noetic.operations.access_tokens import revoke_token

    with handled(json):
        revoked = revoke_token(open_store(store), name)
    emit(revoked, json, lambda: stdout().print(f"revoked {esc(name)}"))
