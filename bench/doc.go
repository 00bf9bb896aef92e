// Command bench is `make bench`: it starts the real control plane (kube-apiserver and
// etcd) and a Git server once, runs the gitops-reverser binary as a child process against
// them, and prints a table of the initial mirror, steady-state latency, a burst and the
// scale with repository size, each figure beside a baseline measured in the same run.
// See BENCH.md for the figures, the method and how to rerun it.
//
//	KUBEBUILDER_ASSETS="$(bash hack/tools/control-plane.sh)" go run ./bench [-quick] [-phases 1,2]
//
// It runs on Linux only: it reads /proc and watches the Git server's refs with inotify.
package main
