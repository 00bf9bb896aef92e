package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// The journal of deletes (docs/branch-worker.md#restart) is persisted in one ConfigMap of
// the state namespace: loaded once when the operator leads, written (coalesced) when it
// changes, and a last time after every worker stopped. It holds object identities and
// authors, never an object's content.
const (
	journalConfigMap = "gitops-reverser-deletes"
	journalField     = "deletes.json"
	// journalCoalesce gathers the journal's changes into one write.
	journalCoalesce = 250 * time.Millisecond
)

// storedDelete is one entry of the journal as the ConfigMap holds it: a stable form of its
// own, so that the worker's types can change without breaking a journal an older version
// wrote.
type storedDelete struct {
	Seq         uint64 `json:"seq"`
	Target      string `json:"target"`
	AuthorName  string `json:"authorName,omitempty"`
	AuthorEmail string `json:"authorEmail,omitempty"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version"`
	Resource    string `json:"resource"`
	Kind        string `json:"kind"`
	Namespaced  bool   `json:"namespaced,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name"`
}

func storedForm(e worker.JournalEntry) storedDelete {
	return storedDelete{Seq: e.Seq, Target: e.Target, AuthorName: e.Author.Name, AuthorEmail: e.Author.Email,
		Group: e.Type.Group, Version: e.Type.Version, Resource: e.Type.Resource, Kind: e.Type.Kind,
		Namespaced: e.Type.Namespaced, Namespace: e.ID.Namespace, Name: e.ID.Name}
}

func (d storedDelete) entry() worker.JournalEntry {
	return worker.JournalEntry{Seq: d.Seq, Target: d.Target, Author: worker.Author{Name: d.AuthorName, Email: d.AuthorEmail},
		Type: layout.TypeInfo{Group: d.Group, Version: d.Version, Resource: d.Resource, Kind: d.Kind, Namespaced: d.Namespaced},
		ID:   layout.Identity{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}}
}

// JournalStore persists a worker.Journal.
type JournalStore struct {
	Journal *worker.Journal
	// Reader reads the ConfigMap past any cache; Writer creates and updates it.
	Reader    client.Reader
	Writer    client.Client
	Namespace string
	Log       logr.Logger

	saved uint64 // the journal version last written
}

// Run loads the journal, then writes it whenever it changes, until ctx ends. A failing API
// server is retried with backoff; workers plan nothing until the journal is loaded.
func (s *JournalStore) Run(ctx context.Context) {
	entries, err := s.loadRetrying(ctx)
	if err != nil {
		return // ctx ended
	}
	s.Journal.Load(entries)
	retry := storeBackoff()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.Journal.Changed():
		}
		if !sleepCtx(ctx, journalCoalesce) {
			return
		}
		for s.Save(ctx) != nil {
			if !sleepCtx(ctx, retry.Step()) {
				return
			}
		}
		retry = storeBackoff()
	}
}

// Save writes the journal when it changed since the last write. A journal never loaded
// (leadership ended first) is not written: it would replace the persisted one.
func (s *JournalStore) Save(ctx context.Context) error {
	if !s.Journal.Loaded() {
		return nil
	}
	entries, version := s.Journal.Entries()
	if version == s.saved {
		return nil
	}
	stored := make([]storedDelete, len(entries))
	for i, e := range entries {
		stored[i] = storedForm(e)
	}
	data, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("journal of deletes: %w", err)
	}
	name := types.NamespacedName{Namespace: s.Namespace, Name: journalConfigMap}
	var cm corev1.ConfigMap
	err = s.Reader.Get(ctx, name, &cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: journalConfigMap,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "gitops-reverser"}},
			Data: map[string]string{journalField: string(data)}}
		err = s.Writer.Create(ctx, &cm)
	case err == nil:
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[journalField] = string(data)
		err = s.Writer.Update(ctx, &cm) // a conflict is retried with the next Save
	}
	if err != nil {
		s.Log.Error(err, "write the journal of deletes; retrying", "configMap", name.String())
		return fmt.Errorf("journal of deletes ConfigMap %s: %w", name, err)
	}
	s.saved = version
	return nil
}

// loadRetrying reads the persisted entries, retrying with backoff until the API server
// answers or ctx ends.
func (s *JournalStore) loadRetrying(ctx context.Context) ([]worker.JournalEntry, error) {
	retry := storeBackoff()
	for {
		entries, err := s.load(ctx)
		if err == nil {
			return entries, nil
		}
		s.Log.Error(err, "read the journal of deletes; retrying")
		if !sleepCtx(ctx, retry.Step()) {
			return nil, ctx.Err()
		}
	}
}

func (s *JournalStore) load(ctx context.Context) ([]worker.JournalEntry, error) {
	name := types.NamespacedName{Namespace: s.Namespace, Name: journalConfigMap}
	var cm corev1.ConfigMap
	err := s.Reader.Get(ctx, name, &cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal of deletes ConfigMap %s: %w", name, err)
	}
	var stored []storedDelete
	raw := cm.Data[journalField]
	if raw == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(raw), &stored); err != nil {
		// Not ours to repair by guessing: report it, and start with what is recorded from now.
		s.Log.Error(err, "the journal of deletes does not parse; deletes it held are not replayed", "configMap", name.String())
		return nil, nil
	}
	if len(stored) > worker.MaxJournalEntries {
		stored = stored[len(stored)-worker.MaxJournalEntries:]
	}
	entries := make([]worker.JournalEntry, 0, len(stored))
	for _, d := range stored {
		if d.Target == "" || d.Kind == "" || d.Name == "" {
			continue // not an entry this operator wrote
		}
		entries = append(entries, d.entry())
	}
	return entries, nil
}

// storeBackoff is the wait between attempts to reach the API server: 500ms doubling to 30s.
func storeBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Steps: math.MaxInt32, Cap: 30 * time.Second}
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
