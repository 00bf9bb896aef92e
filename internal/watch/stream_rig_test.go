//go:build e2e

package watch

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// The rig of the stream tests: ConfigMaps in a namespace, a sanitizer that keeps name,
// namespace, labels and data, and a subscriber that records what it receives.

var streamConfigMaps = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}

// streamSanitize renders apiVersion, kind, name, namespace, labels and data: annotations,
// resourceVersion, managedFields and the rest of the bookkeeping are dropped.
func streamSanitize(u *unstructured.Unstructured) (sanitize.Rendered, error) {
	meta := map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}
	if l := u.GetLabels(); len(l) > 0 {
		meta["labels"] = l
	}
	doc := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": meta}
	if data, ok := u.Object["data"]; ok {
		doc["data"] = data
	}
	b, err := yaml.Marshal(doc)
	return sanitize.Rendered{Doc: b}, err
}

// streamEvent is one delivery a recorder saw: a snapshot or a change.
type streamEvent struct {
	Snapshot []string // names in the snapshot, nil for a change
	Change   ChangeType
	Name     string
	Data     string // data.v of the document
}

func (e streamEvent) String() string {
	if e.Snapshot != nil {
		return fmt.Sprintf("SNAPSHOT%v", e.Snapshot)
	}
	return fmt.Sprintf("%s %s=%s", e.Change, e.Name, e.Data)
}

// streamRecorder is a Subscriber that keeps every delivery and the state they add up to.
type streamRecorder struct {
	mu     sync.Mutex
	events []streamEvent
	// state is name → data.v after applying the deliveries: a snapshot replaces it.
	state map[string]string
}

func newStreamRecorder() *streamRecorder { return &streamRecorder{state: map[string]string{}} }

func docData(doc []byte) string {
	var d struct {
		Data map[string]string `yaml:"data"`
	}
	_ = yaml.Unmarshal(doc, &d)
	return d.Data["v"]
}

func (r *streamRecorder) Snapshot(_ context.Context, res Resource, objs []Object) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := []string{}
	r.state = map[string]string{}
	for _, o := range objs {
		names = append(names, o.ID.Name)
		r.state[o.ID.Name] = docData(o.Doc)
	}
	r.events = append(r.events, streamEvent{Snapshot: names})
	return nil
}

func (r *streamRecorder) Change(_ context.Context, res Resource, ch Change) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := streamEvent{Change: ch.Type, Name: ch.Object.ID.Name, Data: docData(ch.Object.Doc)}
	r.events = append(r.events, e)
	if ch.Type == Deleted {
		delete(r.state, e.Name)
	} else {
		r.state[e.Name] = e.Data
	}
	return nil
}

func (r *streamRecorder) Events() []streamEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *streamRecorder) State() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.state)
}

// Snapshots returns the snapshots received, in order.
func (r *streamRecorder) Snapshots() [][]string {
	var out [][]string
	for _, e := range r.Events() {
		if e.Snapshot != nil {
			out = append(out, e.Snapshot)
		}
	}
	return out
}

// Since returns the deliveries after the first n.
func (r *streamRecorder) Since(n int) []streamEvent {
	ev := r.Events()
	if n > len(ev) {
		return nil
	}
	return ev[n:]
}

// waitUntil polls cond until it holds, failing the test after a generous deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startConfigMapStream starts a stream on the ConfigMaps of ns through cfg; it stops when
// the test ends.
func startConfigMapStream(t *testing.T, cfg *rest.Config, ns string, tune func(*StreamConfig)) *Stream {
	t.Helper()
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc := StreamConfig{
		Key:      StreamKey{GVR: streamConfigMaps.GVR, Namespace: ns},
		Resource: streamConfigMaps,
		Client:   client,
		Render:   streamSanitize,
		Log:      testr.New(t),
		RetryMin: 50 * time.Millisecond,
		RetryMax: time.Second,
	}
	if tune != nil {
		tune(&sc)
	}
	s := StartStream(context.Background(), sc)
	t.Cleanup(s.Stop)
	return s
}

// cmClient creates, edits and deletes the ConfigMaps of one namespace, failing the test on
// error.
type cmClient struct {
	t  *testing.T
	c  kubernetes.Interface
	ns string
}

func newCMClient(t *testing.T, cfg *rest.Config, ns string) *cmClient {
	return &cmClient{t: t, c: kubernetes.NewForConfigOrDie(cfg), ns: ns}
}

func (c *cmClient) create(name, v string) *corev1.ConfigMap {
	c.t.Helper()
	cm, err := c.c.CoreV1().ConfigMaps(c.ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"v": v},
	}, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return cm
}

func (c *cmClient) edit(name string, f func(*corev1.ConfigMap)) *corev1.ConfigMap {
	c.t.Helper()
	cm, err := c.c.CoreV1().ConfigMaps(c.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	f(cm)
	cm, err = c.c.CoreV1().ConfigMaps(c.ns).Update(context.Background(), cm, metav1.UpdateOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return cm
}

func (c *cmClient) set(name, v string) *corev1.ConfigMap {
	c.t.Helper()
	return c.edit(name, func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"v": v} })
}

func (c *cmClient) delete(name string) {
	c.t.Helper()
	if err := c.c.CoreV1().ConfigMaps(c.ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

// live returns name → data.v of the ConfigMaps that exist.
func (c *cmClient) live() map[string]string {
	c.t.Helper()
	l, err := c.c.CoreV1().ConfigMaps(c.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	for _, cm := range l.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		out[cm.Name] = cm.Data["v"]
	}
	return out
}

// createMany creates n ConfigMaps of about size bytes of random (incompressible) data each.
func (c *cmClient) createMany(n, size int) {
	c.t.Helper()
	buf := make([]byte, size*3/4)
	for i := range n {
		_, _ = rand.Read(buf)
		c.create(fmt.Sprintf("bulk-%04d", i), base64.StdEncoding.EncodeToString(buf))
	}
}

// newNamespace creates a namespace named base plus a random suffix (tests may run more
// than once against one control plane).
func newNamespace(t *testing.T, cfg *rest.Config, base string) string {
	t.Helper()
	name := strings.ToLower(base) + "-" + rand.Text()[:6]
	name = strings.ToLower(name)
	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func changesOf(evs []streamEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.String())
	}
	return out
}
