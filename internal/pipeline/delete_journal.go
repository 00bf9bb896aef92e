package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// The journal of deletes (docs/branch-worker.md#restart) is persisted in one Secret of
// the state namespace: loaded once when the operator leads, written (coalesced) when it
// changes, and a last time after every worker stopped. It holds object identities and
// authors, never an object's content.
const (
	journalSecret = "gitops-reverser-deletes"
	// journalField holds the entries as gzip-compressed JSON.
	journalField = "deletes.json.gz"
	// journalCoalesce gathers the journal's changes into one write.
	journalCoalesce = 250 * time.Millisecond
	// maxJournalBytes keeps the Secret well inside the API server's 1 MiB object limit:
	// beyond it the oldest entries are left out of the persisted form (and logged).
	maxJournalBytes = 900 << 10
)

// storedDelete is one entry of the journal as the Secret holds it: a stable form of its
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
	// Reader reads the Secret past any cache; Writer creates and updates it.
	Reader    client.Reader
	Writer    client.Client
	Namespace string
	Log       logr.Logger

	saved uint64 // the journal version last written
	// stored is the Secret as the API server last returned it (nil: read it before the
	// next write), so that a write needs no read before it.
	stored *corev1.Secret
}

// Run loads the journal, then writes it whenever it changes, until ctx ends. A failing API
// server is retried with backoff; workers plan nothing until the journal is loaded.
func (s *JournalStore) Run(ctx context.Context) {
	entries, exists, err := s.loadRetrying(ctx)
	if err != nil {
		return // ctx ended
	}
	s.Journal.Load(entries, exists)
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
	data, left, err := encodeJournal(entries)
	if err != nil {
		return fmt.Errorf("journal of deletes: %w", err)
	}
	if left > 0 {
		s.Log.Info("the journal of deletes does not fit its Secret: its oldest entries are not kept across a restart",
			"leftOut", left, "kept", len(entries)-left)
	}
	name := types.NamespacedName{Namespace: s.Namespace, Name: journalSecret}
	if s.stored == nil {
		if s.stored, err = s.read(ctx); err != nil {
			return s.writeFailed(name, err)
		}
	}
	secret := s.stored.DeepCopy()
	secret.Data = map[string][]byte{journalField: data}
	if secret.ResourceVersion == "" {
		secret.ObjectMeta = metav1.ObjectMeta{Namespace: s.Namespace, Name: journalSecret,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "gitops-reverser"}}
		err = s.Writer.Create(ctx, secret)
	} else {
		err = s.Writer.Update(ctx, secret) // a conflict reads it again for the next Save
	}
	if err != nil {
		s.stored = nil
		return s.writeFailed(name, err)
	}
	s.stored, s.saved = secret, version
	return nil
}

// read returns the journal's Secret, or an empty one (no resourceVersion) when there is none.
func (s *JournalStore) read(ctx context.Context) (*corev1.Secret, error) {
	var secret corev1.Secret
	err := s.Reader.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: journalSecret}, &secret)
	if apierrors.IsNotFound(err) {
		return &corev1.Secret{}, nil
	}
	return &secret, err
}

func (s *JournalStore) writeFailed(name types.NamespacedName, err error) error {
	s.Log.Error(err, "write the journal of deletes; retrying", "secret", name.String())
	return fmt.Errorf("journal of deletes Secret %s: %w", name, err)
}

// loadRetrying reads the persisted entries and the GitTargets that exist, retrying with
// backoff until the API server answers or ctx ends.
func (s *JournalStore) loadRetrying(ctx context.Context) ([]worker.JournalEntry, func(string) bool, error) {
	retry := storeBackoff()
	for {
		entries, err := s.load(ctx)
		var exists func(string) bool
		if err == nil {
			exists, err = s.targets(ctx)
		}
		if err == nil {
			return entries, exists, nil
		}
		s.Log.Error(err, "read the journal of deletes; retrying")
		if !sleepCtx(ctx, retry.Step()) {
			return nil, nil, ctx.Err()
		}
	}
}

// targets reports which GitTargets exist: the entries of one deleted while no operator
// ran are dropped at load.
func (s *JournalStore) targets(ctx context.Context) (func(string) bool, error) {
	var list v1.GitTargetList
	if err := s.Reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list GitTargets: %w", err)
	}
	names := make(map[string]bool, len(list.Items))
	for _, t := range list.Items {
		names[t.Namespace+"/"+t.Name] = true
	}
	return func(target string) bool { return names[target] }, nil
}

func (s *JournalStore) load(ctx context.Context) ([]worker.JournalEntry, error) {
	name := types.NamespacedName{Namespace: s.Namespace, Name: journalSecret}
	secret, err := s.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("journal of deletes Secret %s: %w", name, err)
	}
	s.stored = secret // the first write needs no read of its own
	raw := secret.Data[journalField]
	if len(raw) == 0 {
		return nil, nil
	}
	entries, err := decodeJournal(raw)
	if err != nil {
		// Not ours to repair by guessing: report it, and start with what is recorded from now.
		s.Log.Error(err, "the journal of deletes does not parse; the deletes it held are not replayed", "secret", name.String())
		return nil, nil
	}
	return entries, nil
}

// encodeJournal is the persisted form of entries (oldest first): gzip-compressed JSON of
// at most maxJournalBytes, leaving out the oldest entries that do not fit (left).
func encodeJournal(entries []worker.JournalEntry) (data []byte, left int, err error) {
	stored := make([]storedDelete, len(entries))
	for i, e := range entries {
		stored[i] = storedForm(e)
	}
	for {
		data, err = gzipJSON(stored[left:])
		if err != nil || len(data) <= maxJournalBytes || left == len(stored) {
			return data, left, err
		}
		left += max((len(stored)-left)/8, 1)
	}
}

func gzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeJournal reads the persisted form, bounded: at most MaxJournalEntries entries (the
// newest), and a decompressed size of at most maxJournalInflated, so that a Secret
// edited by hand cannot exhaust memory.
func decodeJournal(raw []byte) ([]worker.JournalEntry, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var stored []storedDelete
	if err := json.NewDecoder(io.LimitReader(zr, maxJournalInflated)).Decode(&stored); err != nil {
		return nil, err
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

// maxJournalInflated bounds the decompressed journal: MaxJournalEntries entries of the
// longest names Kubernetes allows fit well inside it.
const maxJournalInflated = 16 << 20

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
