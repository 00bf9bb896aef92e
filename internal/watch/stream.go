package watch

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// Defaults of StreamConfig.
const (
	DefaultRetryMin = 500 * time.Millisecond
	DefaultRetryMax = 30 * time.Second
	DefaultPageSize = 500
)

// A watch that ends without any event sooner than this after it started counts as a failed
// attempt for back-off, so that a server closing watches at once is not hammered.
const shortWatch = time.Second

// StreamConfig describes one watch stream.
type StreamConfig struct {
	Key      StreamKey
	Resource Resource
	Client   dynamic.Interface
	// Render sanitizes a live object into its document and the shape of its content; on a
	// failure (logged) the object keeps its place without a document, so that no sweep
	// deletes it.
	Render func(*unstructured.Unstructured) (sanitize.Rendered, error)
	// Sensitive streams (Secrets) keep no document in memory after delivering it: the
	// cache holds a digest to tell no-op updates, a new subscriber makes the stream take a
	// fresh snapshot, and every delivered document is zeroed once all subscribers had it.
	Sensitive bool
	// Metrics records snapshots and changes; nil records nothing.
	Metrics *metrics.Metrics
	Log     logr.Logger
	// RetryMin and RetryMax bound the exponential back-off between failed attempts
	// (defaults DefaultRetryMin and DefaultRetryMax).
	RetryMin, RetryMax time.Duration
	// PageSize is the Limit of each page when the stream lists instead of using a
	// watch-list (default DefaultPageSize).
	PageSize int64
}

// StreamStatus reports what a stream is doing.
type StreamStatus struct {
	// Synced is true when the stream holds a complete snapshot and its watch is open.
	Synced bool
	// Snapshots counts the complete snapshots taken (each delivered to every subscriber).
	Snapshots int
	// WatchList is true when the last snapshot came from a watch-list (sendInitialEvents),
	// false when it came from LIST + WATCH.
	WatchList bool
	// LastError is the error of the last failed attempt, "" if none failed yet.
	LastError string
	// Objects is the number of objects in the cache.
	Objects int
	// ResourceVersion is the position the stream resumes from.
	ResourceVersion string
	// Failures counts failed attempts (snapshots, watches that could not start or ended in an
	// error). A snapshot that failed was never delivered.
	Failures int
	// Expired counts the times the server answered 410 Gone / Expired for the stream's
	// position, each followed by a new snapshot.
	Expired int
}

// Stream is one watch of one resource type in one scope. One goroutine owns all of its
// state; the methods talk to it by messages.
type Stream struct {
	msgs   chan func(*streamState)
	done   chan struct{}
	cancel context.CancelFunc
}

