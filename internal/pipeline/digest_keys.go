package pipeline

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/internal/secrets"
)

// digestKeySecret is the Secret, in the operator's state namespace, holding the key of the
// digests that tell an unchanged Secret without decrypting it (docs/secrets.md).
const (
	digestKeySecret = "gitops-reverser-digest-key"
	digestKeyField  = "key"
)

// DigestKeys loads (or creates, once) the key of sealed Secrets' plaintext digests
// (docs/secrets.md#the-plaintext-digest), shared by every target.
type DigestKeys struct {
	client    client.Client
	namespace string

	mu  sync.Mutex // guards key
	key []byte
	// loads makes concurrent first callers share one read (or creation) of the Secret.
	loads singleflight.Group
}

// Get returns the key, creating its Secret the first time. Concurrent first callers share
// one load; no lock is held across the API calls.
func (d *DigestKeys) Get(ctx context.Context) ([]byte, error) {
	d.mu.Lock()
	key := d.key
	d.mu.Unlock()
	if key != nil {
		return key, nil
	}
	v, err, _ := d.loads.Do(digestKeySecret, func() (any, error) { return d.load(ctx) })
	if err != nil {
		return nil, err
	}
	key = v.([]byte)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.key == nil {
		d.key = key
	}
	return d.key, nil
}

// load reads the key's Secret, creating it when there is none.
func (d *DigestKeys) load(ctx context.Context) ([]byte, error) {
	name := types.NamespacedName{Namespace: d.namespace, Name: digestKeySecret}
	var s corev1.Secret
	err := d.client.Get(ctx, name, &s)
	if apierrors.IsNotFound(err) {
		key, kerr := secrets.NewDigestKey()
		if kerr != nil {
			return nil, kerr
		}
		s = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: d.namespace, Name: digestKeySecret,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "gitops-reverser"}},
			Data: map[string][]byte{digestKeyField: key}}
		err = d.client.Create(ctx, &s)
		if apierrors.IsAlreadyExists(err) { // another replica, or another caller, was first
			err = d.client.Get(ctx, name, &s)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("digest key Secret %s: %w", name, err)
	}
	key := s.Data[digestKeyField]
	if len(key) < secrets.MinDigestKeyLen {
		return nil, fmt.Errorf("digest key Secret %s: key %q is shorter than %d bytes", name, digestKeyField, secrets.MinDigestKeyLen)
	}
	return key, nil
}
