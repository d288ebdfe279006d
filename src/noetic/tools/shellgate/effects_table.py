"""The effects table: what each program the gate knows does, as one row of plain data.

The gate allows what it can show is safe and refuses the rest: a program is judged by its row
(docs/agent.md, "Fail closed: the effects table", describes each field with examples), and one
that has no row here and that the policy does not name either (``writers``, ``judged_alone``,
``interpreters``… in ``policy.yaml``) is *unknown*: run without the sandbox it is refused
(``unknown-program``), naming the program.

Adding a program is one row: ``"name": Program(...)``, or ``READS`` for a program whose operands
are only read. The table is plain literals — nothing is parsed or validated when it loads.
"""

from __future__ import annotations

from noetic.named import NamedTuple


class Program(NamedTuple):
    """What one program (or one subcommand of it) does with its arguments."""

    writes: str = "none"
    """Which operands are paths it writes: all, last, second (``uniq IN OUT``), after-first or
    none."""
    write_options: tuple[str, ...] = ()
    """Options whose value is a path it writes (``--output=F``, ``-o F``)."""
    write_when: tuple[str, ...] = ()
    """It writes only with one of these options (``tar -c``); empty: always."""
    write_unless: tuple[str, ...] = ()
    """It writes nothing with one of these options (``gzip -c``)."""
    shell_options: tuple[str, ...] = ()
    """Options whose value it runs as shell code: judged as commands."""
    code_options: tuple[str, ...] = ()
    """Options whose value it runs as code in its own language: refused without the sandbox."""
    file_options: tuple[str, ...] = ()
    """Options naming a file of code it runs: it must be the workspace's own, not written here."""
    escapes: tuple[str, ...] = ()
    """Regular expressions, searched in each operand, for what runs a program or writes a file."""
    implicit_files: tuple[str, ...] = ()
    """Files of its folder it runs as code unasked (``Makefile``, ``**/conftest.py``)."""
    stdin_code: bool = False
    """It runs the commands it reads on its standard input (``ed``, ``sqlite3``)."""
    assignments: tuple[str, ...] | None = None
    """The safe names of the ``NAME=value`` settings it takes (``make V=1``); None: none."""
    mounts: bool = False
    """It takes bind mounts (``-v SRC:DST``), whose source a container may write."""
    serves: tuple[str, ...] | None = None
    """It serves a folder to the network: the options naming it (default: where it runs)."""
    follows_links: tuple[str, ...] = ()
    """Options that make it follow links while it writes (``find -L … -delete``)."""
    exec_options: tuple[str, ...] = ()
    """Options after which the rest is a command it runs on each file it finds (``fd -x CMD``)."""
    runs_operands: bool = False
    """Its operands are a command it runs (``chrt 10 CMD``, ``npx TOOL``), judged as one."""
    network: bool = False
    """It sends what it reads to another host (a database, GitHub), as ``network_clients``."""
    subcommands: dict[str, Program] = {}  # noqa: RUF012 (never changed)
    """A row per subcommand (the first operand); with ``closed`` an unlisted one is unknown."""
    closed: bool = False
    note: str = ""


READS = Program()
"""A program whose operands are read, never written or run."""
WRITTEN = {
    "all": slice(None),
    "last": slice(-1, None),
    "second": slice(1, 2),
    "after-first": slice(1, None),
    "none": slice(0),
}
"""The operands a row's ``writes`` (or a policy writer's ``paths``) says are written."""

