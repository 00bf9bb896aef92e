package watch

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// statusWait bounds how long Status waits for one stream.
const statusWait = 5 * time.Second

// Wanted is one stream an owner (a GitTarget) wants, with the subscriber that receives it.
// Fingerprint summarizes the subscriber's filter and destination: when it changes, the
// subscriber is replaced and receives a fresh snapshot from the stream's cache.
type Wanted struct {
	Key         StreamKey
	Resource    Resource
	Subscriber  Subscriber
	Fingerprint string
}

// KeyStatus is the state of one stream an owner subscribes to.
type KeyStatus struct {
	Key StreamKey
	StreamStatus
}

// Hub runs the streams that owners want: one per StreamKey, shared by every owner that
// wants it (docs/watch-streams.md#one-stream-per-type-and-scope), stopped when the last
// owner lets go. Its mutex guards only its maps and is never held while waiting on a
// stream: subscribing, unsubscribing and stopping happen after the decision is recorded.
// Calls for one owner must not run concurrently (the reconciler of one GitTarget never
// does).
type Hub struct {
	ctx     context.Context
	client  dynamic.Interface
	render  func(*unstructured.Unstructured) (sanitize.Rendered, error)
	log     logr.Logger
	metrics *metrics.Metrics
	// sensitive names the types whose streams keep no plaintext.
	sensitive SensitiveTypes

	mu      sync.Mutex
	streams map[StreamKey]*Stream
	owners  map[string]map[StreamKey]string // owner -> key -> fingerprint
}

// NewHub returns a hub whose streams read through client, sanitize with render, keep no
// plaintext of the sensitive types, record into m (may be nil) and end with ctx.
func NewHub(ctx context.Context, client dynamic.Interface, render func(*unstructured.Unstructured) (sanitize.Rendered, error), sensitive SensitiveTypes, m *metrics.Metrics, log logr.Logger) *Hub {
	return &Hub{ctx: ctx, client: client, render: render, log: log, metrics: m, sensitive: sensitive,
		streams: map[StreamKey]*Stream{}, owners: map[string]map[StreamKey]string{}}
}

// Changed returns the keys of wanted whose subscription is new or differs from what the
// owner has now: those receive a snapshot once Set installs them.
func (h *Hub) Changed(owner string, wanted []Wanted) []StreamKey {
	h.mu.Lock()
	defer h.mu.Unlock()
	var keys []StreamKey
	for _, w := range wanted {
		if fp, ok := h.owners[owner][w.Key]; !ok || fp != w.Fingerprint {
			keys = append(keys, w.Key)
		}
	}
	return keys
}

// subscription is one Subscribe to carry out.
type subscription struct {
	stream *Stream
	sub    Subscriber
}

// Set makes the owner's subscriptions exactly wanted: new or changed ones are subscribed
// (starting their streams when needed), ones no longer wanted are dropped (stopping
// streams nobody wants any more). Set with nil releases the owner.
func (h *Hub) Set(owner string, wanted []Wanted) {
	subscribe, unsubscribe, stop := h.plan(owner, wanted)
	for _, s := range unsubscribe {
		s.Unsubscribe(owner)
	}
	for _, s := range stop {
		s.Stop()
	}
	for _, s := range subscribe {
		s.stream.Subscribe(owner, s.sub)
	}
}

// plan records the owner's new subscriptions and returns the work Set does unlocked.
func (h *Hub) plan(owner string, wanted []Wanted) (subscribe []subscription, unsubscribe, stop []*Stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	had := h.owners[owner]
	now := map[StreamKey]string{}
	for _, w := range wanted {
		now[w.Key] = w.Fingerprint
		if fp, ok := had[w.Key]; ok && fp == w.Fingerprint {
			continue
		}
		subscribe = append(subscribe, subscription{stream: h.stream(w.Key, w.Resource), sub: w.Subscriber})
	}
	if len(now) == 0 {
		delete(h.owners, owner)
	} else {
		h.owners[owner] = now
	}
	for key := range had {
		if _, keep := now[key]; keep {
			continue
		}
		s, ok := h.streams[key]
		if !ok {
			continue
		}
		if h.wanted(key) {
			unsubscribe = append(unsubscribe, s)
			continue
		}
		delete(h.streams, key)
		stop = append(stop, s)
	}
	return subscribe, unsubscribe, stop
}

// wanted reports whether some owner subscribes to key. Called with mu held.
func (h *Hub) wanted(key StreamKey) bool {
	for _, keys := range h.owners {
		if _, ok := keys[key]; ok {
			return true
		}
	}
	return false
}

// Status reports the streams of one owner, sorted by key. A stream too busy to answer
// within a few seconds is reported as not synced.
func (h *Hub) Status(owner string) []KeyStatus {
	h.mu.Lock()
	var streams []KeyStatus
	handles := map[StreamKey]*Stream{}
	for key := range h.owners[owner] {
		streams = append(streams, KeyStatus{Key: key})
		handles[key] = h.streams[key]
	}
	h.mu.Unlock()
	for i := range streams {
		if s := handles[streams[i].Key]; s != nil {
			streams[i].StreamStatus, _ = s.StatusWithin(statusWait)
		}
	}
	sort.Slice(streams, func(i, j int) bool { return streams[i].Key.String() < streams[j].Key.String() })
	return streams
}

// Len is the number of running streams.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams)
}

// stream returns the running stream of key, starting it when there is none. Called with
// mu held; starting does not wait.
func (h *Hub) stream(key StreamKey, res Resource) *Stream {
	if s, ok := h.streams[key]; ok {
		select {
		case <-s.Done():
		default:
			return s
		}
	}
	s := StartStream(h.ctx, StreamConfig{Key: key, Resource: res, Client: h.client, Render: h.render,
		Sensitive: h.sensitive.Has(res), Metrics: h.metrics, Log: h.log.WithValues("stream", key.String())})
	h.streams[key] = s
	return s
}
