"""The SDK's server side without its client: the ``mcp`` package's own ``__init__`` runs only
when one of its names is read, and then once; a client in the same process works as usual."""

import json
import subprocess
import sys
import threading

import pytest

from noetic.mcp.sdk import defer_package_init


def run(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.subprocess
def test_the_server_loads_without_the_sdks_client_or_rich(tmp_path):
    found = run(
        "import json, sys\n"
        "from pathlib import Path\n"
        "from noetic.mcp.server import build_server\n"
        f"build_server(Path({str(tmp_path / 'store')!r}))\n"
        "print(json.dumps({m: m in sys.modules for m in ('mcp.client', 'rich')}))\n"
    )
    assert found == {"mcp.client": False, "rich": False}


@pytest.mark.subprocess
def test_a_client_in_the_same_process_finds_every_name_of_the_package(tmp_path):
    found = run(
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from noetic.mcp.server import build_server\n"
        f"server = build_server(Path({str(tmp_path / 'store')!r}))\n"
        "import mcp\n"
        "from mcp import Client, StdioServerParameters\n"
        "from mcp.client.client import Client as Real\n"
        "names = {}\n"
        "exec('from mcp import *', names)\n"
        "async def listed():\n"
        "    async with Client(server) as client:\n"
        "        return len((await client.list_tools()).tools)\n"
        "print(json.dumps({'same': Client is Real is mcp.Client, 'all': sorted(mcp.__all__),\n"
        "    'star': all(n in names for n in mcp.__all__), 'tools': asyncio.run(listed()),\n"
        "    'types': mcp.types.Tool.__name__, 'stdio': StdioServerParameters.__name__}))\n"
    )
    import mcp

    assert found["same"] and found["star"] and found["all"] == sorted(mcp.__all__)
    assert found["tools"] > 20 and found["types"] == "Tool"
    assert found["stdio"] == "StdioServerParameters"


@pytest.mark.subprocess
def test_with_the_package_already_imported_nothing_changes():
    found = run(
        "import json, sys\n"
        "import mcp\n"
        "from noetic.mcp.sdk import defer_package_init\n"
        "first = sys.modules['mcp']\n"
        "print(json.dumps({'deferred': defer_package_init(), 'same': sys.modules['mcp'] is first,"
        " 'client': 'mcp.client' in sys.modules}))\n"
    )
    assert found == {"deferred": False, "same": True, "client": True}


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package whose ``__init__`` counts its runs and imports a submodule, on sys.path."""
    root = tmp_path / "deferpkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text(
        "import builtins\n"
        "builtins.DEFERPKG_RUNS = getattr(builtins, 'DEFERPKG_RUNS', 0) + 1\n"
        "from .sub.leaf import VALUE as VALUE\n"
        "GREETING = 'hello'\n"
        "__all__ = ['GREETING', 'VALUE']\n"
    )
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "leaf.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "deferpkg"
    import builtins

    for name in [m for m in sys.modules if m == "deferpkg" or m.startswith("deferpkg.")]:
        del sys.modules[name]
    if hasattr(builtins, "DEFERPKG_RUNS"):
        del builtins.DEFERPKG_RUNS


def runs() -> int:
    import builtins

    return getattr(builtins, "DEFERPKG_RUNS", 0)


def test_a_deferred_package_runs_its_init_once_on_the_first_name_read(package):
    assert defer_package_init(package)
    assert not defer_package_init(package)  # already registered
    from deferpkg.sub.leaf import VALUE  # a submodule: the package's __init__ does not run

    assert VALUE == 42 and runs() == 0
    import deferpkg

    assert runs() == 0
    assert deferpkg.GREETING == "hello" and runs() == 1
    assert deferpkg.VALUE == 42 and deferpkg.__all__ == ["GREETING", "VALUE"] and runs() == 1
    with pytest.raises(AttributeError):
        _ = deferpkg.missing
    assert runs() == 1


def test_threads_reading_names_at_once_run_the_init_once(package):
    defer_package_init(package)
    import deferpkg

    seen = []
    barrier = threading.Barrier(8)

    def read():
        barrier.wait()
        seen.append(deferpkg.GREETING)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == ["hello"] * 8 and runs() == 1


def test_what_is_not_a_package_is_left_alone(tmp_path, monkeypatch):
    (tmp_path / "plainmodule.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not defer_package_init("json")  # imported already
    assert not defer_package_init("plainmodule")  # a module, not a package
    assert not defer_package_init("no_such_package_anywhere")
    assert not defer_package_init("no_such_package_anywhere.either")
    assert "plainmodule" not in sys.modules
