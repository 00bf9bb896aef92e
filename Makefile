# GitOps Reverser: every entry point is a target of this file.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

GO ?= go
BIN_DIR := bin
BINARY := $(BIN_DIR)/gitops-reverser
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# The release build: paths trimmed (the same bytes from any checkout, and a fresh clone reuses
# the build cache) and no symbol table or DWARF (-s -w): 30% smaller, stack traces still whole.
# docs/build.md has the figures; the Dockerfile builds the same way.
LDFLAGS := -s -w -X main.version=$(VERSION)
BUILD_FLAGS := -trimpath -ldflags "$(LDFLAGS)"
# Static, as the image: with cgo the binary is linked dynamically and, since kustomize links
# the plugin package, exports every symbol: 31 MB more, all of it in memory (docs/build.md).
BUILD_ENV := CGO_ENABLED=0

# controller-gen runs pinned through `go run`, in its own module: nothing to install.
CONTROLLER_GEN := $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0

# The real control plane (kube-apiserver, etcd, kubectl) is built from its Go modules by the
# repository's own script and cached under $$HOME/.cache/gitops-reverser. The first build takes
# 11-20 minutes on two cores and prints its progress; later runs answer in under a second.
CONTROL_PLANE := bash hack/tools/control-plane.sh
# Flux's source-controller and kustomize-controller for the two-way tests (docs/two-way.md),
# built the same way by the repository's own script: about 12-16 minutes cold, cached after.
FLUX := bash hack/tools/flux.sh
# Argo CD's application controller, repo server and git askpass in one binary (and redis-server) for the two-way tests with Argo CD, the same way.
ARGOCD := bash hack/tools/argocd.sh

.PHONY: all build generate verify-generated chart-crds image test unit e2e stress bench bench-micro bench-twoway lint quickstart clean control-plane flux argocd

all: build

build: ## Build bin/gitops-reverser.
	$(BUILD_ENV) $(GO) build $(BUILD_FLAGS) -o $(BINARY) ./cmd/gitops-reverser

generate: ## Regenerate deep copies and the CRDs under config/crd.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:dir=config/crd
	gofmt -w api
	@$(MAKE) --no-print-directory chart-crds

verify-generated: generate ## Fail when committed generated files are stale.
	@git diff --exit-code -- api config/crd $(CHART_CRDS) || { echo "generated files are stale: run 'make generate' and commit the result" >&2; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- api config/crd $(CHART_CRDS)); test -z "$$untracked" || { echo "$$untracked"; echo "untracked generated files: run 'make generate' and commit the result" >&2; exit 1; }

# The chart's crds/ is a copy of config/crd; config/default installs the CRDs from it too.
CHART_CRDS := charts/gitops-reverser/crds
chart-crds: ## Copy config/crd into the Helm chart's crds/ (make generate runs it).
	rm -f $(CHART_CRDS)/*.yaml && cp config/crd/*.yaml $(CHART_CRDS)/
	{ echo "# Made by make chart-crds: the CRDs for config/default (Helm skips this file)."; \
	  echo "apiVersion: kustomize.config.k8s.io/v1beta1"; echo "kind: Kustomization"; echo "resources:"; \
	  for f in config/crd/*.yaml; do echo "  - $$(basename $$f)"; done; } > $(CHART_CRDS)/Kustomization

# The image; `docker build` needs a registry for its base images, which this machine lacks.
IMG ?= gitops-reverser:$(VERSION)
image: ## Build the container image $(IMG) from the Dockerfile.
	docker build --build-arg VERSION=$(VERSION) -t $(IMG) .

control-plane: ## Build (or find) the test control plane and print its directory.
	@$(CONTROL_PLANE)

flux: ## Build (or find) Flux's controllers for the two-way tests and print their directory.
	@$(FLUX)

argocd: ## Build (or find) Argo CD's binary (and install redis-server) for the two-way tests and print its directory.
	@$(ARGOCD)

unit: ## Fast tests: no control plane needed.
	$(GO) test ./...

e2e: ## Tests against a real kube-apiserver and etcd (and the Git servers, Flux and Argo CD).
	assets=$$($(CONTROL_PLANE)); flux=$$($(FLUX)); argocd=$$($(ARGOCD)); KUBEBUILDER_ASSETS="$$assets" FLUX_BIN="$$flux" ARGOCD_BIN="$$argocd" $(GO) test -tags e2e -count=1 -timeout 50m ./...

# The write path under stress and -race (internal/stress): 8 GitTargets on 2 branches, 5,000
# changes, rotations, refused pushes and a forced 410; one to two minutes on two cores.
stress: ## The stress test of the write path, under -race.
	assets=$$($(CONTROL_PLANE)); KUBEBUILDER_ASSETS="$$assets" $(GO) test -race -tags stress -count=1 -timeout 20m ./internal/stress/

test: lint verify-generated e2e stress ## Every test: generated files, lint, unit, e2e and the stress test.

bench: build ## Benchmarks of speed and memory: the end-to-end run of BENCH.md (BENCH_FLAGS=-quick for a short one), then bench-micro and bench-twoway.
	$(GO) build -o $(BIN_DIR)/bench ./bench
	assets=$$($(CONTROL_PLANE)); KUBEBUILDER_ASSETS="$$assets" ./$(BIN_DIR)/bench -operator $(BINARY) $(BENCH_FLAGS)
	$(MAKE) --no-print-directory bench-micro
	$(MAKE) --no-print-directory bench-twoway

# E13 of docs/two-way.md against real Flux and Argo CD: API create → adopted, s/adopted over
# 10 creates, per applier.
bench-twoway: ## The two-way loop's benchmark: API create to adopted by Flux and by Argo CD.
	assets=$$($(CONTROL_PLANE)); flux=$$($(FLUX)); argocd=$$($(ARGOCD)); KUBEBUILDER_ASSETS="$$assets" FLUX_BIN="$$flux" ARGOCD_BIN="$$argocd" $(GO) test -tags e2e -run '^$$' -bench . -benchtime 10x ./internal/twoway/

bench-micro: ## The go test micro-benchmarks.
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: ## gofmt and go vet.
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); test -z "$$out" || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags e2e ./...
	$(GO) vet -tags stress ./internal/stress/ ./internal/worker/

quickstart: build ## The embedded sandbox (control plane, Git server, operator, samples); QUICKSTART_EXIT=1 stops after the history.
	@echo "quickstart: finding the control plane (kube-apiserver, etcd, kubectl). The first run builds it from source:" >&2
	@echo "quickstart: 11-20 minutes on two cores, with progress below; later runs reuse \$$HOME/.cache and start in seconds." >&2
	@assets=$$($(CONTROL_PLANE)); KUBEBUILDER_ASSETS="$$assets" ./$(BINARY) quickstart

clean:
	rm -rf $(BIN_DIR)
