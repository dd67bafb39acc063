#!/usr/bin/env bash
# Installs the build to a temporary prefix and runs the README's CPU commands from another
# folder with the installed binary, as a user would: it must find its specs and templates
# beside itself, and carry no path into the source tree.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/kforge" || { echo "no bin/kforge in the prefix"; exit 1; }
for d in search_spaces kernel_templates; do
  test -d "$prefix/share/kforge/$d" || { echo "no share/kforge/$d in the prefix"; exit 1; }
done
if grep -aqF "$src" "$prefix/bin/kforge"; then
  echo "the installed binary contains the source path $src"; exit 1
fi
mkdir "$work/elsewhere" && cd "$work/elsewhere"
export PATH="$prefix/bin:$PATH"
kforge list | tee list.txt
grep -q '^gemm' list.txt || { echo "kforge list does not show gemm"; exit 1; }
kforge --db "$work/r.db" check --family gemm --arch sm_90 --sample 1 --no-cache
kforge --version
echo "install OK"
