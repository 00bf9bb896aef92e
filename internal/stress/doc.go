// Package stress holds the stress test of the write path (`make stress`, part of
// `make test`): the whole operator, in process and under -race, against a real
// kube-apiserver and etcd and a real Git server, while GitTargets, WatchRules and
// credentials change, the Git server refuses pushes and a watch stream is forced through
// 410 Gone. It proves that nothing is lost, that nothing deadlocks and that a branch never
// has two workers.
//
// Besides this comment the package holds only a test, with the build tag stress, so
// `go test ./...` and `go test -tags e2e ./...` pass it by. docs/testing.md#the-stress-test
// says what it does and how it fails.
package stress
