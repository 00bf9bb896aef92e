// Package sandbox runs GitOps Reverser end to end on one machine, for
// `gitops-reverser quickstart`: a control plane (kube-apiserver and etcd from
// KUBEBUILDER_ASSETS, no nodes), a Git server on loopback (git http-backend with basic auth)
// holding one empty bare repository, and the operator as a child process
// (`gitops-reverser run --kubeconfig ...`), exactly as it runs out of cluster.
//
// Start brings them up; a Tour configures a GitProvider, GitTarget and WatchRule and makes
// a few changes through the API, waiting for each to reach the repository; PrintHistory
// shows the result; Close stops everything in order.
//
// The servers themselves are in the sub-package servers, shared with internal/testenv;
// this package is the only one that also starts the operator, which is why the servers are
// not here (tests of the operator's own packages use them without importing the operator).
package sandbox
