#!/usr/bin/env bash
# Dependencies for an air-gapped GPU node that has the toolkit but lacks some -dev packages
# (the H100 node has no sqlite3.h and no package registry).
#   On a connected Debian/Ubuntu machine:  tools/offline_deps.sh fetch [DIR]   (default .offline)
#   Copy DIR next to the sources on the node, then:  tools/offline_deps.sh unpack [DIR]
#   and build with:  KFORGE_CMAKE_ARGS="-DKFORGE_DEPS_PREFIX=$PWD/DIR/prefix" tools/test.sh
# Only packages whose headers are missing are unpacked; the node's own libraries are used
# for everything else.
set -euo pipefail
cmd="${1:-}"; dir="${2:-.offline}"
packages=(libsqlite3-dev libsqlite3-0)
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
  *) echo "usage: $0 fetch|unpack [DIR]" >&2; exit 2 ;;
esac
