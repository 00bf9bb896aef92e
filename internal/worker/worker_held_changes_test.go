package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// While RenderMatchesLive is False the target's changes are held, not dropped: a delete
// and an edit that arrive during the block land once the folder is fixed in Git, without
// a new snapshot (docs/branch-worker.md#held-changes).
func TestChangesHeldByRenderMatchesLiveLandWhenTheFolderIsFixed(t *testing.T) {
	greeting := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\n  namespace: team-a\ndata:\n  message: ${GREETING}\n"
	r := rigOn(t, map[string]string{
		"clusters/dev/team-a/core/configmaps/greeting.yaml": greeting,
		cmPath("team-a", "doomed"):                          string(configMap("team-a", "doomed", "1")),
	})
	snap := greetingSnapshot("hello", "1")
	snap.Objects = append(snap.Objects, SnapshotObject{ID: upsert("", "team-a", "doomed", "1").ID, Doc: configMap("team-a", "doomed", "1")})
	if err := r.worker.Resync(r.ctx(), snap); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the divergence", func() bool { return r.settled().Fidelity["team/live"].State == FidelityFalse })

	// Live changes of the blocked epoch: an OnEvent delete and an edit.
	r.submit(deleteEvent("alice", "team-a", "doomed"))
	r.submit(upsert("alice", "team-a", "other", "2"))
	st := r.settled()
	if !r.hasFile(cmPath("team-a", "doomed")) || r.hasFile(cmPath("team-a", "other")) {
		t.Fatalf("a blocked target was written: %v", subjects(r.log()))
	}
	if st.Held["team/live"] == "" {
		t.Fatalf("the held changes are not reported: %+v", st)
	}

	// Someone fixes the folder: the variable becomes the value live holds.
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{
		Files: map[string]string{"clusters/dev/team-a/core/configmaps/greeting.yaml": strings.Replace(greeting, "${GREETING}", "hello", 1)},
	}); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the held delete and edit to land", func() bool {
		return !r.hasFile(cmPath("team-a", "doomed")) && r.hasFile(cmPath("team-a", "other"))
	})
	st = r.settled()
	if st.Fidelity["team/live"].State != FidelityTrue || st.Held["team/live"] != "" {
		t.Fatalf("after the fix RenderMatchesLive = %+v, held %q", st.Fidelity["team/live"], st.Held["team/live"])
	}
	if got := r.file(cmPath("team-a", "other")); !strings.Contains(got, "key: 2") {
		t.Fatalf("the held edit was not written:\n%s", got)
	}
}

// A change the render refuses for its object alone is kept on the target and tried again
// once its folder changes, with no new event or snapshot of the object.
func TestAChangeTheRenderRefusedLandsOnceItsFolderChanges(t *testing.T) {
	r, _ := overlayRig(t)
	// The overlay's labels and annotations would change the new object: refused.
	r.submit(liveEvent(configMapType, "bare", configMap("team-a", "bare", "x")))
	r.waitFor("the refusal", func() bool { return r.settled().Boundary["team/live"] != "" })
	const bare = "clusters/dev/bare-configmap.yaml"
	if r.hasFile(bare) {
		t.Fatal("a refused new object was written")
	}

	// The overlay drops its labels and annotations: the render would now take the object.
	kz := overlayRepo["clusters/dev/kustomization.yaml"]
	kz = strings.Replace(kz, "labels:\n- pairs:\n    env: dev\n    owner: platform\ncommonAnnotations:\n  team: a\n", "", 1)
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{"clusters/dev/kustomization.yaml": kz}}); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the refused change to land", func() bool { return r.hasFile(bare) })
	if got := r.file("clusters/dev/kustomization.yaml"); !strings.Contains(got, "- bare-configmap.yaml") {
		t.Fatalf("the kustomization does not list the new file:\n%s", got)
	}
}
