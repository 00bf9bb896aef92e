// Package worker holds the branch worker: one goroutine and one event loop per repository
// branch, the only writer of that branch (docs/branch-worker.md#one-writer-per-branch).
//
// Desired-state events (upsert or delete of one object's document, or a snapshot of a
// scope) arrive as messages. Events of one (author, GitTarget) gather in a commit window; a
// closed window is planned once, on the tree where it is first committed, and becomes a
// pending write that keeps the actions that plan decided
// (docs/branch-worker.md#decide-once). Pending writes are pushed with compare-and-swap;
// when the remote moved, the worker fetches and replays exactly the decided actions onto
// the new tip (docs/branch-worker.md#replay), never a fresh picture of the cluster. A
// pending write is never dropped: failed pushes are retried with backoff.
//
// All state of a branch lives in one struct, branchState, owned by the loop goroutine.
package worker
