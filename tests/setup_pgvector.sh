#!/usr/bin/env bash
# pgvector for the tests' PostgreSQL (Debian's, the server `make postgres` installs), built to
# run on any x86-64: `make pgvector` runs this. Nothing is done when the server already has
# pgvector 0.8 or later.
#
# 1. Debian's own package of the extension for this PostgreSQL, where the release has one
#    (Debian builds it without -march=native).
# 2. Otherwise Debian's source package (from Debian's current release, read through a private
#    apt list: the machine's sources are left as they are), built with OPTFLAGS="" — pgvector's
#    Makefile otherwise compiles for the building CPU (-march=native), and a build made on an
#    AVX-512 machine dies with "invalid opcode" on one without — and installed into the server.
#
# tests/recall/test_pgvector.py checks that the extension the server loads has no AVX-512 or AVX
# instruction outside the functions pgvector picks at run time by asking the CPU, and builds an
# HNSW index with the server running on an emulated AMD EPYC Rome (AVX2, no AVX-512) and on a
# plain x86-64 (QEMU's user mode: Debian's qemu-user, installed here too).
set -euo pipefail

bin="${1:?usage: setup_pgvector.sh POSTGRESQL_BIN_DIR}"
major="$(basename "$(dirname "$bin")")"
control="/usr/share/postgresql/$major/extension/vector.control"
SOURCE_RELEASE="${PGVECTOR_SOURCE_RELEASE:-trixie}"

recent() {  # pgvector 0.8 or later is installed for this server
  [ -f "$control" ] || return 1
  local version
  version="$(sed -n "s/^default_version *= *'\([0-9.]*\)'.*/\1/p" "$control")"
  [ -n "$version" ] && [ "$(printf '%s\n0.8.0\n' "$version" | sort -V | head -1)" = 0.8.0 ]
}

emulator() {  # the tests run the server on other CPUs with QEMU's user mode
  command -v qemu-x86_64 >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing qemu-user (the pgvector tests run the server on other CPUs)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user >/dev/null 2>&1 || {
      apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user >/dev/null
    }
  else
    echo "the pgvector tests need qemu-x86_64: sudo apt-get install qemu-user" >&2
    exit 1
  fi
}

emulator
recent && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "the pgvector tests need pgvector 0.8 or later for PostgreSQL $major:" \
       "sudo apt-get install postgresql-$major-pgvector, or build it with" \
       "make OPTFLAGS=\"\" && sudo make install (docs/teams.md)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive

echo "installing pgvector for PostgreSQL $major (the recall tests' HNSW index)"
if apt-get install -y -q "postgresql-$major-pgvector" >/dev/null 2>&1 && recent; then
  exit 0
fi

echo "no Debian package of pgvector for PostgreSQL $major: building Debian's source" \
     "($SOURCE_RELEASE) for any x86-64"
apt-get install -y -q "postgresql-server-dev-$major" make gcc >/dev/null 2>&1 || {
  apt-get update -q >/dev/null && apt-get install -y -q "postgresql-server-dev-$major" make gcc >/dev/null
}
mirror="$(apt-get indextargets --format '$(REPO_URI)' 'Label: Debian' 'Created-By: Packages' | head -1)"
if [ -z "$mirror" ]; then
  echo "no Debian archive among apt's sources: cannot fetch pgvector's source" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
echo "deb-src $mirror $SOURCE_RELEASE main" > "$work/sources.list"
apt=(-q -o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=-"
     -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "APT::Sandbox::User=root")
apt-get "${apt[@]}" update >/dev/null
(cd "$work/src" && apt-get "${apt[@]}" source --download-only pgvector >/dev/null 2>&1)
tar -xzf "$work"/src/pgvector_*.orig.tar.gz -C "$work/src"
tree="$(find "$work/src" -maxdepth 1 -type d -name 'pgvector-*' | head -1)"
make -s -C "$tree" OPTFLAGS="" PG_CONFIG="$bin/pg_config" >/dev/null
make -s -C "$tree" OPTFLAGS="" PG_CONFIG="$bin/pg_config" install >/dev/null
recent || { echo "pgvector built but not found at $control" >&2; exit 1; }
