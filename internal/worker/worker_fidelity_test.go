package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// greetingSnapshot lists the ConfigMaps of team-a: greeting with its live message, and
// other with value.
func greetingSnapshot(message, value string) Snapshot {
	s := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType}
	greeting := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n  namespace: team-a\ndata:\n  message: " + message + "\n"
	s.Objects = []SnapshotObject{
		{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "greeting"}, Doc: []byte(greeting)},
		{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "other"}, Doc: configMap("team-a", "other", value)},
	}
	return s
}

// A ${...} the live object does not hold blocks the target's writes for the epoch: live
// events are held back, and the next snapshot that measures the scope clean lets writes
// through again, starting with its own.
func TestASubstitutedTokenHoldsWritesUntilASnapshotMeasuresClean(t *testing.T) {
	r := rigOn(t, map[string]string{
		"clusters/dev/team-a/core/configmaps/greeting.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n  namespace: team-a\ndata:\n  message: ${GREETING}\n",
	})
	if st := r.settled(); st.Fidelity["team/live"].State != FidelityUnknown {
		t.Fatalf("before any snapshot RenderMatchesLive = %+v, want Unknown", st.Fidelity["team/live"])
	}
	if err := r.worker.Resync(r.ctx(), greetingSnapshot("hello", "1")); err != nil {
		t.Fatal(err)
	}
	var st Status
	r.waitFor("the divergence", func() bool {
		st = r.settled()
		return st.Fidelity["team/live"].State == FidelityFalse
	})
	if d := st.Fidelity["team/live"].Divergence; !strings.Contains(d, "${GREETING}") || !strings.Contains(d, "data.message") {
		t.Fatalf("the divergence %q does not name the token and the field", d)
	}
	r.submit(upsert("alice", "team-a", "other", "2")) // a live event of the blocked epoch
	r.settled()
	if got := len(r.log()); got != 1 || r.hasFile(cmPath("team-a", "other")) {
		t.Fatalf("writes went through a blocked target: %v", subjects(r.log()))
	}

	// The substitution stops (or the folder is fixed) and the watch is re-established.
	if err := r.worker.Resync(r.ctx(), greetingSnapshot("${GREETING}", "3")); err != nil {
		t.Fatal(err)
	}
	r.waitFor("writes to resume", func() bool { return r.hasFile(cmPath("team-a", "other")) })
	if st := r.settled(); st.Fidelity["team/live"].State != FidelityTrue {
		t.Fatalf("after a clean snapshot RenderMatchesLive = %+v, want True", st.Fidelity["team/live"])
	}
	if got := r.file(cmPath("team-a", "other")); !strings.Contains(got, "key: 3") {
		t.Fatalf("the clean snapshot's state was not written:\n%s", got)
	}
}
