#!/usr/bin/env bash
# Prints the directory that holds the `argocd` binary for the two-way tests with Argo CD
# (docs/two-way.md): the application controller, the repo server and git askpass in one binary
# that picks its command by name, as Argo CD's own does. It builds it there first when it is
# missing. Its CRDs are in "<dir>/../crds"; <dir> also holds git-verify-wrapper.sh, which the
# repo-server runs from PATH. Everything comes from Go modules through the module proxy; only
# the directory goes to stdout, progress to stderr. It also makes sure redis-server (which the
# repo-server and the application controller need) is installed: from Debian's packages, as
# root or with sudo.
#
#   ARGOCD_BIN="$(bash hack/tools/argocd.sh)"
#
# - The cache is $GITOPS_REVERSER_CACHE (default $HOME/.cache/gitops-reverser), one folder per
#   pinned version. Two runs at once build once (a lock).
# - Argo CD v3.6 needs Go 1.27: the build runs with GOTOOLCHAIN=go1.27.3, which the go command
#   fetches from the module proxy once (the product itself stays on its own Go).
# - A cold build takes about 6 minutes on two cores (plus the toolchain's download); a warm run
#   answers in under a second.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

argocd_version="v3.6.1"
toolchain="go1.27.3"
module="github.com/argoproj/argo-cd/v3"

tool_name="argocd"
dir="$(tools_cache_dir "argocd/${argocd_version}-controllers")"
bin="$dir/bin"
crds="$dir/crds"
mkdir -p "$bin" "$crds" "$dir/src"
tools_lock "$dir"
cd "$dir" # go commands below run outside any caller's module
export GOTOOLCHAIN="$toolchain"

# redis-server: from Debian's packages when missing.
if ! command -v redis-server >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || tools_die "redis-server is missing: install Debian's redis-server package (as root)"
    sudo="sudo"
  fi
  tools_step "installing redis-server from Debian's packages" \
    bash -c "$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends redis-server"
  command -v redis-server >/dev/null 2>&1 || tools_die "redis-server is still not on PATH"
fi

# current: present, runnable, and at the pinned version.
current() {
  local v
  [ -x "$bin/argocd" ] || return 1
  v="$(ARGOCD_BINARY_NAME=argocd HOME="$dir" "$bin/argocd" version --client --short 2>/dev/null)" || return 1
  [[ "$v" == "argocd: ${argocd_version}"* ]]
}

# write_main: a main like Argo CD's cmd/main.go, dispatching on ARGOCD_BINARY_NAME (else the
# name it runs under) to the three commands the tests need; `argocd version` prints the version.
# Unlike Argo CD's main it does not turn gRPC's SRV lookups off: only the commands left out link the
# gRPC balancer that turns them on (grpclb), and the controllers here dial the repo server by IP.
write_main() {
  cat <<'GO'
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	gitaskpass "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func main() {
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	var command *cobra.Command
	switch name {
	case common.CommandApplicationController:
		command = appcontroller.NewCommand()
	case common.CommandRepoServer:
		command = reposerver.NewCommand()
	case common.CommandGitAskPass:
		command = gitaskpass.NewCommand()
	default:
		if len(os.Args) > 1 && os.Args[1] == "version" {
			fmt.Printf("argocd: %s\n", common.GetVersion())
			return
		}
		fmt.Fprintf(os.Stderr, "%s: this build runs only %s, %s and %s (set ARGOCD_BINARY_NAME)\n", name,
			common.CommandApplicationController, common.CommandRepoServer, common.CommandGitAskPass)
		os.Exit(2)
	}
	if err := command.Execute(); err != nil {
		os.Exit(1)
	}
}
GO
}

# module_dir <module@version>: downloads a module and prints its folder.
module_dir() {
  go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p'
}

if ! current; then
  tools_log "first run: building argocd $argocd_version from source (about 6 minutes on two cores); later runs reuse $dir"
  src="$(module_dir "$module@$argocd_version")"
  [ -d "$src" ] || tools_die "could not download $module@$argocd_version"
  work="$dir/src/argo-cd"
  [ ! -e "$work" ] || chmod -R u+w "$work"
  rm -rf "$work" && cp -r "$src" "$work" && chmod -R u+w "$work"
  (
    cd "$work"
    # go.mod replaces gitops-engine/v3 with ./gitops-engine, a nested module the module zip
    # leaves out: the published module of the same version is used instead.
    go mod edit -dropreplace github.com/argoproj/argo-cd/gitops-engine/v3
    # Only the parts the tests run: cmd/main.go would also link the API server, Dex,
    # notifications, the ApplicationSet controller and the CLI (about half the compile).
    mkdir -p cmd/testbin
    write_main >cmd/testbin/main.go
    pkg="$module/common"
    tools_step "compiling argocd $argocd_version (application controller, repo server, git askpass)" go build -trimpath \
      -ldflags "-s -w -X $pkg.version=${argocd_version#v} -X $pkg.gitTag=$argocd_version" -o out/argocd ./cmd/testbin
  )
  mv -f "$work/out/argocd" "$bin/argocd"
  current || tools_die "argocd was built but does not run or is not at $argocd_version"
fi

# The CRDs, and the wrapper script the repo-server runs for every git command.
stamp="$module@$argocd_version"
if [ "$(cat "$crds/.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -x "$bin/git-verify-wrapper.sh" ]; then
  src="$(module_dir "$module@$argocd_version")"
  rm -f "$crds"/*.yaml
  cp "$src/manifests/crds/application-crd.yaml" "$src/manifests/crds/appproject-crd.yaml" "$crds/"
  chmod u+w,a+r "$crds"/*.yaml
  cp "$src/hack/git-verify-wrapper.sh" "$bin/git-verify-wrapper.sh"
  chmod 0755 "$bin/git-verify-wrapper.sh" # module zips drop the execute bit
  printf '%s\n' "$stamp" >"$crds/.stamp"
fi
printf '%s\n' "$bin"
