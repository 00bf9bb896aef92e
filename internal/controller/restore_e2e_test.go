//go:build e2e

package controller_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// restoreManifest holds a namespace's worth of kinds, as people write them (no server
// defaults), with values a YAML 1.1 reader takes for other types. NS is the namespace.
const restoreManifest = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.restore.example.com
  labels: {restore-test: "yes"}
spec:
  group: restore.example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer, default: 3}
                color: {type: string}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: restore-test-reader
  labels: {restore-test: "yes"}
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: NS
  labels: {mirror: "yes"}
  annotations: {mode: "0o17"}
data: {beta: "no", level: "on", date: "2026-01-01", octal: "012", float: "1e3", none: "~"}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
  labels: {app: web, mirror: "yes"}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      serviceAccountName: default
      containers:
        - name: web
          image: nginx:1.27
          ports:
            - containerPort: 80
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: NS}
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
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: NS}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: backup
              image: busybox:1.37
              args: [sh, -c, "echo on"]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec:
  selector: {app: web}
  ports:
    - port: 80
---
apiVersion: v1
kind: Service
metadata: {name: web-nodeport, namespace: NS}
spec:
  type: NodePort
  selector: {app: web}
  ports:
    - port: 80
      nodePort: 31080
---
apiVersion: v1
kind: Service
metadata: {name: web-lb, namespace: NS}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports:
    - port: 443
      targetPort: 8443
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: NS}
spec:
  clusterIP: None
  selector: {app: db}
  ports:
    - port: 5432
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: NS}
spec:
  rules:
    - host: web.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service: {name: web, port: {number: 80}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-ingress, namespace: NS}
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: NS}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: NS}
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch, namespace: NS}
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 2Gi}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: NS}
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
  - kind: ServiceAccount
    name: default
    namespace: NS