_GIT_READS = (
    "status", "blame", "branch", "tag", "remote", "fetch", "pull", "push", "checkout",
    "switch", "restore", "reset", "add", "rm", "mv", "commit", "merge", "rebase", "cherry-pick",
    "revert", "stash", "describe", "shortlog", "reflog", "ls-files", "ls-tree", "ls-remote",
    "rev-parse", "rev-list", "cat-file", "show-ref", "for-each-ref", "name-rev", "grep",
    "clean", "submodule", "bisect", "config", "notes", "gc", "fsck", "prune", "count-objects",
    "verify-commit", "verify-tag", "cherry", "merge-base", "symbolic-ref", "update-ref",
    "update-index", "write-tree", "read-tree", "commit-tree", "hash-object", "mktree", "apply",
    "am", "sparse-checkout", "maintenance", "lfs", "help", "version", "var", "check-ignore",
    "check-attr", "mailmap", "difftool", "mergetool", "filter-branch", "send-email", "repack",
    "pack-refs", "rerere", "annotate", "request-pull", "citool", "gui", "gitk", "instaweb",
)  # fmt: skip
_NODE_PROJECT = (
    "package.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "**/*.js",
    "**/*.mjs",
    "**/*.cjs",
    "**/*.ts",
)
_PYTEST_PROJECT = (
    "**/conftest.py",
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "**/test_*.py",
    "**/*_test.py",
)
_CONFIG_READS = Program(
    subcommands=dict.fromkeys(("get", "list", "ls", "debug", "show"), READS),
    closed=True,
    note="`config set` writes the user's configuration, read by every later run",
)
_GIT_OUTPUT = Program(write_options=("--output",))

_COMPRESSORS = Program(
    writes="all",
    write_unless=("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"),
    note="replaces each file with its (de)compressed copy beside it",
)
_SQL_ESCAPES = (
    r"^\s*\.(?!(tables|schema|headers|mode|dump|indexes|indices|databases|help|show|width|"
    r"nullvalue|separator|timer|changes|eqp|stats|quit|exit|fullschema|dbinfo|lint)\b)",
    r"(?i)\b(attach|load_extension|writefile|readfile|edit|fts3_tokenizer)\b",
    r"(?i)\bvacuum\s+into\b",
)
_PSQL_ESCAPES = (
    r"\\(?!(d[a-zA-Z+]*|l\+?|x|conninfo|timing|dt\+?|dn\+?|du\+?|encoding|q)(\s|$))",
    r"(?i)\b(program|lo_export|lo_import|pg_read_file|pg_read_binary_file|pg_ls_dir)\b",
    r"(?i)\bcopy\b[^;]*\bto\s+'",
)
_MYSQL_ESCAPES = (
    r"(?i)(^|\s|;)(\\!|system|\\\.|source|tee|\\T|pager|\\P)(\s|$)",
    r"(?i)\binto\s+(out|dump)file\b",
    r"(?i)\bload_file\b",
)

# cmake -E: the commands that write their path operands, and those that run a program
_CMAKE_E = {
    **dict.fromkeys(
        ("rm", "remove", "remove_directory", "make_directory", "touch", "touch_nocreate",
         "create_symlink", "create_hardlink", "copy", "copy_directory", "copy_if_different",
         "copy_directory_if_different", "rename", "tar", "chdir", "env", "time"),
        Program(writes="all"),
    ),
    **dict.fromkeys(
        ("echo", "echo_append", "capabilities", "cat", "compare_files", "environment",
         "md5sum", "sha1sum", "sha256sum", "sha512sum", "sleep", "true", "false"),
        READS,
    ),
}  # fmt: skip

_DOCKER = Program(
    mounts=True,
    subcommands={
        **dict.fromkeys(
            (
                "ps",
                "images",
                "logs",
                "inspect",
                "version",
                "info",
                "stats",
                "top",
                "port",
                "history",
                "search",
                "pull",
                "build",
                "compose",
                "stop",
                "start",
                "restart",
                "kill",
                "rm",
                "rmi",
                "tag",
                "push",
                "login",
                "logout",
                "network",
                "volume",
                "image",
                "container",
                "system",
                "buildx",
                "diff",
                "wait",
                "pause",
                "unpause",
                "exec",
                "attach",
                "events",
                "context",
            ),
            READS,
        ),
        "run": Program(mounts=True),
        "create": Program(mounts=True),
        "cp": Program(writes="last"),
    },
    closed=True,
    note="a container runs where it is; a bind mount lets it write its source",
)

