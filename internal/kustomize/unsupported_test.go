package kustomize

import (
	"strings"
	"testing"
)

// docs/kustomize.md#unsupported-features: a kustomization using a feature the writer does
// not model refuses the folder by name, before anything is written.
func TestEachUnsupportedFeatureRefusesTheFolderByName(t *testing.T) {
	cases := []struct {
		feature string
		// kustomization is the folder's kustomization; it lists app.yaml.
		kustomization string
	}{
		{"namePrefix", "resources:\n- app.yaml\nnamePrefix: dev-\n"},
		{"nameSuffix", "resources:\n- app.yaml\nnameSuffix: -v2\n"},
		{"configMapGenerator", "resources:\n- app.yaml\nconfigMapGenerator:\n- name: generated\n  literals:\n  - a=b\n"},
		{"secretGenerator", "resources:\n- app.yaml\nsecretGenerator:\n- name: generated\n  literals:\n  - a=b\n"},
		{"generatorOptions", "resources:\n- app.yaml\ngeneratorOptions:\n  disableNameSuffixHash: true\n"},
		{"components", "resources:\n- app.yaml\ncomponents:\n- ../component\n"},
		{"replacements", "resources:\n- app.yaml\nreplacements:\n- path: replacement.yaml\n"},
		{"vars", "resources:\n- app.yaml\nvars:\n- name: HOST\n  objref:\n    kind: ConfigMap\n    name: settings\n    apiVersion: v1\n"},
		{"helmCharts", "helmCharts:\n- name: podinfo\n  repo: https://stefanprodan.github.io/podinfo\n  version: 6.0.0\n"},
		{"transformers", "resources:\n- app.yaml\ntransformers:\n- transformer.yaml\n"},
		{"generators", "resources:\n- app.yaml\ngenerators:\n- generator.yaml\n"},
		{"validators", "resources:\n- app.yaml\nvalidators:\n- validator.yaml\n"},
		{"patchesStrategicMerge", "resources:\n- app.yaml\npatchesStrategicMerge:\n- patch.yaml\n"},
		{"patchesJson6902", "resources:\n- app.yaml\npatchesJson6902:\n- target:\n    kind: ConfigMap\n    name: settings\n  path: patch.json\n"},
		{"inline patches", "resources:\n- app.yaml\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: settings\n    data:\n      color: red\n"},
		{"targeted patches", "resources:\n- app.yaml\npatches:\n- path: patch.yaml\n  target:\n    kind: ConfigMap\n"},
		{"remote base", "resources:\n- app.yaml\n- github.com/org/repo//deploy/base?ref=v1\n"},
		{"remote base", "resources:\n- https://example.com/manifests/app.yaml\n"},
		{"bases", "bases:\n- ../base\n"},
		{"configurations", "resources:\n- app.yaml\nconfigurations:\n- config.yaml\n"},
		{"openapi", "resources:\n- app.yaml\nopenapi:\n  path: schema.json\n"},
		{"crds", "resources:\n- app.yaml\ncrds:\n- crd.json\n"},
		{"buildMetadata", "resources:\n- app.yaml\nbuildMetadata: [originAnnotations]\n"},
		{"sortByMagic", "resources:\n- app.yaml\nsortByMagic: true\n"},
		{"Component", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- app.yaml\n"},
		{"images tagSuffix", "resources:\n- app.yaml\nimages:\n- name: nginx\n  tagSuffix: -alpine\n"},
		{"malformed images", "resources:\n- app.yaml\nimages:\n- newTag: \"1\"\n"},
		{"malformed replicas", "resources:\n- app.yaml\nreplicas:\n- count: 2\n"},
		{"unparseable", "resources: [app.yaml\n"},
	}
	for _, tc := range cases {
		t.Run(tc.feature, func(t *testing.T) {
			repo := map[string]string{
				"app/kustomization.yaml": tc.kustomization,
				"app/app.yaml":           settingsConfigMap,
				"app/patch.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: red\n",
			}
			u := unsupportedOf(t, repo, "app")
			if u.Feature != tc.feature {
				t.Fatalf("refused feature %q (%v), want %q", u.Feature, u, tc.feature)
			}
			if u.Path != "app/kustomization.yaml" {
				t.Errorf("the refusal names %q, want the kustomization", u.Path)
			}
			if !strings.Contains(u.Error(), tc.feature) || !strings.Contains(u.Reason(), tc.feature) {
				t.Errorf("the message %q does not name %q", u.Error(), tc.feature)
			}
		})
	}
}

func TestAnUnsupportedFeatureOfAReadOnlyBaseRefusesTheFolder(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\n")
	repo["base/kustomization.yaml"] = "resources:\n- deployment.yaml\nnamePrefix: base-\n"
	u := unsupportedOf(t, repo, "overlays/prod")
	if u.Feature != "namePrefix" || u.Path != "base/kustomization.yaml" {
		t.Fatalf("refusal %v, want namePrefix of base/kustomization.yaml", u)
	}
}

func TestAnUnsupportedFeatureOfAnIncludedKustomizationInTheFolderRefusesTheFolder(t *testing.T) {
	repo := map[string]string{
		"env/base/kustomization.yaml": "resources:\n- settings.yaml\nconfigMapGenerator:\n- name: gen\n  literals: [a=b]\n",
		"env/base/settings.yaml":      settingsConfigMap,
		"env/a/kustomization.yaml":    "resources:\n- ../base\n",
	}
	u := unsupportedOf(t, repo, "env")
	if u.Feature != "configMapGenerator" || u.Path != "env/base/kustomization.yaml" {
		t.Fatalf("refusal %v, want configMapGenerator of env/base/kustomization.yaml", u)
	}
}

func TestResourcesTheFolderCannotReadRefuseIt(t *testing.T) {
	cases := []struct {
		feature string
		repo    map[string]string
	}{
		{"resources outside the repository", map[string]string{
			"app/kustomization.yaml": "resources:\n- ../../elsewhere\n",
		}},
		{"missing resource", map[string]string{
			"app/kustomization.yaml": "resources:\n- missing.yaml\n",
		}},
		{"missing patch", map[string]string{
			"app/kustomization.yaml": "resources:\n- app.yaml\npatches:\n- path: missing-patch.yaml\n",
			"app/app.yaml":           settingsConfigMap,
		}},
		{"patches outside the repository", map[string]string{
			"app/kustomization.yaml": "resources:\n- app.yaml\npatches:\n- path: ../../patch.yaml\n",
			"app/app.yaml":           settingsConfigMap,
		}},
		{"cyclic kustomizations", map[string]string{
			"app/a/kustomization.yaml": "resources:\n- ../b\n",
			"app/b/kustomization.yaml": "resources:\n- ../a\n",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.feature, func(t *testing.T) {
			u := unsupportedOf(t, tc.repo, "app")
			if u.Feature != tc.feature {
				t.Fatalf("refused feature %q (%v), want %q", u.Feature, u, tc.feature)
			}
		})
	}
}

func TestAFolderKustomizeCannotBuildIsRefused(t *testing.T) {
	// Two documents of one identity: kustomize refuses the build.
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- a.yaml\n- b.yaml\n",
		"app/a.yaml":             settingsConfigMap,
		"app/b.yaml":             settingsConfigMap,
	}
	u := unsupportedOf(t, repo, "app")
	if u.Feature != "render failed" {
		t.Fatalf("refused feature %q (%v), want render failed", u.Feature, u)
	}
}

func TestEverySupportedFieldLoads(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
metadata:
  name: app
resources:
- deployment.yaml
namespace: prod
images:
- name: nginx
  newTag: "1.26"
replicas:
- name: web
  count: 2
labels:
- pairs:
    env: prod
commonLabels:
  team: payments
commonAnnotations:
  owner: platform
patches:
- path: patch.yaml
sortOptions:
  order: legacy
`,
		"app/deployment.yaml": webDeployment,
		"app/patch.yaml":      sidecarPatch,
	}
	f := loadFolder(t, repo, "app")
	id := inNamespace(webID, "prod")
	doc := renderOf(t, f, id)
	if got, _ := fieldAt(doc, "spec", "template", "spec", "containers", "name=web", "image"); got != "nginx:1.26" {
		t.Errorf("image %v", got)
	}
	if got, _ := fieldAt(doc, "spec", "replicas"); got != float64(2) {
		t.Errorf("replicas %v", got)
	}
}
