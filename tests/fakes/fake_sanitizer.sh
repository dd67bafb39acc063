#!/bin/sh
# A stand-in for compute-sanitizer, for the `search --sanitize` tests: runs the command after its
# options (the worker, which inherits the protocol descriptor), then appends the summary lines
# the real tool writes to --log-file. KFORGE_FAKE_MEMCHECK_ERRORS / KFORGE_FAKE_RACECHECK_ERRORS
# set the counts (default 0); KFORGE_FAKE_SANITIZER_NO_SUMMARY=1 writes none.
tool=memcheck
log=/dev/stderr
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool=$2; shift 2 ;;
    --log-file) log=$2; shift 2 ;;
    --kernel-name) shift 2 ;;
    --*) echo "fake sanitizer: unknown option $1" >&2; exit 9 ;;
    *) break ;;
  esac
done
"$@"
rc=$?
[ -n "$KFORGE_FAKE_SANITIZER_NO_SUMMARY" ] && exit $rc
if [ "$tool" = racecheck ]; then
  n=${KFORGE_FAKE_RACECHECK_ERRORS:-0}
  echo "========= RACECHECK SUMMARY: $n hazards displayed ($n errors, 0 warnings)" >> "$log"
else
  n=${KFORGE_FAKE_MEMCHECK_ERRORS:-0}
  echo "========= ERROR SUMMARY: $n errors" >> "$log"  # racecheck prints no ERROR SUMMARY line
fi
exit $rc
