// Package ownership decides, without any I/O, which branch worker writes which repository
// branch (docs/branch-ownership.md). It normalizes repository URLs into keys (NormalizeURL,
// KeyFor), redacts credentials for logs and errors (Redact), matches branch names against a
// GitProvider's allowedBranches globs (BranchAllowed), and names the owner of every branch
// and the GitTargets that must be refused with TargetConflict (DecideOwnership). The
// reconciler and the worker startup both call DecideOwnership, so they reach the same
// answer from the same inputs.
package ownership
