package worker

import "fmt"

// bootstrapTriggered writes the bootstrap files (README.md, .sops.yaml with encryption) of a
// triggered target's folder that holds no object, when a snapshot of it planned nothing:
// without them the folder does not exist in Git, and the applier's apply of the branch fails
// on a missing path until the first object is created
// (docs/two-way.md, "An empty folder is bootstrapped"). Nothing is written when the files are there already.
// committed is the decide's flag that keeps the folder index.
func (s *branchState) bootstrapTriggered(ts *targetState, b *batch, seq uint64, committed *bool) (*pendingWrite, error) {
	f := ts.folder
	if ts.cfg.Apply == nil || len(b.snapshots) == 0 || f.index.Len() > 0 {
		return nil, nil
	}
	if err := f.bootstrap(ts.cfg.SOPSRules); err != nil {
		return nil, fmt.Errorf("bootstrap %s: %w", ts.cfg.Name, err)
	}
	changes := f.changes()
	if len(changes) == 0 {
		return nil, nil
	}
	pw := &pendingWrite{target: b.target, author: b.author, waiters: b.waiters, received: b.received, seq: seq, bootstrap: true,
		message: fmt.Sprintf("Bootstrap the folder of %s for its applier", b.target)}
	commit, err := s.commit(changes, pw)
	if err != nil {
		return nil, err
	}
	*committed = true
	if commit == "" {
		return nil, nil
	}
	pw.commit, pw.applied = commit, true
	s.cfg.Metrics.Commit()
	return pw, nil
}
