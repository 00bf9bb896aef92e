package worker

import (
	"strings"
	"testing"
	"time"
)

// With onRefusal: Reapply, a change the render refuses for its object is not kept for a
// retry: the applier is asked to apply the branch (a Refusal apply), which puts what Git
// holds back on the cluster. With Ignore the change is kept and nothing is applied.
func TestARefusedChangeIsReappliedFromGitUnderReapply(t *testing.T) {
	for _, reapply := range []bool{true, false} {
		t.Run(map[bool]string{true: "Reapply", false: "Ignore"}[reapply], func(t *testing.T) {
			applier := &applyLog{}
			r := rigOn(t, overlayRepo, func(c *Config) { c.Applier, c.ApplyPoll = applier, time.Hour })
			_, render := overlayRig(t)
			r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, Apply: fluxApps, Reapply: reapply})
			// A value the overlay owns: refused for this object alone.
			r.submit(liveEvent(configMapType, "settings", []byte(strings.Replace(string(render["settings"]), "env: dev", "env: prod", 1))))
			st := r.waitStatus("the refusal reported", func(st Status) bool { return st.Boundary["team/live"] != "" })
			if !reapply {
				if st = r.settled(); st.Ledger.Open != 1 || len(applier.commits()) != 0 {
					t.Fatalf("under Ignore: ledger %+v, applies %v; want the change kept and nothing applied", st.Ledger, applier.commits())
				}
				return
			}
			r.waitFor("the Refusal apply of the tip", func() bool {
				c := applier.commits()
				st, err := r.worker.Status(r.ctx())
				return err == nil && len(c) == 1 && c[0] == st.RemoteTip
			})
			st = r.settled()
			if st.Ledger.Open != 0 || st.Ledger.Superseded != 1 {
				t.Fatalf("ledger %+v: want the refused change superseded by the reapply, nothing kept", st.Ledger)
			}
			if got := r.file("clusters/dev/settings.yaml"); got != overlayRepo["clusters/dev/settings.yaml"] {
				t.Fatalf("the refused change was written:\n%s", got)
			}
		})
	}
}