# fmt: off
PROGRAMS: dict[str, Program] = {
    # reading, listing, printing: operands are only read
    **dict.fromkeys(
        ("pwd", "free", "top", "htop", "printenv", "uptime", "nproc", "lscpu", "lsblk",
         "ss", "netstat", "groups", "tty", "locale", "seq", "yes", "expr", "bc", "factor",
         "numfmt", "rev", "tsort", "pr", "expand", "unexpand", "look", "sha224sum",
         "sha384sum", "b2sum", "sum", "md5", "shasum", "zcat", "zless", "bzcat", "xzcat",
         "zgrep", "lsattr", "getfacl", "namei", "pstree", "vmstat", "iostat", "clear", "reset",
         "tput", "stty", "logname", "users", "who", "w", "last", "printf", "sync", "pyright",
         "twine", "hatch", "flit", "poetry", "pipenv", "pdm", "conda", "mamba", "stylelint",
         "shellcheck", "hadolint", "yamllint", "markdownlint", "cloc", "tokei", "scc",
         "crontab"),
        READS,
    ),
    # programs that write a file named by an option or operand
    "shuf": Program(write_options=("-o", "--output")),
    "iconv": Program(write_options=("-o", "--output")),
    "dos2unix": Program(writes="all"), "unix2dos": Program(writes="all"),
    "mktemp": Program(writes="all", write_options=("-p", "--tmpdir")),
    "gofmt": Program(writes="all", write_when=("-w",)),
    "shfmt": Program(writes="all", write_when=("-w", "--write")),
    "codespell": Program(writes="all", write_when=("-w", "--write-changes")),
    "prettier": Program(writes="all", write_when=("-w", "--write")),
    "ctags": Program(write_options=("-f", "-o")),
    "pip-compile": Program(write_options=("-o", "--output-file")),
    "pre-commit": Program(
        implicit_files=(".pre-commit-config.yaml",),
        subcommands=dict.fromkeys(("run", "--version", "validate-config", "sample-config", ""),
                                  READS),
        closed=True,
        note="pre-commit install plants a git hook",
    ),
    "coverage": Program(
        subcommands={
            **dict.fromkeys(("report", "html", "xml", "json", "lcov", "combine", "erase",
                             "debug", "annotate", ""), READS),
            "run": Program(runs_operands=True),
        },
        closed=True,
    ),
    **dict.fromkeys(("jest", "vitest", "mocha"), Program(implicit_files=_NODE_PROJECT)),
    "webpack": Program(implicit_files=_NODE_PROJECT, write_options=("-o", "--output-path")),
    "vite": Program(implicit_files=_NODE_PROJECT, write_options=("--outDir",)),
    "esbuild": Program(write_options=("--outfile", "--outdir")),
    "rollup": Program(implicit_files=_NODE_PROJECT, write_options=("-o", "--file", "-d", "--dir")),
    "swc": Program(write_options=("-o", "--out-file", "-d", "--out-dir")),
    "biome": Program(writes="all", write_when=("--write", "--apply")),
    "journalctl": Program(
        escapes=(r"^--(vacuum|rotate|flush|relinquish|setup-keys|update-catalog)",),
        note="--vacuum-* and --rotate remove the system's logs",
    ),
    # the shell's own builtins (those that run code are the policy's evaluators and wrappers)
    **dict.fromkeys(
        ("set", "shopt", "exit", "return", "break", "continue", "let", "local", "times", "caller",
         "disown", "suspend", "logout", "compgen", "complete", "compopt", "bind", "[[", "echo",
         "test", "["),
        READS,
    ),
    # writers the policy's `writers` does not hold
    "uniq": Program(writes="second", note="uniq IN OUT writes OUT"),
    "gzip": _COMPRESSORS, "gunzip": _COMPRESSORS, "bzip2": _COMPRESSORS,
    "bunzip2": _COMPRESSORS, "xz": _COMPRESSORS, "unxz": _COMPRESSORS, "lzma": _COMPRESSORS,
    "zstd": Program(writes="all", write_options=("-o",), write_unless=_COMPRESSORS.write_unless),
    "lz4": Program(writes="last", write_unless=_COMPRESSORS.write_unless),
    "zip": Program(writes="all", note="zip ARCHIVE FILES: writes the archive"),
    "7z": Program(writes="all", write_options=("-o",)),
    "csplit": Program(write_options=("-f", "--prefix")),
    "base32": READS,
    "tar": Program(
        write_options=("-f", "--file"),
        write_when=("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate"),
        note="tar -c -f ARCHIVE writes the archive (old-style `tar cf ARCHIVE` too)",
    ),
    # code in other languages, and code read from a file or from standard input
    "make": Program(
        implicit_files=("GNUmakefile", "makefile", "Makefile", "**/*.mk"),
        code_options=("--eval", "-E"),
        file_options=("-f", "--file", "--makefile", "-C", "--directory"),
        assignments=("V", "VERBOSE", "DEBUG", "Q", "J", "JOBS", "ARGS", "TESTS", "TEST",
                     "PYTEST_ARGS", "TARGET", "BUILD_TYPE", "CONFIG", "NAME", "VERSION"),
        note="runs the workspace's Makefile; a variable set on its command line (SHELL, CC) "
        "changes the commands its recipes run",
    ),
    "cmake": Program(
        implicit_files=("**/CMakeLists.txt", "**/*.cmake"),
        code_options=("-P",),
        file_options=("-C",),
        subcommands={"-E": Program(subcommands=_CMAKE_E, closed=True)},
        note="cmake -E runs a tool command; -P runs a cmake script",
    ),
    "sqlite3": Program(
        escapes=_SQL_ESCAPES,
        code_options=("-cmd", "--cmd", "-init", "--init"),
        stdin_code=True,
        note="dot-commands (.shell, .system, .output, .once, .load) run programs and write files",
    ),
    "psql": Program(
        escapes=_PSQL_ESCAPES,
        file_options=("-f", "--file"),
        write_options=("-o", "--output", "-L", "--log-file"),
        stdin_code=True,
        network=True,
        note="\\! runs a shell command; \\o, \\copy, COPY … PROGRAM write files, run programs",
    ),
    "mysql": Program(
        escapes=_MYSQL_ESCAPES, stdin_code=True, write_options=("--tee",), network=True,
        note="system and \\! run a shell command",
    ),
    "ed": Program(stdin_code=True, note="ed's ! runs a shell command"),
    "red": Program(stdin_code=True),
    "tmux": Program(
        subcommands=dict.fromkeys(
            ("ls", "list-sessions", "list-windows", "list-panes", "list-clients", "has-session",
             "has", "capture-pane", "show-options", "show", "info", "list-keys", "lsk",
             "display-message", "display"),
            READS,
        ),
        closed=True,
        note="new-session, new-window, run-shell, send-keys… run commands",
    ),
    "screen": Program(subcommands={"-ls": READS, "-list": READS}, closed=True),
    "docker": _DOCKER, "podman": _DOCKER, "nerdctl": _DOCKER,
    "npm": Program(
        implicit_files=_NODE_PROJECT,
        subcommands={
            "exec": Program(shell_options=("-c", "--call")),
            "x": Program(shell_options=("-c", "--call")),
            "config": _CONFIG_READS, "c": _CONFIG_READS,
        },
    ),
    "npx": Program(shell_options=("-c", "--call"), runs_operands=True),
    "yarn": Program(implicit_files=_NODE_PROJECT, subcommands={"config": _CONFIG_READS}),
    "pnpm": Program(implicit_files=_NODE_PROJECT, subcommands={"config": _CONFIG_READS}),
    "pip": Program(subcommands={"config": _CONFIG_READS}),
    "pip3": Program(subcommands={"config": _CONFIG_READS}),
    "uvx": Program(runs_operands=True),
    "uv": Program(
        subcommands={"tool": Program(subcommands={"run": Program(runs_operands=True)})}
    ),
    "pipx": Program(
        subcommands=dict.fromkeys(
            ("install", "uninstall", "list", "upgrade", "upgrade-all", "reinstall", "ensurepath",
             "environment", "--version", ""),
            READS,
        ) | {"run": Program(runs_operands=True)},
        closed=True,
    ),
    "gh": Program(
        subcommands=dict.fromkeys(
            ("pr", "issue", "repo", "run", "workflow", "api", "release", "browse", "search",
             "status", "label", "gist", "cache", "project", "ruleset", "auth", "version", "help",
             "completion", "codespace", "org", "secret", "variable", "attestation", "--version",
             ""),
            READS,
        ),
        closed=True,
        network=True,
        note="gh alias and gh extension plant commands (`gh alias set x '!…'`) run later",
    ),
    "bun": Program(implicit_files=_NODE_PROJECT),
    "pytest": Program(implicit_files=_PYTEST_PROJECT),
    "tox": Program(implicit_files=("tox.ini", "pyproject.toml", "setup.py", "setup.cfg")),
    "nox": Program(implicit_files=("noxfile.py",)),
    "cargo": Program(implicit_files=("**/build.rs", "**/Cargo.toml", ".cargo/config.toml")),
    "just": Program(implicit_files=("justfile", "Justfile", ".justfile")),
    "pnpx": Program(runs_operands=True), "bunx": Program(runs_operands=True),
    # programs that run the command given as their operands
    **dict.fromkeys(
        ("chrt", "taskset", "fakeroot", "parallel", "xvfb-run", "dbus-launch",
         "numactl", "cpulimit", "entr", "hyperfine", "nodemon", "tsx", "ts-node", "direnv",
         "dotenv", "with-contenv", "npm-run-all", "concurrently", "pytest-watch"),
        Program(runs_operands=True),
    ),
    "fd": Program(exec_options=("-x", "--exec", "-X", "--exec-batch")),
    "fdfind": Program(exec_options=("-x", "--exec", "-X", "--exec-batch")),
    "ctest": READS,
    "ssh-keygen": Program(write_options=("-f",), write_unless=("-l", "-y", "-F", "-B", "-L")),
    "systemctl": Program(
        subcommands=dict.fromkeys(
            ("status", "list-units", "list-unit-files", "list-timers", "is-active", "is-enabled",
             "is-failed", "show", "cat", "list-dependencies", "list-sockets", "--version"),
            READS,
        ),
        closed=True,
    ),
    # git: every built-in subcommand; `git NAME` otherwise runs an alias or a git-NAME program
    "git": Program(
        subcommands={
            **dict.fromkeys(_GIT_READS, READS),
            **dict.fromkeys(("diff", "log", "show", "diff-tree", "diff-files",
                             "diff-index", "range-diff", "whatchanged"), _GIT_OUTPUT),
            "format-patch": Program(write_options=("--output", "-o", "--output-directory")),
            "archive": Program(write_options=("-o", "--output")),
            "clone": Program(writes="second"),
            "init": Program(writes="all"),
            "worktree": Program(writes="second"),
            "": READS,
        },
        closed=True,
        note="an unlisted NAME may be an alias in the repository's config (`!rm -rf …`)",
    ),
    # find: -L follows links into the folders it deletes from
    "find": Program(follows_links=("-L", "-follow")),
}

