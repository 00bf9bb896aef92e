//go:build e2e

package watch

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestASensitiveStreamKeepsNoDocumentsAndListsAgainForANewSubscriber(t *testing.T) {
	ns := newNamespace(t, sharedCP.Config, "stream-sensitive")
	cms := newCMClient(t, sharedCP.Config, ns)
	cms.create("a", "a1")
	s := startConfigMapStream(t, sharedCP.Config, ns, func(c *StreamConfig) { c.Sensitive = true })
	first := newStreamRecorder()
	s.Subscribe("first", first)
	waitUntil(t, "the first snapshot", func() bool { return len(first.Snapshots()) == 1 })
	waitUntil(t, "the stream is synced", func() bool { return s.Status().Synced })

	// No cache to serve from: a new subscriber makes the stream list again, for everyone.
	second := newStreamRecorder()
	s.Subscribe("second", second)
	waitUntil(t, "a second listing", func() bool { return len(second.Snapshots()) == 1 && len(first.Snapshots()) == 2 })
	if st := s.Status(); st.Snapshots != 2 {
		t.Fatalf("status %+v, want two snapshots", st)
	}
	if got := second.Snapshots()[0]; !slices.Equal(got, []string{"a"}) {
		t.Fatalf("second snapshot %v", got)
	}

	// No-op updates are still told apart, by digest.
	waitUntil(t, "the stream is synced again", func() bool { return s.Status().Synced })
	cms.edit("a", func(cm *corev1.ConfigMap) { cm.Annotations = map[string]string{"note": "stripped"} })
	cms.set("a", "a2")
	waitUntil(t, "the real change", func() bool { return len(first.Since(2)) >= 1 })
	if got := changesOf(first.Since(2)); !slices.Equal(got, []string{"UPDATE a=a2"}) {
		t.Fatalf("changes %q, want only the real update", got)
	}
}
