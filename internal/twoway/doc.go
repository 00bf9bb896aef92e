// Package twoway holds the end-to-end tests of the two-way loop (docs/two-way.md): the whole
// operator, a real kube-apiserver, a real Git server and real Flux controllers. It has no
// code of its own.
package twoway
