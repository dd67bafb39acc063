#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (and for trying distributed campaigns by hand).
#   pg_cluster.sh start DIR   initdb + start on a free loopback port; writes DIR/url
#   pg_cluster.sh stop DIR    stops it and removes DIR
# Where no PostgreSQL server binaries are found, `start` writes DIR/skip (the reason) and exits
# 0: the tests that need the cluster then skip, saying why. As root (CI), the server runs as an
# unprivileged user (postgres if the package created it, else nobody): initdb refuses root.
# PG_BIN overrides where initdb/pg_ctl/postgres are looked for; a relocated copy (unpacked
# .deb files, see tools/offline_deps.sh) also needs LD_LIBRARY_PATH to its libraries.
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

find_bin() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  command -v initdb >/dev/null && dirname "$(readlink -f "$(command -v initdb)")"
  return 0
}

as_owner() {  # runs "$@" as the cluster's owner
  if [ "$(id -u)" = 0 ]; then runuser -u "$owner" -- env LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

case "$cmd" in
  start)
    rm -rf "$dir" && mkdir -p "$dir"
    bin="$(find_bin)"
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
      echo "PostgreSQL server binaries not found (apt-get install postgresql, or set PG_BIN)" | tee "$dir/skip"
      exit 0
    fi
    # The server's own files live under /tmp, which the unprivileged owner can always reach
    # (DIR's parents may not let it in); DIR keeps the URL and what `stop` needs.
    data="$(mktemp -d /tmp/kforge-pg.XXXXXX)"
    owner="$(id -un)"
    if [ "$(id -u)" = 0 ]; then
      owner=nobody; id postgres >/dev/null 2>&1 && owner=postgres
      chown "$owner" "$data"
    fi
    echo "$owner" > "$dir/owner.txt"; echo "$bin" > "$dir/bin.txt"; echo "$data" > "$dir/data.txt"
    echo "${LD_LIBRARY_PATH:-}" > "$dir/ld_library_path.txt"
    as_owner "$bin/initdb" -D "$data/data" -U kforge --auth=trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
      { echo "initdb failed:"; tail -5 "$dir/initdb.log"; exit 1; } >&2
    for attempt in 1 2 3; do
      port="$(free_port)"
      # fsync off: a test cluster is thrown away, and CI has slow disks.
      if as_owner "$bin/pg_ctl" -D "$data/data" -l "$data/server.log" -w -t 30 \
           -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=off -c jit=off -c max_connections=200" start >/dev/null; then
        echo "postgresql://kforge@127.0.0.1:$port/postgres" > "$dir/url"
        echo "$("$bin/postgres" --version) running: $(cat "$dir/url")"
        exit 0
      fi
    done
    echo "pg_ctl start failed:" >&2; tail -5 "$data/server.log" >&2; exit 1
    ;;
  stop)
    if [ -f "$dir/data.txt" ]; then
      data="$(cat "$dir/data.txt")"
      owner="$(cat "$dir/owner.txt")"; LD_LIBRARY_PATH="$(cat "$dir/ld_library_path.txt" 2>/dev/null || true)"
      as_owner "$(cat "$dir/bin.txt")/pg_ctl" -D "$data/data" -m immediate -w stop >/dev/null 2>&1 || true
      case "$data" in /tmp/kforge-pg.*) rm -rf "$data" ;; esac
    fi
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
