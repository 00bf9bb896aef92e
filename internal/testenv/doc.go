// Package testenv starts the real components that integration tests run against: a
// kube-apiserver and etcd (controller-runtime envtest) with this project's CRDs installed,
// and a Git server on loopback that speaks smart HTTP (through git http-backend) and SSH.
//
// Nothing here is a mock. Tests wait on the state of these servers; they never sleep.
package testenv
