// Package route delivers what the watch streams see to the branch workers of the
// GitTargets that claim it: it filters each stream by the target's merged claims, turns
// snapshots into per-scope resyncs, and gathers a target's first snapshots into one resync
// so that a start or a restart lands in one commit per target.
package route