---
apiVersion: restore.example.com/v1
kind: Gadget
metadata: {name: g1, namespace: NS}
spec: {color: red}
`

// restoredObject names one object of the manifest by its resource.
type restoredObject struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// The first thing anyone does with a backup: a namespace of sixteen kinds mirrored through
// one ClusterWatchRule, the mirrored folder applied with the real kubectl into a second,
// empty control plane. Every object there equals its original but for what a server owns
// (uid, resourceVersion, timestamps, allocated IPs and ports); the documents hold none of
// the values the server filled in (docs/sanitize.md#minimal-documents).
func TestAMirroredNamespaceRestoresIntoAnEmptyClusterWithKubectl(t *testing.T) {
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl is built with the control plane (hack/tools/control-plane.sh): %v", err)
	}
	selected := map[string]string{"restore-test": "yes", "mirror": "yes"}
	ns := newNamespace(t, selected)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	create(t, target(ns, "backup", "origin", "backup", v1.PruneOnEvent))
	objects := createManifest(t, cp.Config, strings.ReplaceAll(restoreManifest, "NS", ns))
	objects = append(objects, restoredObject{gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, name: ns})
	create(t, &v1.ClusterWatchRule{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: v1.ClusterWatchRuleSpec{
		TargetRef: v1.NamespacedObjectReference{Namespace: ns, Name: "backup"},
		Rules: []v1.ClusterResourceRule{
			{ResourceRule: v1.ResourceRule{APIGroups: []string{"", "apiextensions.k8s.io", "rbac.authorization.k8s.io"},
				Resources:     []string{"namespaces", "customresourcedefinitions", "clusterroles"},
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"restore-test": "yes"}}}},
			{ResourceRule: v1.ResourceRule{APIGroups: []string{"*"}, Resources: []string{
				"configmaps", "deployments", "statefulsets", "cronjobs", "services", "ingresses", "networkpolicies",
				"horizontalpodautoscalers", "poddisruptionbudgets", "persistentvolumeclaims", "roles", "rolebindings", "gadgets"}},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: selected}},
		},
	}})

	documents := func() []string {
		var out []string
		for _, f := range r.files() {
			if strings.HasPrefix(f, "backup/") && strings.HasSuffix(f, ".yaml") {
				out = append(out, f)
			}
		}
		return out
	}
	waitFor(t, "every object in Git", func() bool { return len(documents()) == len(objects) })

	// The documents hold none of the values the server filled in.
	for file, absent := range map[string][]string{
		"backup/" + ns + "/apps/deployments/web.yaml": {"progressDeadlineSeconds", "revisionHistoryLimit", "strategy", "protocol",
			"imagePullPolicy", "terminationMessagePath", "terminationMessagePolicy", "dnsPolicy", "restartPolicy",
			"schedulerName", "securityContext", "terminationGracePeriodSeconds", "serviceAccount:", "replicas"},
		"backup/" + ns + "/restore.example.com/gadgets/g1.yaml": {"size"},
		"backup/" + ns + "/core/services/web-nodeport.yaml":     {"sessionAffinity", "externalTrafficPolicy"},
		"backup/" + ns + "/core/services/web-lb.yaml":           {"nodePort", "sessionAffinity"}, // allocated, not chosen
		// The part of its spec the update path may not change keeps its values
		// (docs/sanitize.md#minimal-documents); the template loses its defaults.
		"backup/" + ns + "/apps/statefulsets/db.yaml": {"status", "phase", "imagePullPolicy", "updateStrategy"},
		"backup/" + ns + "/core/services/db.yaml":     {"sessionAffinity", "protocol"},
	} {
		doc := r.file(file)
		if doc == "" {
			t.Fatalf("%s is not in Git; files: %v", file, documents())
		}
		for _, field := range absent {
			if strings.Contains(doc, field) {
				t.Errorf("%s holds %q, a value the server filled in:\n%s", file, field, doc)
			}
		}
	}

	// A node port a person chose stays, in the document and so in the restored cluster.
	if doc := r.file("backup/" + ns + "/core/services/web-nodeport.yaml"); !strings.Contains(doc, "nodePort: 31080") {
		t.Errorf("the chosen node port is not in the document:\n%s", doc)
	}

	// Restore: the real kubectl, a second control plane with nothing in it.
	dir := t.TempDir()
	for _, f := range documents() {
		path := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(r.file(f)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	empty := testenv.NewControlPlane(t)
	kubeconfig, err := empty.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Cluster-scoped objects first (the namespace, the CRD), as a restore does.
	run("apply", "--recursive", "-f", filepath.Join(dir, "backup", "_cluster"))
	run("wait", "--for=condition=established", "--timeout=2m", "crd/gadgets.restore.example.com")
	run("apply", "--recursive", "-f", filepath.Join(dir, "backup", ns))

	original, restored := dynamicFor(t, cp.Config), dynamicFor(t, empty.Config)
	for _, o := range objects {
		want, got := getObject(t, original, o), getObject(t, restored, o)
		if !sameJSON(t, sanitize.Clean(want), sanitize.Clean(got)) {
			w, _ := sanitize.Document(sanitize.Clean(want))
			g, _ := sanitize.Document(sanitize.Clean(got))
			t.Errorf("%s %s restored differently:\n%s--- original\n%s", o.gvr.Resource, o.name, g, w)
		}
	}
}

// createManifest creates every object of manifest (deleted when the test ends) and names
// them; a custom resource waits for its definition to be served.
func createManifest(t *testing.T, cfg *rest.Config, manifest string) []restoredObject {
	t.Helper()
	dyn := dynamicFor(t, cfg)
	var out []restoredObject
	for _, doc := range strings.Split(manifest, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		mapping, err := restMapping(u.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		o := restoredObject{gvr: mapping, namespace: u.GetNamespace(), name: u.GetName()}
		res := resourceOf(dyn, o)
		waitFor(t, "the type of "+u.GetName()+" to be served", func() bool {
			_, err := res.Create(ctxOf(t), u, metav1.CreateOptions{})
			return err == nil
		})
		t.Cleanup(func() { _ = res.Delete(context.Background(), o.name, metav1.DeleteOptions{}) })
		out = append(out, o)
	}
	return out
}

// restMapping names the resource of the manifest's kinds.
func restMapping(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	resource := map[string]string{
		"CustomResourceDefinition": "customresourcedefinitions", "ClusterRole": "clusterroles", "ConfigMap": "configmaps",
		"Deployment": "deployments", "StatefulSet": "statefulsets", "CronJob": "cronjobs", "Service": "services",
		"Ingress": "ingresses", "NetworkPolicy": "networkpolicies", "HorizontalPodAutoscaler": "horizontalpodautoscalers",
		"PodDisruptionBudget": "poddisruptionbudgets", "PersistentVolumeClaim": "persistentvolumeclaims",
		"Role": "roles", "RoleBinding": "rolebindings", "Gadget": "gadgets",
	}[gvk.Kind]
	if resource == "" {
		return schema.GroupVersionResource{}, &unknownKindError{gvk.Kind}
	}
	return gvk.GroupVersion().WithResource(resource), nil
}

type unknownKindError struct{ kind string }

func (e *unknownKindError) Error() string { return "the manifest holds an unknown kind " + e.kind }

func dynamicFor(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

func resourceOf(dyn dynamic.Interface, o restoredObject) dynamic.ResourceInterface {
	if o.namespace != "" {
		return dyn.Resource(o.gvr).Namespace(o.namespace)
	}
	return dyn.Resource(o.gvr)
}

func getObject(t *testing.T, dyn dynamic.Interface, o restoredObject) map[string]any {
	t.Helper()
	u, err := resourceOf(dyn, o).Get(ctxOf(t), o.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s: %v", o.gvr.Resource, o.name, err)
	}
	return u.Object
}

func sameJSON(t *testing.T, a, b map[string]any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
