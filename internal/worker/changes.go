package worker

import (
	"sort"
	"sync"
)

// Changes collects the GitTargets whose reported state changed (a folder refused or
// accepted again, a refused write, RenderMatchesLive, a failing or recovered remote), so
// that the reconcilers bring their conditions up to date within seconds instead of at their
// next resync. Mark never blocks a worker: names are gathered in a set until Take, and one
// signal stands for any number of marks. A nil *Changes ignores marks.
type Changes struct {
	mu     sync.Mutex
	names  map[string]struct{}
	signal chan struct{}
}

// NewChanges returns an empty collector.
func NewChanges() *Changes {
	return &Changes{names: map[string]struct{}{}, signal: make(chan struct{}, 1)}
}

// Mark records that the state of the named targets ("namespace/name") changed.
func (c *Changes) Mark(names ...string) {
	if c == nil || len(names) == 0 {
		return
	}
	c.mu.Lock()
	for _, n := range names {
		c.names[n] = struct{}{}
	}
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default: // a signal is already waiting; it covers these names too
	}
}

// Ready is signalled after a Mark; Take then returns the names.
func (c *Changes) Ready() <-chan struct{} { return c.signal }

// Take returns the marked names, sorted, and forgets them.
func (c *Changes) Take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.names))
	for n := range c.names {
		out = append(out, n)
	}
	clear(c.names)
	sort.Strings(out)
	return out
}

// publishChanges marks the targets whose reported state differs from what was last
// reported. Only what the GitTarget's conditions show is compared, so a push that only
// moves the tip reconciles nothing.
func (s *branchState) publishChanges() {
	if s.cfg.Changes == nil {
		return
	}
	var changed []string
	for name, ts := range s.targets {
		now := s.reportedState(ts)
		if s.reported[name] != now {
			s.reported[name] = now
			changed = append(changed, name)
		}
	}
	for name := range s.reported {
		if _, ok := s.targets[name]; !ok {
			delete(s.reported, name)
		}
	}
	s.cfg.Changes.Mark(changed...)
}

// reportedState is what of a target's state its conditions show.
type reportedState struct {
	ready                            bool
	failing, refused, held, boundary string
	fidelity                         Fidelity
	apply                            ApplyStatus
}

func (s *branchState) reportedState(ts *targetState) reportedState {
	r := reportedState{ready: s.ready, boundary: ts.boundary, fidelity: ts.fidelity.status(), apply: ts.applyStatus()}
	if ts.folder.refused != nil {
		r.refused = ts.folder.refused.Error()
	}
	if ts.held != nil {
		r.held = ts.held.Error()
	}
	if s.failures > 0 && s.lastErr != nil {
		// Only while the branch fails: a target's refusal is noted as the branch's last
		// error too, and must not reconcile every other target.
		r.failing = s.lastErr.Error()
	}
	return r
}
