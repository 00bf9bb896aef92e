# Shared by the scripts that build the test tools (hack/tools/*.sh); sourced, not run.
# Each script sets tool_name before it logs.

tools_log() { printf '[%s] %s\n' "${tool_name:-tools}" "$*" >&2; }
tools_die() { tools_log "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 || tools_die "go is not on PATH"
# A build of a test tool does not depend on the project's module or workspace settings.
export GOFLAGS="-mod=mod -buildvcs=false" GOWORK=off CGO_ENABLED=0 GO111MODULE=on

# tools_cache_dir <sub>: the cache folder of one pinned tool set.
tools_cache_dir() {
  printf '%s/%s' "${GITOPS_REVERSER_CACHE:-${HOME:-/root}/.cache/gitops-reverser}" "$1"
}

# tools_lock <dir>: hold an exclusive lock on <dir> until the script exits, so two runs that
# start at once build once; the second finds the binaries and returns.
tools_lock() {
  mkdir -p "$1"
  exec 9>"$1/.lock"
  if ! flock -n 9; then
    tools_log "another run holds $1 (building or checking); waiting for it"
    flock 9
  fi
}

# tools_step <what> <command...>: run a long step with its output on stderr and a line every
# 30 seconds, so a person watching knows it is alive and how long it has taken.
tools_step() {
  local what="$1" started ticker rc=0
  shift
  started=$(date +%s)
  tools_log "$what ..."
  ( while sleep 30; do tools_log "$what: $(( ($(date +%s) - started) / 60 ))m$(( ($(date +%s) - started) % 60 ))s so far"; done ) &
  ticker=$!
  "$@" >&2 || rc=$?
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
  [ "$rc" -eq 0 ] || tools_die "$what failed (exit $rc)"
  tools_log "$what: done in $(( $(date +%s) - started ))s"
}