// StartStream starts a stream. It runs until ctx ends or Stop is called.
func StartStream(ctx context.Context, cfg StreamConfig) *Stream {
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.RetryMax < cfg.RetryMin {
		cfg.RetryMax = max(DefaultRetryMax, cfg.RetryMin)
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	cfg.Log = cfg.Log.WithValues("stream", cfg.Key.String())
	ctx, cancel := context.WithCancel(ctx)
	s := &Stream{msgs: make(chan func(*streamState)), done: make(chan struct{}), cancel: cancel}
	st := &streamState{
		cfg:   cfg,
		msgs:  s.msgs,
		subs:  map[string]Subscriber{},
		cache: map[layout.Identity]Object{},
		retry: newBackoff(cfg),
	}
	go func() {
		defer close(s.done)
		st.run(ctx)
	}()
	return s
}

// Subscribe adds a subscriber, replacing one with the same id. If the stream already holds a
// complete snapshot, the subscriber receives it from the cache at once; otherwise it receives
// the first snapshot the stream completes.
func (s *Stream) Subscribe(id string, sub Subscriber) {
	s.send(func(st *streamState) {
		st.subs[id] = sub
		switch {
		case st.haveSnapshot && st.cfg.Sensitive:
			st.haveSnapshot, st.restart = false, st.watching
		case st.haveSnapshot:
			st.deliverSnapshot(id, sub)
		}
	})
}

// Unsubscribe removes a subscriber; it receives nothing after Unsubscribe returns.
func (s *Stream) Unsubscribe(id string) {
	s.send(func(st *streamState) { delete(st.subs, id) })
}

// Status reports the stream's state. After the stream ended it reports a zero status.
func (s *Stream) Status() StreamStatus {
	reply := make(chan StreamStatus, 1)
	if !s.send(func(st *streamState) { reply <- st.status() }) {
		return StreamStatus{}
	}
	return <-reply
}

// StatusWithin is Status for callers that must not wait on a stream whose delivery is
// blocked (a subscriber's worker busy with a slow push): ok is false after d.
func (s *Stream) StatusWithin(d time.Duration) (st StreamStatus, ok bool) {
	reply := make(chan StreamStatus, 1)
	go func() { reply <- s.Status() }()
	select {
	case st := <-reply:
		return st, true
	case <-time.After(d):
		return StreamStatus{LastError: "busy delivering"}, false
	}
}

// Stop ends the stream and waits until its goroutine has returned.
func (s *Stream) Stop() {
	s.cancel()
	<-s.done
}

// Done is closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// send runs f on the stream goroutine and waits until it ran; false if the stream ended.
func (s *Stream) send(f func(*streamState)) bool {
	ran := make(chan struct{})
	select {
	case s.msgs <- func(st *streamState) { f(st); close(ran) }:
	case <-s.done:
		return false
	}
	select {
	case <-ran:
		return true
	case <-s.done:
		// f may have run on the way out; either way the stream is gone.
		return false
	}
}

// streamState is owned by the stream goroutine.
type streamState struct {
	cfg  StreamConfig
	msgs chan func(*streamState)
	ctx  context.Context

	subs map[string]Subscriber

	// cache holds the sanitized objects of the current listing, valid when haveSnapshot.
	cache map[layout.Identity]Object
	// labels are the label sets of the objects, shared.
	labels labelSets
	// rv is the resourceVersion to resume the watch from.
	rv           string
	haveSnapshot bool
	watching     bool
	// fallback is set once the server refused a watch-list: this stream lists from then on.
	fallback bool
	// restart asks the watch loop to end the watch and take a new snapshot (a sensitive
	// stream's new subscriber).
	restart bool

	snapshots     int
	lastWatchList bool
	lastError     string
	failures      int
	expired       int

	retry wait.Backoff
}

func (st *streamState) status() StreamStatus {
	return StreamStatus{
		Synced:          st.haveSnapshot && st.watching,
		Snapshots:       st.snapshots,
		WatchList:       st.lastWatchList,
		LastError:       st.lastError,
		Objects:         len(st.cache),
		ResourceVersion: st.rv,
		Failures:        st.failures,
		Expired:         st.expired,
	}
}

func (st *streamState) resource() dynamic.ResourceInterface {
	r := st.cfg.Client.Resource(st.cfg.Key.GVR)
	if st.cfg.Key.Namespace != "" {
		return r.Namespace(st.cfg.Key.Namespace)
	}
	return r
}

// run is the stream goroutine: take a snapshot when there is none, then follow the watch,
// resuming or re-snapshotting as the rules in docs/watch-streams.md say.
func (st *streamState) run(ctx context.Context) {
	st.ctx = ctx
	for ctx.Err() == nil {
		var w apiwatch.Interface
		if !st.haveSnapshot {
			var err error
			w, err = st.snapshot(ctx)
			if err != nil {
				st.failed(err)
				continue
			}
		}
		if w == nil {
			var err error
			opts := metav1.ListOptions{ResourceVersion: st.rv, AllowWatchBookmarks: true}
			w, err = await(st, func() (apiwatch.Interface, error) { return st.resource().Watch(ctx, opts) })
			if err != nil {
				if !isTransport(err) {
					// The server answered: the position is gone (410) or unusable.
					st.haveSnapshot = false
				}
				st.failed(err)
				continue
			}
		}
		st.follow(ctx, w)
	}
}

// failed records a failed attempt and waits for the back-off, still answering messages.
// A 410 re-snapshots at once: it is the server's normal answer to an old position.
func (st *streamState) failed(err error) {
	if st.ctx.Err() != nil {
		return
	}
	st.watching = false
	st.lastError = err.Error()
	if isExpired(err) {
		st.expired++
		st.haveSnapshot = false
		st.cfg.Log.Info("position expired; taking a new snapshot", "resourceVersion", st.rv, "error", err.Error())
		return
	}
	st.failures++
	d := st.retry.Step()
	st.cfg.Log.Info("watch attempt failed; retrying", "error", err.Error(), "after", d.String(), "snapshot", st.haveSnapshot)
	st.wait(d)
}

// succeeded resets the back-off.
func (st *streamState) succeeded() { st.retry = newBackoff(st.cfg) }

// newBackoff is the wait between failed attempts: RetryMin doubling up to RetryMax.
func newBackoff(cfg StreamConfig) wait.Backoff {
	return wait.Backoff{Duration: min(cfg.RetryMin, cfg.RetryMax), Factor: 2, Cap: cfg.RetryMax, Steps: math.MaxInt32}
}

// wait sleeps for d, answering messages meanwhile.
func (st *streamState) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-st.ctx.Done():
			return
		case f := <-st.msgs:
			f(st)
		case <-t.C:
			return
		}
	}
}

