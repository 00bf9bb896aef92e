package controller

import (
	"testing"
	"time"
)

// A ready target is refreshed every --status-resync (30 s when 0), a stalled one four times
// less often, one working towards ready every 5 s.
func TestTheStatusResyncSetsWhenATargetIsLookedAtAgain(t *testing.T) {
	cases := []struct {
		name   string
		resync time.Duration
		prob   *problem
		want   time.Duration
	}{
		{"ready, default", 0, nil, 30 * time.Second},
		{"ready, an hour", time.Hour, nil, time.Hour},
		{"stalled, default", 0, &problem{stalled: true}, 2 * time.Minute},
		{"stalled, an hour", time.Hour, &problem{stalled: true}, 4 * time.Hour},
		{"not ready", time.Hour, &problem{}, 5 * time.Second},
	}
	for _, c := range cases {
		r := &GitTargetReconciler{Resync: c.resync}
		if got := r.requeueAfter(c.prob); got != c.want {
			t.Errorf("%s: requeue after %s, want %s", c.name, got, c.want)
		}
	}
}
