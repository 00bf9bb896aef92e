//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestConfigMapsCreatedUpdatedAndDeletedShowInGit(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "clusters/dev", v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "cms", "live", configMapsRule()))
	targetReady(t, gt)

	path := "clusters/dev/" + ns + "/core/configmaps/app.yaml"
	create(t, configMap(ns, "app", map[string]string{"color": "blue"}))
	waitFor(t, "the ConfigMap's document", func() bool { return strings.Contains(r.file(path), "color: blue") })
	doc := r.file(path)
	for _, gone := range []string{"uid:", "resourceVersion:", "creationTimestamp:", "managedFields"} {
		if strings.Contains(doc, gone) {
			t.Fatalf("the document holds %s:\n%s", gone, doc)
		}
	}

	var cm corev1.ConfigMap
	if err := cp.Client.Get(ctxOf(t), keyOf(ns, "app"), &cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["color"] = "green"
	if err := cp.Client.Update(ctxOf(t), &cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the update in Git", func() bool { return strings.Contains(r.file(path), "color: green") })

	if err := cp.Client.Delete(ctxOf(t), &cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delete in Git", func() bool { return !r.has(path) })
}

func TestStatusOnlyAndNoOpUpdatesMakeNoCommit(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "apps", v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "deploys", "live", v1.ResourceRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}}))
	targetReady(t, gt)

	dep := deployment(ns, "web", "nginx:1.27")
	create(t, dep)
	path := "apps/" + ns + "/apps/deployments/web.yaml"
	waitFor(t, "the Deployment's document", func() bool { return strings.Contains(r.file(path), "nginx:1.27") })
	before, commits := r.file(path), len(r.log())

	// A status-only update and an update of stripped bookkeeping only.
	dep.Status.ObservedGeneration = 7
	dep.Status.Replicas = 0
	dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "Testing"}}
	if err := cp.Client.Status().Update(ctxOf(t), dep); err != nil {
		t.Fatal(err)
	}
	dep.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"kind":"Deployment"}`}
	if err := cp.Client.Update(ctxOf(t), dep); err != nil {
		t.Fatal(err)
	}
	// A marker change after them proves the stream delivered everything before it.
	create(t, deployment(ns, "marker", "nginx:1.27"))
	waitFor(t, "the marker Deployment", func() bool { return r.has("apps/" + ns + "/apps/deployments/marker.yaml") })
	if after := r.file(path); after != before {
		t.Fatalf("a status-only or bookkeeping-only update changed the document:\n%s\nwas\n%s", after, before)
	}
	log := r.log()
	if len(log) != commits+1 {
		t.Fatalf("%d commits after a status-only and a bookkeeping-only update and one create, want %d: %q", len(log), commits+1, subjects(log))
	}
}

func deployment(ns, name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}
