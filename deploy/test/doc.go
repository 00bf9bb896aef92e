// Package test proves the install artefacts: the Helm chart (charts/gitops-reverser) and
// the plain manifests (config/default, config/components/audit, config/samples) render and
// are accepted by a real kube-apiserver (server-side apply with dryRun=All). Those tests
// need the control plane and carry the e2e build tag; the check that the chart's CRDs are
// a current copy of config/crd runs without it.
package test
