#!/usr/bin/env bash
# Prints the directory that holds Flux's source-controller and kustomize-controller for the
# two-way tests (docs/two-way.md) and builds them there first when they are missing. Their
# CRDs are in "<dir>/../crds". Everything comes from Go modules through the module proxy; only
# the directory goes to stdout, progress to stderr.
#
#   FLUX_BIN="$(bash hack/tools/flux.sh)"
#
# - The cache is $GITOPS_REVERSER_CACHE (default $HOME/.cache/gitops-reverser), one folder per
#   pinned version set. Two runs at once build once (a lock).
# - A cold build takes about 16 minutes on two cores (source-controller most of it); a warm
#   run answers in under a second.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

source_controller_version="v1.9.6"
kustomize_controller_version="v1.9.6"
# source-controller v1.9.6 asks for github.com/fluxcd/pkg/artifact v0.18.3, which the module
# proxy of the build machines does not serve; v0.18.0 has the same API.
artifact_version="v0.18.0"

tool_name="flux"
dir="$(tools_cache_dir "flux/sc-${source_controller_version}_kc-${kustomize_controller_version}")"
bin="$dir/bin"
crds="$dir/crds"
mkdir -p "$bin" "$crds" "$dir/src"
tools_lock "$dir"
cd "$dir" # go commands below run outside any caller's module

# current <name> <version>: present, runnable, and built from the pinned modules.
current() {
  local b="$bin/$1" info
  [ -x "$b" ] || return 1
  info="$(go version -m "$b" 2>/dev/null)" || return 1
  awk -v m="github.com/fluxcd/$1/api" -v v="$2" '$1 == "dep" && $2 == m && $3 == v {found = 1} END {exit !found}' <<<"$info" || return 1
  "$b" --help >/dev/null 2>&1
}

# module_dir <module@version>: downloads a module and prints its folder.
module_dir() {
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p'
}

# build <name> <version>: the controllers' go.mod replaces their api module with ./api, a
# nested module the module zip leaves out, so the module is built from a writable copy that
# uses the published api module of the same version instead.
build() {
  local name="$1" version="$2" module="github.com/fluxcd/$1" src work="$dir/src/$1"
  src="$(module_dir "$module@$version")"
  [ -d "$src" ] || tools_die "could not download $module@$version"
  rm -rf "$work" && cp -r "$src" "$work" && chmod -R u+w "$work"
  (
    cd "$work"
    go mod edit -dropreplace "$module/api"
    if [ "$name" = source-controller ]; then
      go mod edit -replace "github.com/fluxcd/pkg/artifact=github.com/fluxcd/pkg/artifact@$artifact_version"
    fi
    # -e: test-only modules the proxy does not serve do not matter for the build.
    tools_step "resolving the modules of $name" go mod tidy -e
    tools_step "compiling $name $version" go build -trimpath -ldflags "-s -w" -o "out/$name" .
  )
  mv -f "$work/out/$name" "$bin/$name"
  current "$name" "$version" || tools_die "$name was built but does not run or is not at $version"
}

for pair in "source-controller:$source_controller_version" "kustomize-controller:$kustomize_controller_version"; do
  name="${pair%%:*}" version="${pair#*:}"
  if ! current "$name" "$version"; then
    tools_log "first run: building $name $version from source (the two take about 16 minutes on two cores); later runs reuse $dir"
    build "$name" "$version"
  fi
done

# The CRDs: every source kind (kustomize-controller watches GitRepository, OCIRepository,
# Bucket and ExternalArtifact) and the Kustomization.
stamp="source-controller@$source_controller_version kustomize-controller@$kustomize_controller_version"
if [ "$(cat "$crds/.stamp" 2>/dev/null)" != "$stamp" ]; then
  sc="$(module_dir "github.com/fluxcd/source-controller@$source_controller_version")"
  kc="$(module_dir "github.com/fluxcd/kustomize-controller@$kustomize_controller_version")"
  rm -f "$crds"/*.yaml
  cp "$sc"/config/crd/bases/*.yaml "$kc/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml" "$crds/"
  chmod u+w,a+r "$crds"/*.yaml
  printf '%s\n' "$stamp" >"$crds/.stamp"
fi
printf '%s\n' "$bin"
