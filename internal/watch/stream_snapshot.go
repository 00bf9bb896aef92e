package watch

// How a stream takes its snapshot: a watch-list where the server offers it, else LIST and
// then WATCH from the listed resourceVersion (docs/watch-streams.md#the-snapshot).

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiwatch "k8s.io/apimachinery/pkg/watch"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// snapshot takes a complete, consistent listing and installs it. After a watch-list it
// returns the open watch, positioned just after the listing; after a LIST it returns nil and
// the caller watches from st.rv. On error nothing is installed or delivered.
func (st *streamState) snapshot(ctx context.Context) (apiwatch.Interface, error) {
	if !st.fallback {
		opts := metav1.ListOptions{
			SendInitialEvents:    new(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
		}
		w, err := await(st, func() (apiwatch.Interface, error) { return st.resource().Watch(ctx, opts) })
		if err == nil {
			objs, rv, err := st.collectInitial(ctx, w)
			if err != nil {
				w.Stop()
				return nil, fmt.Errorf("watch-list snapshot: %w", err)
			}
			st.install(objs, rv, true)
			return w, nil
		}
		if !refusesWatchList(err) {
			return nil, fmt.Errorf("start watch-list: %w", err)
		}
		st.fallback = true
		st.cfg.Log.Info("server refuses watch-list (sendInitialEvents); listing instead", "error", err.Error())
	}
	objs, rv, err := st.list(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snapshot: %w", err)
	}
	st.install(objs, rv, false)
	return nil, nil
}

// collectInitial reads the initial events of a watch-list until the bookmark that ends them.
func (st *streamState) collectInitial(ctx context.Context, w apiwatch.Interface) (map[layout.Identity]Object, string, error) {
	objs := map[layout.Identity]Object{}
	for {
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case f := <-st.msgs:
			f(st)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, "", errors.New("watch closed before the initial events ended")
			}
			switch ev.Type {
			case apiwatch.Error:
				return nil, "", apierrors.FromObject(ev.Object)
			case apiwatch.Bookmark:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					return nil, "", fmt.Errorf("unexpected bookmark object %T", ev.Object)
				}
				if u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					return objs, u.GetResourceVersion(), nil
				}
			case apiwatch.Added, apiwatch.Modified:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					return nil, "", fmt.Errorf("unexpected %s object %T", ev.Type, ev.Object)
				}
				if obj, ok := st.object(u); ok {
					objs[obj.ID] = obj
				}
			case apiwatch.Deleted:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					delete(objs, st.identity(u))
				}
			}
		}
	}
}

// list lists every page. An expired continue token (or any error) fails the whole listing.
func (st *streamState) list(ctx context.Context) (map[layout.Identity]Object, string, error) {
	objs := map[layout.Identity]Object{}
	opts := metav1.ListOptions{Limit: st.cfg.PageSize}
	for {
		page, err := await(st, func() (*unstructured.UnstructuredList, error) { return st.resource().List(ctx, opts) })
		if err != nil {
			return nil, "", err
		}
		for i := range page.Items {
			if obj, ok := st.object(&page.Items[i]); ok {
				objs[obj.ID] = obj
			}
		}
		if page.GetContinue() == "" {
			return objs, page.GetResourceVersion(), nil
		}
		opts.Continue = page.GetContinue()
	}
}

// await runs one request to the API server on a helper goroutine and answers messages
// until it returns, so that Status and Subscribe do not wait for client-go's retries. The
// helper touches no stream state; the request ends with the stream's context.
func await[T any](st *streamState, call func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case f := <-st.msgs:
			f(st)
		}
	}
}

// install replaces the cache with a complete snapshot and delivers it to every subscriber.
func (st *streamState) install(objs map[layout.Identity]Object, rv string, watchList bool) {
	st.cache = objs
	st.rv = rv
	st.haveSnapshot = true
	st.snapshots++
	st.lastWatchList = watchList
	st.succeeded()
	st.cfg.Log.V(1).Info("snapshot complete", "objects", len(objs), "resourceVersion", rv, "watchList", watchList)
	st.cfg.Metrics.Snapshot(st.cfg.Key.GVR.Group, st.cfg.Key.GVR.Resource)
	for _, id := range slices.Sorted(maps.Keys(st.subs)) {
		st.deliverSnapshot(id, st.subs[id])
	}
	if st.cfg.Sensitive {
		for id, obj := range st.cache {
			st.cache[id] = forget(obj)
		}
	}
}

// forget replaces a delivered document of a sensitive stream by its digest, zeroing the
// document: only the digest is compared later.
func forget(obj Object) Object {
	if obj.Doc == nil {
		return obj
	}
	sum := sha256.Sum256(obj.Doc)
	clear(obj.Doc)
	obj.Doc = sum[:]
	return obj
}
