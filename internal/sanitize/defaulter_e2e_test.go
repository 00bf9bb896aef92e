//go:build e2e

package sanitize

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

const defaultsNamespace = "sanitize-defaults"

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	servicesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	gitTargetsGVR  = schema.GroupVersionResource{Group: "gitops-reverser.io", Version: "v1alpha1", Resource: "gittargets"}
)

// A Deployment as a person writes it: no imagePullPolicy, strategy, terminationMessagePath,
// protocol, revisionHistoryLimit, dnsPolicy …
const sourceDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: sanitize-defaults
  labels:
    app: api
spec:
  replicas: 1
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
        - name: api
          image: nginx:1.27
          ports:
            - containerPort: 80
`

// Services without type or protocol; the NodePort one without a nodePort, so one is
// allocated.
const sourceService = `apiVersion: v1
kind: Service
metadata:
  name: api
  namespace: sanitize-defaults
spec:
  selector:
    app: api
  ports:
    - port: 80
      targetPort: 8080
`

const sourceNodePortService = `apiVersion: v1
kind: Service
metadata:
  name: api-nodeport
  namespace: sanitize-defaults
spec:
  type: NodePort
  selector:
    app: api
  ports:
    - name: http
      port: 80
`

// A custom resource: its type refuses an update without a resourceVersion, and its schema
// defaults spec.prune.mode.
const sourceGitTarget = `apiVersion: gitops-reverser.io/v1alpha1
kind: GitTarget
metadata:
  name: mirror
  namespace: sanitize-defaults
spec:
  gitProviderRef:
    name: origin
  branch: main
  path: clusters/test
  prune: {}
`

var defaultsNamespaceOnce = make(chan struct{}, 1)

// inDefaultsNamespace creates the namespace the Defaulter tests share, once.
func inDefaultsNamespace(ctx context.Context, t *testing.T) {
	t.Helper()
	select {
	case defaultsNamespaceOnce <- struct{}{}:
		if err := sharedCP.CreateNamespace(ctx, defaultsNamespace, nil); err != nil {
			t.Fatal(err)
		}
	default:
	}
}

// createLive creates the object of a source document and returns its live document.
func createLive(ctx context.Context, t *testing.T, gvr schema.GroupVersionResource, source string) (*unstructured.Unstructured, []byte) {
	t.Helper()
	inDefaultsNamespace(ctx, t)
	obj, err := Parse([]byte(source))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	res := resourceFor(sharedDynamic, gvr, u.GetNamespace())
	createWhenServed(ctx, t, res, u)
	return liveDocument(ctx, t, gvr, u)
}

func liveDocument(ctx context.Context, t *testing.T, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, []byte) {
	t.Helper()
	live, err := resourceFor(sharedDynamic, gvr, u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return live, objectBytes(t, live)
}

func parsed(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	obj, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// assertMeans fails unless doc means the same as want.
func assertMeans(t *testing.T, doc []byte, want map[string]any) {
	t.Helper()
	if got := parsed(t, doc); !equalValues(got, Clean(want)) {
		t.Errorf("reduced document:\n%s--- want\n%s", doc, mustDocument(t, Clean(want)))
	}
}

func TestReduceDocumentOfADeploymentKeepsOnlyTheEditedImage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	d := NewDefaulter(sharedDynamic)
	source := []byte(sourceDeployment)
	u, liveDoc := createLive(ctx, t, deploymentsGVR, sourceDeployment)
	if equalValues(parsed(t, liveDoc), Clean(parsed(t, source))) {
		t.Fatalf("the server defaulted nothing; the test proves nothing:\n%s", liveDoc)
	}

	reduced, err := d.ReduceDocument(ctx, deploymentsGVR, source, liveDoc)
	if err != nil {
		t.Fatal(err)
	}
	assertMeans(t, reduced, parsed(t, source))

	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"api","image":"nginx:1.28"}]}}}}`)
	if _, err := resourceFor(sharedDynamic, deploymentsGVR, defaultsNamespace).
		Patch(ctx, u.GetName(), types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	_, liveDoc = liveDocument(ctx, t, deploymentsGVR, u)
	reduced, err = d.ReduceDocument(ctx, deploymentsGVR, source, liveDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := parsed(t, []byte(strings.Replace(sourceDeployment, "nginx:1.27", "nginx:1.28", 1)))
	assertMeans(t, reduced, want)
}

func TestReduceDocumentOfServicesWithoutTypeOrProtocolEqualsTheirSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	d := NewDefaulter(sharedDynamic)
	for _, source := range []string{sourceService, sourceNodePortService} {
		_, liveDoc := createLive(ctx, t, servicesGVR, source)
		reduced, err := d.ReduceDocument(ctx, servicesGVR, []byte(source), liveDoc)
		if err != nil {
			t.Fatal(err)
		}
		// The allocated nodePort is kept by the update, so it is not an edit either.
		assertMeans(t, reduced, parsed(t, []byte(source)))
	}
}

