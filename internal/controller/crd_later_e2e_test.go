//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
)

func TestACRDCreatedAfterTheRuleIsMirroredWithoutARestart(t *testing.T) {
	ns := newNamespace(t, nil)
	group := ns + ".example.com"
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "crs", v1.PruneOnEvent)
	create(t, gt)
	rule := watchRule(ns, "widgets", "live", v1.ResourceRule{APIGroups: []string{group}, Resources: []string{"widgets"}})
	create(t, rule)
	cond := waitCondition(t, rule, func() []metav1.Condition { return rule.Status.Conditions }, v1.ConditionValidated, metav1.ConditionFalse, controller.ReasonResourcesUnresolved)
	if !strings.Contains(cond.Message, "widgets") {
		t.Fatalf("the unresolved message does not name the resource: %q", cond.Message)
	}

	create(t, widgetCRD(group))
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "sprocket", "namespace": ns},
		"spec":     map[string]any{"size": int64(3)},
	}}
	waitFor(t, "the Widget type to be served", func() bool { return cp.Client.Create(ctxOf(t), widget.DeepCopy()) == nil })
	path := "crs/" + ns + "/" + group + "/widgets/sprocket.yaml"
	waitFor(t, "the Widget's document", func() bool { return strings.Contains(r.file(path), "size: 3") })
	waitCondition(t, rule, func() []metav1.Condition { return rule.Status.Conditions }, v1.ConditionReady, metav1.ConditionTrue, "")
}

func widgetCRD(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}
