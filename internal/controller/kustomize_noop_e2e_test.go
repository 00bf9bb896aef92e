//go:build e2e

package controller_test

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// kustomizeCorpus is the layout corpus of package kustomize: each folder is the root of a
// repository whose TARGET file names the target folder; every object of layout NN renders
// into namespace k6-NN.
const kustomizeCorpus = "../kustomize/testdata/corpus"

// corpusEntry is one layout, as pushed under its own top folder kNN/.
type corpusEntry struct {
	name      string // e.g. "02-overlay-outside-base"
	dir       string // the layout on disk
	number    string // "02"
	target    string // the target folder relative to the layout's root
	namespace string // "k6-02"
	files     map[string]string
}

// top is the folder the layout is pushed under; relative paths inside it keep working.
func (c corpusEntry) top() string { return "k" + c.number }

// gitPath is the GitTarget's spec.path.
func (c corpusEntry) gitPath() string { return c.top() + "/" + c.target }

var corpusFolder = regexp.MustCompile(`^([0-9]{2})-[a-z0-9-]+$`)

func readKustomizeCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	entries, err := os.ReadDir(kustomizeCorpus)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusEntry
	for _, e := range entries {
		m := corpusFolder.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		c := corpusEntry{name: e.Name(), dir: filepath.Join(kustomizeCorpus, e.Name()), number: m[1],
			namespace: "k6-" + m[1], files: map[string]string{}}
		err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(c.dir, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			c.files[filepath.ToSlash(rel)] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		c.target = strings.TrimSpace(c.files["TARGET"])
		if c.target == "" {
			t.Fatalf("corpus layout %s has no TARGET", c.name)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("no layouts in %s", kustomizeCorpus)
	}
	return out
}

// renderWithCLI builds the layout's target folder with the real kustomize CLI.
func renderWithCLI(t *testing.T, c corpusEntry) []*unstructured.Unstructured {
	t.Helper()
	out := kzKustomizeBuild(t, filepath.Join(c.dir, filepath.FromSlash(c.target)))
	for _, u := range out {
		if u.GetNamespace() != c.namespace {
			t.Fatalf("%s renders %s %s into namespace %q, want %q", c.name, u.GetKind(), u.GetName(), u.GetNamespace(), c.namespace)
		}
	}
	return out
}

// corpusResources maps the kinds the corpus uses to the group and resource a rule names.
var corpusResources = map[string][2]string{
	"ConfigMap":      {"", "configmaps"},
	"Service":        {"", "services"},
	"ServiceAccount": {"", "serviceaccounts"},
	"Deployment":     {"apps", "deployments"},
	"Role":           {"rbac.authorization.k8s.io", "roles"},
	"RoleBinding":    {"rbac.authorization.k8s.io", "rolebindings"},
}

// rulesFor covers exactly the kinds of objects, one rule per API group.
func rulesFor(t *testing.T, objects []*unstructured.Unstructured) []v1.ResourceRule {
	t.Helper()
	byGroup := map[string]map[string]bool{}
	for _, o := range objects {
		gr, ok := corpusResources[o.GetKind()]
		if !ok {
			t.Fatalf("the corpus uses kind %s, which this test does not map to a resource", o.GetKind())
		}
		if byGroup[gr[0]] == nil {
			byGroup[gr[0]] = map[string]bool{}
		}
		byGroup[gr[0]][gr[1]] = true
	}
	var rules []v1.ResourceRule
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		rules = append(rules, v1.ResourceRule{APIGroups: []string{g}, Resources: slices.Sorted(maps.Keys(byGroup[g]))})
	}
	return rules
}

// An in-sync folder writes nothing (docs/kustomize.md#an-in-sync-folder-writes-nothing),
// through the whole operator: a repository whose kustomize folders render exactly what
// the cluster holds gets no commit, and no file of it changes by a byte.
func TestAnInSyncKustomizeFolderMakesNoCommit(t *testing.T) {
	corpus := readKustomizeCorpus(t)
	r := newRepo(t)

	// One repository holds every layout, each under its own top folder.
	pushed := map[string]string{}
	for _, c := range corpus {
		for p, content := range c.files {
			pushed[c.top()+"/"+p] = content
		}
	}
	tip := kzPush(t, r, pushed, "the kustomize corpus")

	// The cluster holds what every folder renders.
	objects := 0
	rules := map[string][]v1.ResourceRule{}
	for _, c := range corpus {
		if err := cp.CreateNamespace(ctxOf(t), c.namespace, nil); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		rendered := renderWithCLI(t, c)
		for _, u := range rendered {
			create(t, u)
		}
		objects += len(rendered)
		rules[c.name] = rulesFor(t, rendered)
	}
	t.Logf("%d layouts, %d objects applied, %d files pushed", len(corpus), objects, len(pushed))

	startOperator(t, cp.Config, t.TempDir())
	home := newNamespace(t, nil)
	var guests []string
	for _, c := range corpus {
		guests = append(guests, c.namespace)
	}
	providerWithSecret(t, home, "origin", r, func(p *v1.GitProvider) {
		p.Spec.AccessFrom = &v1.NamespaceMatcher{Namespaces: guests}
	})
	targets := make([]*v1.GitTarget, len(corpus))
	for i, c := range corpus {
		gt := target(c.namespace, c.top(), "origin", c.gitPath(), v1.PruneOnEvent)
		gt.Spec.GitProviderRef.Namespace = home
		create(t, gt)
		create(t, watchRule(c.namespace, c.top(), c.top(), rules[c.name]...))
		targets[i] = gt
	}

	// Settled: every target runs on synced streams, and its folder was measured against
	// the live objects of its start (RenderMatchesLive is set from the worker's epoch).
	for _, gt := range targets {
		targetReady(t, gt)
		waitCondition(t, gt, kzConds(gt), v1.ConditionRenderMatchesLive, metav1.ConditionTrue, "")
	}
	// Nothing waits to be committed for any target: a CommitRequest, which waits for a
	// target's closed but unpublished writes, finds none and names the pushed tip.
	for i, c := range corpus {
		if sha := kzNothingPending(t, targets[i], "the start of "+c.name); sha != tip {
			t.Errorf("%s: the CommitRequest names sha %s, pushed tip %s", c.name, sha, tip)
		}
	}
	// And the branch stays put for a few commit windows (the provider's is 500 ms).
	quiet := time.Now().Add(10 * 500 * time.Millisecond)
	for time.Now().Before(quiet) {
		if log := r.log(); len(log) != 1 || log[0].SHA != tip {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	if log := r.log(); len(log) != 1 || log[0].SHA != tip {
		var lines []string
		for _, cm := range log {
			lines = append(lines, fmt.Sprintf("%s %s", cm.SHA[:12], cm.Subject))
		}
		t.Errorf("the branch has %d commits, want only the pushed %s:\n%s", len(log), tip[:12], strings.Join(lines, "\n"))
	}
	kzAssertFilesAre(t, r, pushed)
	// A refused folder would make no commit either: every target still mirrors.
	for _, gt := range targets {
		kzAssertMirroring(t, gt)
	}
}
