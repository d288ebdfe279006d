"""The dashboard: server-rendered pages over the read operations, beside ``/mcp``.

:mod:`.app` routes each URL to one operation and one template; :mod:`.charts` draws the SVG;
:mod:`.live` streams the store's changes to the page's one script; :mod:`.auth` is the login
form off loopback; :mod:`.mount` puts it all on the MCP server's Starlette app.
"""
