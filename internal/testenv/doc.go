// Package testenv starts the real components that integration tests run against: a
// kube-apiserver and etcd (controller-runtime envtest) with this project's CRDs installed,
// and a Git server on loopback that speaks smart HTTP (through git http-backend) and SSH.
//
// The servers themselves live in internal/sandbox/servers, which the quickstart sandbox
// uses too and which does not import package testing. This package adds the constructors
// that take a testing.TB, fail the test on error and stop the servers when the test ends;
// the types are aliases of the servers' types.
//
// Nothing here is a mock. Tests wait on the state of these servers; they never sleep.
package testenv
