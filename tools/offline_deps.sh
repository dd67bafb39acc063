#!/usr/bin/env bash
# Dependencies for an air-gapped GPU node that has the toolkit but lacks some -dev packages
# (the H100 node has no sqlite3.h and no package registry).
#   On a connected Debian/Ubuntu machine:  tools/offline_deps.sh fetch [DIR]   (default .offline)
#   Copy DIR next to the sources on the node, then:  tools/offline_deps.sh unpack [DIR]
#   and build with:  KFORGE_CMAKE_ARGS="-DKFORGE_DEPS_PREFIX=$PWD/DIR/prefix" tools/test.sh
# Only packages whose headers are missing are unpacked; the node's own libraries are used
# for everything else.
# `fetch --with-postgres` also gathers libpq and a PostgreSQL 15 server with the libraries a
# non-Debian-12 node may lack (ICU 72, OpenLDAP 2.5): after `unpack`, the build finds libpq in
# the prefix, and `tools/pg_cluster.sh start DIR` runs that server from it (PG_BIN and LD_LIBRARY_PATH into the prefix) (distributed campaigns on a
# node with no package registry; see docs/distributed.md).
set -euo pipefail
cmd="${1:-}"; shift || true
with_postgres=0
if [ "${1:-}" = "--with-postgres" ]; then with_postgres=1; shift; fi
dir="${1:-.offline}"
packages=(libsqlite3-dev libsqlite3-0)
[ $with_postgres = 1 ] && packages+=(libpq-dev libpq5 postgresql-15 postgresql-client-15 libicu72 libldap-2.5-0)
case "$cmd" in
  fetch)
    mkdir -p "$dir"
    (cd "$dir" && apt-get download "${packages[@]}")
    echo "fetched into $dir: $(ls "$dir"/*.deb | wc -l) packages"
    ;;
  unpack)
    rm -rf "$dir/prefix" && mkdir -p "$dir/prefix"
    for deb in "$dir"/*.deb; do dpkg -x "$deb" "$dir/prefix"; done
    echo "unpacked into $dir/prefix (use -DKFORGE_DEPS_PREFIX=$(cd "$dir/prefix" && pwd))"
    ;;
  *) echo "usage: $0 fetch [--with-postgres] [DIR] | unpack [DIR]" >&2; exit 2 ;;
esac