func TestReduceDocumentOfACustomResourceRetriesWithItsResourceVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	_, liveDoc := createLive(ctx, t, gitTargetsGVR, sourceGitTarget)
	if !bytes.Contains(liveDoc, []byte("mode: OnEvent")) {
		t.Fatalf("the schema default is missing; the test proves nothing:\n%s", liveDoc)
	}
	reduced, err := NewDefaulter(sharedDynamic).ReduceDocument(ctx, gitTargetsGVR, []byte(sourceGitTarget), liveDoc)
	if err != nil {
		t.Fatal(err)
	}
	assertMeans(t, reduced, parsed(t, []byte(sourceGitTarget)))
}

func TestReduceDocumentAnswersAnUnchangedPairFromItsCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	source := strings.ReplaceAll(sourceDeployment, ": api\n", ": cached\n")
	u, liveDoc := createLive(ctx, t, deploymentsGVR, source)
	d := NewDefaulter(sharedDynamic)
	first, err := d.ReduceDocument(ctx, deploymentsGVR, []byte(source), liveDoc)
	if err != nil {
		t.Fatal(err)
	}
	// With the object gone, only the cache can answer.
	if err := resourceFor(sharedDynamic, deploymentsGVR, defaultsNamespace).Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := d.ReduceDocument(ctx, deploymentsGVR, []byte(source), liveDoc)
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("second answer %q, %v; want the first one from the cache", again, err)
	}
	if _, err := NewDefaulter(sharedDynamic).ReduceDocument(ctx, deploymentsGVR, []byte(source), liveDoc); err == nil {
		t.Fatal("a Defaulter without the cached answer did not ask the server")
	}
}

func TestReduceDocumentReturnsLiveUntouchedWhenItMeansTheSameAsSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	source := []byte("kind: Thing\napiVersion: example.com/v1\nmetadata: {name: a}\nspec: {x: 1}\n")
	live := []byte("apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: a\nspec:\n  x: 1 # same\n")
	// The type does not exist: an answer proves the server was not asked.
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}
	got, err := NewDefaulter(sharedDynamic).ReduceDocument(ctx, gvr, source, live)
	if err != nil || !bytes.Equal(got, live) {
		t.Fatalf("got %q, %v; want the live document untouched", got, err)
	}
}

func TestDefaultedReportsADryRunTheServerRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	source := strings.ReplaceAll(sourceDeployment, ": api\n", ": refused\n")
	createLive(ctx, t, deploymentsGVR, source)
	// The selector of a Deployment is immutable.
	changed := parsed(t, []byte(strings.Replace(source, "app: refused\n  template", "app: other\n  template", 1)))
	_, err := NewDefaulter(sharedDynamic).Defaulted(ctx, deploymentsGVR, changed)
	if !errors.Is(err, ErrDryRunRefused) {
		t.Fatalf("got %v, want ErrDryRunRefused", err)
	}
}
