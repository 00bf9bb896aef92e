package worker

import (
	"fmt"
	"testing"
)

func TestPendingWritesArePushedWhenTheServerReturns(t *testing.T) {
	r := newRig(t)
	r.submit(upsert("alice", "team-a", "before", "1"))
	r.settled()

	r.http.SetDown(true)
	for i := 0; i < 3; i++ {
		r.submit(upsert("alice", "team-a", fmt.Sprintf("during-%d", i), "1"))
	}
	r.waitStatus("the push to fail while the server is down", func(st Status) bool { return st.Failures >= 2 && st.PendingWrite > 0 })
	r.http.SetDown(false)
	st := r.settled()
	if st.LastError != "" || st.Failures != 0 {
		t.Fatalf("status after recovery = %+v, want the error cleared", st)
	}
	for i := 0; i < 3; i++ {
		if !r.hasFile(cmPath("team-a", fmt.Sprintf("during-%d", i))) {
			t.Fatalf("during-%d was lost in the outage", i)
		}
	}
}