MODULES: dict[str, Program] = {
    # Python's -m modules that are not programs of their own (`python3 -m pip` is judged as
    # `pip`, `-m pytest` as `pytest`); a module of the workspace is the project's own code
    "venv": Program(writes="all", note="creates (with --clear: empties) each folder named"),
    "json.tool": Program(writes="second"),
    "http.server": Program(serves=("-d", "--directory")),
    "compileall": Program(writes="all"), "py_compile": Program(writes="all"),
    "gzip": Program(writes="all", write_unless=("-d", "--decompress")),
    "zipapp": Program(write_options=("-o", "--output")),
    **dict.fromkeys(
        ("unittest", "pydoc", "platform", "site", "sysconfig", "this", "calendar", "ensurepip",
         "tokenize", "ast", "dis", "pyclbr", "build", "pstats", "tabnanny", "pickletools",
         "uuid", "base64", "locale", "encodings"),
        READS,
    ),
}
# fmt: on

PROGRAM_MODULES = frozenset(
    {"pip", "pytest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "coverage", "tox",
     "nox", "uv", "twine", "pyright", "poetry", "pipx", "hatch", "pdm", "pre_commit"}
)  # fmt: skip
"""Modules that are a program of the table (``python3 -m pytest`` is judged as ``pytest``)."""
