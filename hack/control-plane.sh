#!/usr/bin/env bash
# Prints the directory of the test control plane binaries (kube-apiserver, etcd, kubectl),
# building them on first use with the shared script. Progress goes to stderr, so a person
# running `make test` or `make quickstart` sees what takes the time.
set -euo pipefail
tools="${1:-../shared/tools}"
script="$tools/k8s-test-binaries.sh"
if [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/kube-apiserver" ]; then
  printf '%s\n' "$KUBEBUILDER_ASSETS"
  exit 0
fi
if [ ! -f "$script" ]; then
  echo "control plane: $script not found; set SHARED_TOOLS to the folder holding k8s-test-binaries.sh" >&2
  exit 1
fi
if [ ! -x "${HOME:-/root}/.cache/k8s-test-binaries" ]; then
  echo "control plane: first run builds kube-apiserver, etcd and kubectl from source (11-20 minutes, cached under \$HOME/.cache)" >&2
fi
bash "$script"
