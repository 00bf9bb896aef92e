// Package gitrepo is the operator's only door to Git: it keeps a bare local copy of one
// remote repository, reads trees, builds commits by editing trees directly (no work tree,
// so the cost of a commit grows with the paths it changes, not with the repository), and
// pushes with compare-and-swap against the tip the commit was built on. It never
// force-pushes. go-git stays behind this package: callers see commit IDs as hex strings.
package gitrepo
