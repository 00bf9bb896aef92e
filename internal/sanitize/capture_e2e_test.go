//go:build e2e

package sanitize

import (
	"bytes"
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

const fixtureNamespace = "sanitize-fixtures"

// generous bounds every wait: the test machine may be heavily loaded.
const generous = 2 * time.Minute

var fixtureGVRs = map[string]schema.GroupVersionResource{
	"crd":              {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
	"widget":           {Group: "fixtures.sanitize.test", Version: "v1", Resource: "widgets"},
	"deployment":       {Group: "apps", Version: "v1", Resource: "deployments"},
	"service":          {Version: "v1", Resource: "services"},
	"service-nodeport": {Version: "v1", Resource: "services"},
	"service-headless": {Version: "v1", Resource: "services"},
	"configmap":        {Version: "v1", Resource: "configmaps"},
	"secret":           {Version: "v1", Resource: "secrets"},
	"pvc":              {Version: "v1", Resource: "persistentvolumeclaims"},
	"role":             {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"clusterrole":      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"rolebinding":      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// fixtureStatus is written through the status subresource after create, so that the
// captured objects carry a status as controllers would leave it.
var fixtureStatus = map[string]map[string]any{
	"deployment": {
		"observedGeneration": int64(1), "replicas": int64(2), "readyReplicas": int64(2),
		"availableReplicas": int64(2), "updatedReplicas": int64(2),
		"conditions": []any{map[string]any{
			"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
			"message":            "Deployment has minimum availability.",
			"lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z",
		}},
	},
	"widget": {"phase": "Ready", "observedGeneration": int64(1)},
}

func resourceFor(client dynamic.Interface, gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return client.Resource(gvr)
	}
	return client.Resource(gvr).Namespace(ns)
}

// TestCapturedFixturesSanitizeLikeTheLiveObjects creates every fixture in a real API server.
// With -update it writes the live objects (and the dry-run of the Deployment and Service
// sources) to testdata; without it, it proves that the live objects of today's server give
// the same documents as the captured ones.
func TestCapturedFixturesSanitizeLikeTheLiveObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*generous)
	defer cancel()
	if err := sharedCP.CreateNamespace(ctx, fixtureNamespace, nil); err != nil {
		t.Fatal(err)
	}
	defaulter := NewDefaulter(sharedDynamic)
	var deploymentUID string
	for _, name := range fixtures {
		gvr := fixtureGVRs[name]
		u := &unstructured.Unstructured{Object: readSource(t, name)}
		res := resourceFor(sharedDynamic, gvr, u.GetNamespace())
		if name == "configmap" {
			// An owner reference needs the owner's uid, known only now.
			u.SetOwnerReferences([]metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: types.UID(deploymentUID),
			}})
		}
		created := createWhenServed(ctx, t, res, u)
		if name == "crd" {
			waitEstablished(ctx, t, res, u.GetName())
		}
		if name == "deployment" {
			deploymentUID = string(created.GetUID())
		}
		if status, ok := fixtureStatus[name]; ok {
			created.Object["status"] = status
			if _, err := res.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("%s: update status: %v", name, err)
			}
		}
		live, err := res.Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: get: %v", name, err)
		}
		var defaulted map[string]any
		if contains(dryRunFixtures, name) {
			if defaulted, err = defaulter.Defaulted(ctx, gvr, readSource(t, name)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if *update {
			writeJSON(t, name+".live.json", live.Object)
			if defaulted != nil {
				writeJSON(t, name+".defaulted.json", defaulted)
			}
			continue
		}
		capturedLive := readLive(t, name)
		if name == "service-nodeport" {
			// The node port is allocated anew on every run; everything else must match.
			port, _ := lookup(capturedLive, "spec", "ports", 0, "nodePort")
			if err := unstructured.SetNestedField(live.Object["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any), port, "nodePort"); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := objectBytes(t, live), mustDocument(t, Clean(capturedLive)); !bytes.Equal(got, want) {
			t.Errorf("%s: the live object sanitizes differently from the captured one:\n--- live\n%s--- captured\n%s", name, got, want)
		}
		if defaulted != nil {
			if got, want := mustDocument(t, defaulted), mustDocument(t, readJSON(t, name+".defaulted.json")); !bytes.Equal(got, want) {
				t.Errorf("%s: the dry-run differs from the captured one:\n--- live\n%s--- captured\n%s", name, got, want)
			}
		}
	}
}

func objectBytes(t *testing.T, u *unstructured.Unstructured) []byte {
	t.Helper()
	out, err := Object(u)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// createWhenServed creates u, retrying while its type is not served yet (a custom resource
// right after its definition became established).
func createWhenServed(ctx context.Context, t *testing.T, res dynamic.ResourceInterface, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	var created *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, generous, true, func(ctx context.Context) (bool, error) {
		var err error
		created, err = res.Create(ctx, u, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return created
}

func waitEstablished(ctx context.Context, t *testing.T, res dynamic.ResourceInterface, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, generous, true, func(ctx context.Context) (bool, error) {
		crd, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("custom resource definition %s never became established: %v", name, err)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
