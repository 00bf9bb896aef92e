//go:build e2e

package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// cp is the control plane the tests of this package share (the CRDs of config/crd are
// installed by testenv).
var cp *testenv.ControlPlane

func TestMain(m *testing.M) {
	// Flux's and Argo CD's CRDs too: the dry-run-only policy is tested on the objects the
	// two-way loop annotates.
	flux, err := testenv.FluxCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	argocd, err := testenv.ArgoCDCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cp, err = testenv.StartControlPlane(flux, argocd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// decodeYAML splits a stream of YAML documents into objects, skipping empty documents
// (a template that renders nothing, or only comments).
func decodeYAML(t testing.TB, name string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("%s: %v", name, err)
		}
		if s := string(bytes.TrimSpace(raw)); s == "" || s == "null" || s == "{}" {
			continue
		}
		// Unstructured's own decoding keeps integers as int64, as the API machinery does.
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		objs = append(objs, o)
	}
}

// applyDryRun sends every object as a server-side apply with dryRun=All: the API server
// runs defaulting, validation (OpenAPI, CEL) and admission, and persists nothing. The
// namespaces the objects live in are created for real first, as an install would.
func applyDryRun(t testing.TB, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" {
			ensureNamespace(t, ctx, ns)
		}
	}
	for _, o := range objs {
		err := cp.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
			client.DryRunAll, client.FieldOwner("gitops-reverser-install-test"), client.ForceOwnership)
		if err != nil {
			t.Errorf("apply %s %s/%s (dry-run): %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

func ensureNamespace(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	err := cp.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// find returns the one object of kind whose name ends with suffix.
func find(t testing.TB, objs []*unstructured.Unstructured, kind, suffix string) *unstructured.Unstructured {
	t.Helper()
	var found *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasSuffix(o.GetName(), suffix) {
			if found != nil {
				t.Fatalf("two %s objects end with %q: %s, %s", kind, suffix, found.GetName(), o.GetName())
			}
			found = o
		}
	}
	if found == nil {
		t.Fatalf("no %s whose name ends with %q among %s", kind, suffix, names(objs))
	}
	return found
}

func names(objs []*unstructured.Unstructured) string {
	var s []string
	for _, o := range objs {
		s = append(s, o.GetKind()+"/"+o.GetName())
	}
	return strings.Join(s, ", ")
}

// countKinds counts the objects of each kind.
func countKinds(objs []*unstructured.Unstructured) map[string]int {
	n := map[string]int{}
	for _, o := range objs {
		n[o.GetKind()]++
	}
	return n
}

// containerArgs returns the arguments of the Deployment's first container.
func containerArgs(t testing.TB, dep *unstructured.Unstructured) []string {
	t.Helper()
	containers, _, err := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		t.Fatalf("deployment %s has no containers: %v", dep.GetName(), err)
	}
	args, _, err := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	if err != nil {
		t.Fatal(err)
	}
	return args
}

func hasArg(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// rules returns an RBAC role's rules in a form that compares with reflect.DeepEqual.
func rules(t testing.TB, role *unstructured.Unstructured) []any {
	t.Helper()
	r, _, err := unstructured.NestedSlice(role.Object, "rules")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
