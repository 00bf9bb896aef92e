//go:build e2e

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// The journal of deletes fits its Secret at its bound with the longest names Kubernetes
// allows, comes back as it was written, keeps only the entries of GitTargets that exist,
// and a Secret that does not parse is reported and replaced, never a crash.
func TestTheJournalOfDeletesSurvivesItsSecret(t *testing.T) {
	cp := testenv.NewControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const ns = "state"
	if err := cp.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNamespace(ctx, "team-a", nil); err != nil {
		t.Fatal(err)
	}
	live := &v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "live"},
		Spec: v1.GitTargetSpec{GitProviderRef: v1.GitProviderReference{Name: "origin"}, Branch: "main", Path: "live"}}
	if err := cp.Client.Create(ctx, live); err != nil {
		t.Fatal(err)
	}

	// A full journal: deletes of the live target with names of the longest kind, and one
	// of a GitTarget that no longer exists.
	long := strings.Repeat("n", 253)
	var entries []worker.JournalEntry
	for i := range worker.MaxJournalEntries - 1 {
		name := fmt.Sprintf("%s-%05d", long[:240], i)
		entries = append(entries, worker.JournalEntry{Seq: uint64(i + 1), Target: "team-a/live",
			Author: worker.Author{Name: "system:serviceaccount:" + strings.Repeat("x", 63) + ":deployer", Email: "deployer@example.com"},
			Type:   layout.TypeInfo{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true},
			ID:     layout.Identity{Group: "example.com", Kind: "Widget", Namespace: strings.Repeat("s", 63), Name: name}})
	}
	entries = append(entries, worker.JournalEntry{Seq: uint64(len(entries) + 1), Target: "team-a/gone", Type: configMapType(),
		ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "x"}})

	first := worker.NewJournal()
	first.Load(entries, nil)
	store := &JournalStore{Journal: first, Reader: cp.Client, Writer: cp.Client, Namespace: ns, Log: logr.Discard()}
	if err := store.Save(ctx); err != nil {
		t.Fatalf("save %d entries: %v", len(entries), err)
	}

	next := worker.NewJournal()
	reload := &JournalStore{Journal: next, Reader: cp.Client, Writer: cp.Client, Namespace: ns, Log: logr.Discard()}
	got, exists, err := reload.loadRetrying(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next.Load(got, exists)
	back, _ := next.Entries()
	if len(back) != len(entries)-1 {
		t.Fatalf("%d entries back, want %d (the deleted GitTarget's left out)", len(back), len(entries)-1)
	}
	if back[0] != entries[0] || back[len(back)-1] != entries[len(entries)-2] {
		t.Fatalf("entries changed on the way: %+v … %+v", back[0], back[len(back)-1])
	}

	// A Secret edited into something else: reported, the journal starts empty, and the
	// next write replaces it.
	var cm corev1.Secret
	if err := cp.Client.Get(ctx, keyOf(ns, journalSecret), &cm); err != nil {
		t.Fatal(err)
	}
	t.Logf("a full journal of the longest names: %d bytes in its Secret", len(cm.Data[journalField]))
	cm.Data[journalField] = []byte("not gzip")
	if err := cp.Client.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	broken, err := reload.load(ctx)
	if err != nil || len(broken) != 0 {
		t.Fatalf("a broken journal loaded as %d entries, %v; want none, no error", len(broken), err)
	}
	first.Load(nil, nil) // a change: the next save writes
	if err := store.Save(ctx); err != nil {
		// The foreign edit moved the Secret past the version the store wrote: that write
		// conflicts, and the retry (Run's backoff) reads it again and replaces it.
		if !apierrors.IsConflict(errors.Unwrap(err)) {
			t.Fatalf("first write after a foreign edit: %v, want a conflict or success", err)
		}
		if err := store.Save(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if again, err := reload.load(ctx); err != nil || len(again) != len(entries) {
		t.Fatalf("after the next write %d entries load (%v), want %d", len(again), err, len(entries))
	}
}

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

func configMapType() layout.TypeInfo {
	return layout.TypeInfo{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
}