func (st *streamState) deliverSnapshot(id string, sub Subscriber) {
	objs := slices.SortedFunc(maps.Values(st.cache), func(a, b Object) int { return compareIdentity(a.ID, b.ID) })
	if err := sub.Snapshot(st.ctx, st.cfg.Resource, objs); err != nil {
		st.cfg.Log.Error(err, "subscriber refused a snapshot", "subscriber", id)
	}
}

func (st *streamState) deliverChange(ch Change) {
	st.cfg.Metrics.EventReceived(st.cfg.Key.GVR.Group, st.cfg.Key.GVR.Resource, ch.Type.String())
	for _, id := range slices.Sorted(maps.Keys(st.subs)) {
		if err := st.subs[id].Change(st.ctx, st.cfg.Resource, ch); err != nil {
			st.cfg.Log.Error(err, "subscriber refused a change", "subscriber", id, "change", ch.Type.String(), "object", ch.Object.ID.String())
		}
	}
}

// follow reads a watch until it closes or fails, applying every event to the cache.
func (st *streamState) follow(ctx context.Context, w apiwatch.Interface) {
	defer w.Stop()
	st.watching = true
	started := time.Now()
	events := 0
	for {
		select {
		case <-ctx.Done():
			return
		case f := <-st.msgs:
			f(st)
			if st.restart {
				st.restart, st.watching = false, false
				return
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				st.watching = false
				if events == 0 && time.Since(started) < shortWatch {
					st.failed(errors.New("watch closed at once"))
				}
				// A closed watch resumes from st.rv.
				return
			}
			events++
			if err := st.apply(ev); err != nil {
				st.haveSnapshot = false
				st.failed(err)
				return
			}
			st.succeeded()
		}
	}
}

