package worker

import (
	"testing"
	"time"
)

func TestPushesWaitForTheCooldown(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.CommitWindow = 0
		c.PushCooldown = time.Hour
	})
	r.submit(upsert("alice", "team-a", "first", "1"))
	r.waitFor("the first write to be pushed", func() bool { return r.server.Pushes(repoName) == 1 })

	r.submit(upsert("alice", "team-a", "second", "1"))
	r.waitStatus("the second write to be decided", func(st Status) bool { return st.PendingWrite == 1 && r.idle() })
	st, err := r.worker.Status(r.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(st.NextPushAt) < 50*time.Minute {
		t.Fatalf("the next push is due at %s; want it held for the one-hour cooldown", st.NextPushAt)
	}
	if n := r.server.Pushes(repoName); n != 1 {
		t.Fatalf("%d pushes inside the cooldown, want 1", n)
	}
}
