#!/usr/bin/env bash
# Prints the directory that holds the test control plane (kube-apiserver, etcd, kubectl) and
# builds it there first when it is missing. Everything comes from Go modules through the module
# proxy: no binary is downloaded. Only the directory goes to stdout; progress goes to stderr.
#
#   KUBEBUILDER_ASSETS="$(bash hack/tools/control-plane.sh)"
#
# - KUBEBUILDER_ASSETS, when set to a directory holding kube-apiserver, is printed as it is.
# - The cache is $GITOPS_REVERSER_CACHE (default $HOME/.cache/gitops-reverser), one folder per
#   pinned version set, so a version change never reuses an old binary.
# - Two runs at once are safe: the second waits on a lock for the first to finish.
# - A cold build takes 11-20 minutes on two cores (kube-apiserver is most of it); a warm run
#   answers in under a second. See docs/testing.md#the-control-plane.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

# The pins move together: controller-runtime v0.24.x goes with k8s.io/* v0.36.x, which the
# staging modules of Kubernetes v1.36.x publish.
kubernetes_version="v1.36.3"
etcd_version="v3.6.16"
staging_version="v0.${kubernetes_version#v1.}"

tool_name="control-plane"
if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ]; then
  printf '%s\n' "$KUBEBUILDER_ASSETS"
  exit 0
fi

dir="$(tools_cache_dir "control-plane/k8s-${kubernetes_version}_etcd-${etcd_version}")"
bin="$dir/bin"
mkdir -p "$bin"
tools_lock "$dir"

# current <binary>: present, runnable and reporting the pinned version.
current() {
  local b="$bin/$1" out
  [ -x "$b" ] || return 1
  case "$1" in
    kube-apiserver) out="$("$b" --version 2>/dev/null)" && [ "$out" = "Kubernetes $kubernetes_version" ] ;;
    kubectl) out="$("$b" version --client 2>/dev/null)" && grep -qx "Client Version: $kubernetes_version" <<<"$out" ;;
    etcd) out="$("$b" --version 2>/dev/null)" && grep -qx "etcd Version: ${etcd_version#v}" <<<"$out" ;;
  esac
}

# Kubernetes publishes its commands only inside k8s.io/kubernetes, whose go.mod requires every
# staging module as v0.0.0 and replaces it with ./staging/... (not in the module zip). A small
# wrapper module requires k8s.io/kubernetes and points each staging module at its published tag.
kubernetes_wrapper_mod() {
  local upstream_mod goline
  upstream_mod="$(go mod download -json "k8s.io/kubernetes@$kubernetes_version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
  [ -f "$upstream_mod" ] || tools_die "could not download the go.mod of k8s.io/kubernetes@$kubernetes_version"
  goline="$(awk '$1 == "go" {print $2; exit}' "$upstream_mod")"
  printf 'module gitops-reverser.test/kubernetes\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$goline" "$kubernetes_version"
  awk -v tag="$staging_version" '
    /^require[[:space:]]*\(/ {inside = 1; next}
    inside && /^\)/ {inside = 0}
    inside && $1 ~ /^k8s\.io\// && $2 == "v0.0.0" {printf "\t%s => %s %s\n", $1, $1, tag}
  ' "$upstream_mod"
  printf ')\n'
}

# The version package is stamped the way the Kubernetes release build does; envtest and
# `current` read it back.
kubernetes_ldflags() {
  local major minor flags="-s -w" pkg
  major="$(cut -d. -f1 <<<"${kubernetes_version#v}")"
  minor="$(cut -d. -f2 <<<"$kubernetes_version")"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$kubernetes_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  printf '%s' "$flags"
}

build_kubernetes() {
  local work="$dir/src/kubernetes" cmds=() pkgs=() c
  for c in "$@"; do cmds+=("$c"); pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  tools_log "building ${cmds[*]} from k8s.io/kubernetes@$kubernetes_version (staging modules $staging_version)"
  rm -rf "$work" && mkdir -p "$work"
  kubernetes_wrapper_mod >"$work/go.mod"
  (
    cd "$work"
    tools_step "resolving modules" go get "${pkgs[@]/%/@$kubernetes_version}"
    tools_step "compiling ${cmds[*]}" go build -trimpath -ldflags "$(kubernetes_ldflags)" -o out/ "${pkgs[@]}"
  )
  for c in "${cmds[@]}"; do mv -f "$work/out/$c" "$bin/$c"; done
}

build_etcd() {
  local work="$dir/src/etcd"
  tools_log "building etcd from go.etcd.io/etcd/server/v3@$etcd_version"
  rm -rf "$work" && mkdir -p "$work"
  printf 'module gitops-reverser.test/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$etcd_version" >"$work/go.mod"
  (
    cd "$work"
    tools_step "resolving modules" go get "go.etcd.io/etcd/server/v3@$etcd_version"
    tools_step "compiling etcd" go build -trimpath -ldflags "-s -w" -o out/etcd go.etcd.io/etcd/server/v3
  )
  mv -f "$work/out/etcd" "$bin/etcd"
}

missing=()
for c in kube-apiserver kubectl; do current "$c" || missing+=("$c"); done
if [ "${#missing[@]}" -gt 0 ]; then
  tools_log "first run: building the control plane from source, 11-20 minutes on two cores; later runs reuse $dir"
  build_kubernetes "${missing[@]}"
fi
current etcd || build_etcd
for c in kube-apiserver kubectl etcd; do current "$c" || tools_die "$c in $bin does not run or is not at the pinned version"; done
printf '%s\n' "$bin"
