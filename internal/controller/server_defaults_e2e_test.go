//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

const sourceDeployment = `# The web frontend, as its team wrote it.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.27 # pinned
          ports:
            - containerPort: 80
`

const sourceService = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: NS
spec:
  selector:
    app: web
  ports:
    - port: 80
      targetPort: 80
`

func TestServerDefaultsAreNotEditsAndAnImageEditChangesOneLine(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	deployPath, servicePath := "apps/web/deployment.yaml", "apps/web/service.yaml"
	deploySrc := strings.ReplaceAll(sourceDeployment, "NS", ns)
	serviceSrc := strings.ReplaceAll(sourceService, "NS", ns)
	if _, err := r.server.PushForeign(r.name, "main", testenv.ForeignChange{
		Files: map[string]string{deployPath: deploySrc, servicePath: serviceSrc}, Message: "the team's sources",
	}); err != nil {
		t.Fatal(err)
	}
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "apps", v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "app", "live",
		v1.ResourceRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}},
		v1.ResourceRule{APIGroups: []string{""}, Resources: []string{"services", "configmaps"}}))
	targetReady(t, gt)

	// Applied as written: the server fills in strategy, imagePullPolicy, protocol, type,
	// clusterIP ... none of which is an edit.
	create(t, fromYAML(t, deploySrc))
	create(t, fromYAML(t, serviceSrc))
	create(t, configMap(ns, "marker", map[string]string{"k": "v"}))
	waitFor(t, "the marker ConfigMap", func() bool { return r.has("apps/" + ns + "/core/configmaps/marker.yaml") })
	if got := r.file(deployPath); got != deploySrc {
		t.Fatalf("the Deployment's source changed although only server defaults differ:\n%s", got)
	}
	if got := r.file(servicePath); got != serviceSrc {
		t.Fatalf("the Service's source changed although only server defaults differ:\n%s", got)
	}
	if files := r.files(); strings.Contains(strings.Join(files, " "), "deployments/web.yaml") {
		t.Fatalf("a second document of the Deployment was placed: %q", files)
	}

	// An image edit changes exactly the image line.
	dep := fromYAML(t, deploySrc)
	if err := cp.Client.Get(ctxOf(t), keyOf(ns, "web"), dep); err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "nginx:1.28"
	if err := unstructured.SetNestedSlice(dep.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Update(ctxOf(t), dep); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new image in Git", func() bool { return strings.Contains(r.file(deployPath), "nginx:1.28") })
	changed := changedLines(deploySrc, r.file(deployPath))
	if len(changed) != 1 || !strings.Contains(changed[0], "image: nginx:1.28") {
		t.Fatalf("the image edit changed these lines: %q", changed)
	}
}

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// changedLines returns the lines of after that differ from before, line by line (the
// documents keep their line count when one value changes).
func changedLines(before, after string) []string {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		return append([]string{"line count changed"}, a...)
	}
	var out []string
	for i := range a {
		if a[i] != b[i] {
			out = append(out, a[i])
		}
	}
	return out
}
