//go:build e2e

package watch

import (
	"context"
	"testing"

	"github.com/go-logr/logr/testr"
	"k8s.io/client-go/dynamic"
)

func TestHubSharesOneStreamPerKeyAndStopsItWithItsLastOwner(t *testing.T) {
	ns := newNamespace(t, sharedCP.Config, "hub")
	client, err := dynamic.NewForConfig(sharedCP.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hub := NewHub(ctx, client, streamSanitize, nil, nil, testr.New(t))
	cms := newCMClient(t, sharedCP.Config, ns)
	cms.create("existing", "1")

	key := StreamKey{GVR: streamConfigMaps.GVR, Namespace: ns}
	a, b := newStreamRecorder(), newStreamRecorder()
	want := func(rec *streamRecorder, fp string) []Wanted {
		return []Wanted{{Key: key, Resource: streamConfigMaps, Subscriber: rec, Fingerprint: fp}}
	}
	if changed := hub.Changed("team/a", want(a, "1")); len(changed) != 1 {
		t.Fatalf("a new subscription is not reported as changed: %v", changed)
	}
	hub.Set("team/a", want(a, "1"))
	hub.Set("team/b", want(b, "1"))
	if hub.Len() != 1 {
		t.Fatalf("%d streams for two owners of one key, want 1", hub.Len())
	}
	waitUntil(t, "both owners' snapshots", func() bool { return len(a.Snapshots()) == 1 && len(b.Snapshots()) == 1 })

	// Setting the same subscription again changes nothing: no second snapshot.
	if changed := hub.Changed("team/a", want(a, "1")); len(changed) != 0 {
		t.Fatalf("an unchanged subscription is reported as changed: %v", changed)
	}
	hub.Set("team/a", want(a, "1"))

	hub.Set("team/a", nil)
	if hub.Len() != 1 {
		t.Fatal("the stream stopped while another owner still wants it")
	}
	cms.create("after", "1")
	waitUntil(t, "b to see the change", func() bool { return b.State()["after"] != "" })
	if len(a.Snapshots()) != 1 {
		t.Fatalf("re-setting an unchanged subscription delivered %d snapshots", len(a.Snapshots()))
	}
	if _, seen := a.State()["after"]; seen {
		t.Fatal("a released owner still receives changes")
	}
	hub.Set("team/b", nil)
	if hub.Len() != 0 {
		t.Fatalf("%d streams after every owner left", hub.Len())
	}
	if st := hub.Status("team/b"); len(st) != 0 {
		t.Fatalf("a released owner still has streams: %+v", st)
	}
}
