//go:build e2e

package sanitize

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var statefulSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}

// headlessService has clusterIP None, which the dry-run update keeps from the existing object.
const headlessService = `apiVersion: v1
kind: Service
metadata: {name: minimal-headless, namespace: sanitize-defaults}
spec:
  clusterIP: None
  selector: {app: db}
  ports:
    - port: 5432
`

const statefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: minimal, namespace: sanitize-defaults}
spec:
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: db
          image: postgres:17
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests: {storage: 1Gi}
`

// restoreNamespace is the empty namespace a minimal document is created in again, as a
// restore with kubectl apply would.
const restoreNamespace = "sanitize-restore"

// An object made through the API has no document in Git: the one written for it leaves out
// every value the server fills in by itself, and still gives the live object back when it
// is created anew (docs/sanitize.md#minimal-documents).
func TestANewObjectIsWrittenWithoutTheValuesTheServerFillsIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	if err := sharedCP.CreateNamespace(ctx, restoreNamespace, nil); err != nil {
		t.Fatal(err)
	}
	d := NewDefaulter(sharedDynamic)
	rename := func(source string) string { return strings.ReplaceAll(source, "name: api", "name: minimal") }
	for _, c := range []struct {
		name   string
		gvr    schema.GroupVersionResource
		source string
		absent [][]any // server-filled values the document must not hold
	}{
		{"Deployment", deploymentsGVR, rename(sourceDeployment), [][]any{
			p("spec", "progressDeadlineSeconds"), p("spec", "revisionHistoryLimit"), p("spec", "strategy"),
			p("spec", "replicas"), // 1, the default, although the person wrote it
			p("spec", "template", "spec", "dnsPolicy"), p("spec", "template", "spec", "restartPolicy"),
			p("spec", "template", "spec", "schedulerName"), p("spec", "template", "spec", "securityContext"),
			p("spec", "template", "spec", "terminationGracePeriodSeconds"),
			p("spec", "template", "spec", "containers", 0, "imagePullPolicy"),
			p("spec", "template", "spec", "containers", 0, "terminationMessagePath"),
			p("spec", "template", "spec", "containers", 0, "terminationMessagePolicy"),
			p("spec", "template", "spec", "containers", 0, "resources"),
			p("spec", "template", "spec", "containers", 0, "ports", 0, "protocol"),
		}},
		{"NodePort Service", servicesGVR, rename(sourceNodePortService), [][]any{
			p("spec", "ports", 0, "nodePort"), p("spec", "ports", 0, "protocol"), p("spec", "ports", 0, "targetPort"),
			p("spec", "sessionAffinity"), p("spec", "externalTrafficPolicy"), p("spec", "internalTrafficPolicy"),
			p("spec", "ipFamilyPolicy"),
		}},
		{"headless Service", servicesGVR, headlessService, [][]any{
			p("spec", "sessionAffinity"), p("spec", "ports", 0, "protocol"), p("spec", "type"),
		}},
		// The update path refuses to change most of a StatefulSet's spec: the values of that
		// part stay; its template and the policies it may change lose their defaults.
		{"StatefulSet", statefulSetsGVR, statefulSet, [][]any{
			p("spec", "updateStrategy"), p("spec", "persistentVolumeClaimRetentionPolicy"),
			p("spec", "template", "spec", "dnsPolicy"), p("spec", "template", "spec", "schedulerName"),
			p("spec", "template", "spec", "containers", 0, "imagePullPolicy"),
			p("spec", "volumeClaimTemplates", 0, "status"),
		}},
		{"custom resource with a schema default", gitTargetsGVR, strings.ReplaceAll(sourceGitTarget, "name: mirror", "name: minimal"),
			[][]any{p("spec", "prune", "mode")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			liveObj, liveDoc := createLive(ctx, t, c.gvr, c.source)
			live := parsed(t, liveDoc)
			for _, path := range c.absent {
				if _, ok := lookup(live, path...); !ok && path[len(path)-1] != "nodePort" && path[len(path)-1] != "status" {
					t.Fatalf("live lacks %v: the test proves nothing:\n%s", path, liveDoc)
				}
			}
			doc, err := d.MinimalDocument(ctx, c.gvr, liveDoc, watchedShape(t, liveObj))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("the document written:\n%s", doc)
			got := parsed(t, doc)
			for _, path := range c.absent {
				if v, ok := lookup(got, path...); ok {
					t.Errorf("the document holds %v: %v\n%s", path, v, doc)
				}
			}
			restoresEqual(ctx, t, c.gvr, got, live)
		})
	}
}

// A ConfigMap holds nothing the server fills in: its document is the live one, byte for
// byte, and a second object of its shape costs no question.
func TestANewConfigMapIsWrittenAsItIs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	d := NewDefaulter(sharedDynamic)
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, name := range []string{"settings", "other-settings"} {
		liveObj, liveDoc := createLive(ctx, t, gvr, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+name+
			"\n  namespace: sanitize-defaults\ndata:\n  mode: \"on\"\n  empty: \"\"\n")
		doc, err := d.MinimalDocument(ctx, gvr, liveDoc, watchedShape(t, liveObj))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(doc, liveDoc) {
			t.Fatalf("the document differs from the live one:\n%s--- live\n%s", doc, liveDoc)
		}
	}
}

// restoresEqual creates doc in restoreNamespace and compares what the server made of it
// with live, but for the namespace.
func restoresEqual(ctx context.Context, t *testing.T, gvr schema.GroupVersionResource, doc, live map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: copyValue(doc).(map[string]any)}
	u.SetNamespace(restoreNamespace)
	created := createWhenServed(ctx, t, resourceFor(sharedDynamic, gvr, restoreNamespace), u)
	restored := Clean(created.Object)
	want := &unstructured.Unstructured{Object: copyValue(live).(map[string]any)}
	want.SetNamespace(restoreNamespace)
	if !equalValues(restored, Clean(want.Object)) {
		t.Errorf("restored from the document:\n%s--- live\n%s", mustDocument(t, restored), mustDocument(t, Clean(want.Object)))
	}
}

// A node port a person chose is kept by the update path like an allocated one, so it could
// pass for a default: it stays in the document (docs/sanitize.md#allocated-node-ports).
func TestANewServicesChosenNodePortIsWritten(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	defer cancel()
	source := strings.ReplaceAll(sourceNodePortService, "name: api-nodeport", "name: chosen-port") + "      nodePort: 30999\n"
	_, liveDoc := createLive(ctx, t, servicesGVR, source)
	doc, err := NewDefaulter(sharedDynamic).MinimalDocument(ctx, servicesGVR, liveDoc, Shape{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := lookup(parsed(t, doc), "spec", "ports", 0, "nodePort"); fmt.Sprint(v) != "30999" {
		t.Fatalf("the chosen node port is not in the document:\n%s", doc)
	}
	if _, ok := lookup(parsed(t, doc), "spec", "sessionAffinity"); ok {
		t.Fatalf("the document holds server defaults:\n%s", doc)
	}
}