// apply applies one watch event after the snapshot. An error ends the watch and forces a
// new snapshot.
func (st *streamState) apply(ev apiwatch.Event) error {
	if ev.Type == apiwatch.Error {
		return apierrors.FromObject(ev.Object)
	}
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected %s object %T", ev.Type, ev.Object)
	}
	switch ev.Type {
	case apiwatch.Bookmark:
		st.rv = u.GetResourceVersion()
	case apiwatch.Added, apiwatch.Modified:
		st.rv = u.GetResourceVersion()
		obj, ok := st.object(u)
		if !ok {
			return nil
		}
		old, had := st.cache[obj.ID]
		cached := obj
		if st.cfg.Sensitive && obj.Doc != nil {
			sum := sha256.Sum256(obj.Doc)
			cached.Doc = sum[:]
		}
		st.cache[obj.ID] = cached
		if obj.Doc == nil || had && bytes.Equal(old.Doc, cached.Doc) && maps.Equal(old.Labels, obj.Labels) && old.TrackingID == obj.TrackingID {
			if st.cfg.Sensitive {
				clear(obj.Doc)
			}
			return nil
		}
		ch := Change{Type: Created, Object: obj}
		if had {
			if st.cfg.Sensitive {
				old.Doc = nil
			}
			ch.Type, ch.Previous = Updated, &old
		}
		st.deliverChange(ch)
		if st.cfg.Sensitive {
			clear(obj.Doc)
		}
	case apiwatch.Deleted:
		st.rv = u.GetResourceVersion()
		id := st.identity(u)
		last, had := st.cache[id]
		delete(st.cache, id)
		if !had {
			// Never delivered (its sanitizing failed); the receiver may still hold a
			// document from an older snapshot, so tell it anyway.
			last = Object{ID: id, UID: string(u.GetUID()), Labels: st.labels.of(u), ResourceVersion: u.GetResourceVersion(), TrackingID: u.GetAnnotations()[TrackingAnnotation]}
		} else {
			last.ResourceVersion = u.GetResourceVersion()
		}
		if st.cfg.Sensitive {
			last.Doc = nil
		}
		st.deliverChange(Change{Type: Deleted, Object: last})
	}
	return nil
}

func (st *streamState) identity(u *unstructured.Unstructured) layout.Identity {
	return layout.Identity{Group: st.cfg.Key.GVR.Group, Kind: st.cfg.Resource.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// object sanitizes a live object. When sanitizing fails (with a log line) the object keeps
// its place with a nil Doc: snapshots still list it, so that no sweep deletes its document,
// and no change is delivered for it.
func (st *streamState) object(u *unstructured.Unstructured) (Object, bool) {
	id := st.identity(u)
	obj := Object{ID: id, UID: string(u.GetUID()), Labels: st.labels.of(u), ResourceVersion: u.GetResourceVersion(), Managers: lastManagers(u),
		TrackingID: u.GetAnnotations()[TrackingAnnotation]}
	rendered, err := st.cfg.Render(u)
	if err != nil {
		st.cfg.Log.Error(err, "cannot sanitize object; its document is left as it is", "object", id.String(), "resourceVersion", u.GetResourceVersion())
		return obj, true
	}
	obj.Doc, obj.Shape = rendered.Doc, rendered.Shape
	return obj, true
}

// lastManagers returns the managers of the newest managedFields entries (the timestamps
// have a second's resolution: several when they share it).
func lastManagers(u *unstructured.Unstructured) []string {
	var newest time.Time
	var managers []string
	for _, f := range u.GetManagedFields() {
		if f.Time == nil || f.Subresource != "" {
			continue // a status writer did not write what is mirrored
		}
		switch t := f.Time.Time; {
		case t.After(newest):
			newest, managers = t, []string{f.Manager}
		case t.Equal(newest) && !slices.Contains(managers, f.Manager):
			managers = append(managers, f.Manager)
		}
	}
	return managers
}

func compareIdentity(a, b layout.Identity) int {
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// isExpired reports a 410: the position (or a continue token) is older than the server keeps.
func isExpired(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == http.StatusGone
}

// isTransport reports an error that did not come from the API server (connection refused,
// reset, TLS handshake cut): the stream's position is still good.
func isTransport(err error) bool {
	var st apierrors.APIStatus
	return !errors.As(err, &st)
}

// refusesWatchList reports the server's refusal of sendInitialEvents: the WatchList feature
// is off (field Forbidden → 422 Invalid) or the server predates it (400 / 422).
func refusesWatchList(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}
