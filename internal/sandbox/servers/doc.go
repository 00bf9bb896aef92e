// Package servers starts the real local servers that both the tests and the quickstart
// sandbox run against: a kube-apiserver and etcd (controller-runtime envtest) with this
// project's CRDs installed, and a Git server on loopback that speaks smart HTTP (through git
// http-backend) and SSH.
//
// Every constructor returns an error and every server has a Stop or Close, so that a
// program (gitops-reverser quickstart) can use them. The package does not import package
// testing: internal/testenv wraps it with constructors that take a testing.TB and stop the
// servers when the test ends.
//
// Nothing here is a mock.
package servers
