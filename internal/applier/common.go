package applier

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// turns holds one turn per applier object: two applies through it at once would wait for
// each other's request.
type turns struct {
	mu sync.Mutex
	m  map[types.NamespacedName]chan struct{}
}

// take waits for key's turn and returns its release.
func (t *turns) take(ctx context.Context, key types.NamespacedName) (func(), error) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[types.NamespacedName]chan struct{}{}
	}
	turn, ok := t.m[key]
	if !ok {
		turn = make(chan struct{}, 1)
		t.m[key] = turn
	}
	t.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// get reads an applier's object; not found and other read errors are *Error. trigger is
// the kind of the trigger that names it, for the message.
func get(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, key types.NamespacedName, trigger string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, obj); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the apply's time is up: its caller says what it waited for
		}
		return nil, readError(gvk, key, "read", trigger, err)
	}
	return obj, nil
}

func readError(gvk schema.GroupVersionKind, key types.NamespacedName, verb, trigger string, err error) error {
	if apierrors.IsNotFound(err) {
		return &Error{Reason: ReasonNotFound, Object: describe(gvk, key), Message: "not found: create it, or name an existing one in the " + trigger}
	}
	return &Error{Reason: ReasonUnreachable, Object: describe(gvk, key), Message: fmt.Sprintf("could not %s it: %v", verb, err)}
}

// token is a request value no earlier request used: the commit and the time.
func token(commit string, now func() time.Time) string {
	if now == nil {
		now = time.Now
	}
	return "gitops-reverser-" + commit[:min(12, len(commit))] + "-" + strconv.FormatInt(now().UnixNano(), 36)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func describe(gvk schema.GroupVersionKind, key types.NamespacedName) string {
	return gvk.Kind + " " + key.String()
}
