//go:build e2e

package kustomize

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// cliRender is one object of `kustomize build`'s output.
type cliRender struct {
	id    layout.Identity
	doc   []byte
	value map[string]any
}

// buildWithCLI runs the real kustomize CLI on the layout's target folder.
func buildWithCLI(t *testing.T, l corpusLayout) []cliRender {
	t.Helper()
	cmd := exec.Command(testenv.KustomizeCLI(t), "build", filepath.Join(l.Root, filepath.FromSlash(l.Target)))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", l.Target, err, stderr.String())
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(&stdout))
	var out []cliRender
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("reading the output of kustomize build %s: %v", l.Target, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		id, err := layout.IdentityOf(doc)
		if err != nil {
			t.Fatalf("an object of kustomize build %s: %v\n%s", l.Target, err, doc)
		}
		var v map[string]any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			t.Fatalf("an object of kustomize build %s: %v", l.Target, err)
		}
		out = append(out, cliRender{id: id, doc: doc, value: v})
	}
	return out
}

// Every layout of the corpus is a real kustomization: the kustomize CLI builds its target
// folder, and every object lands in the layout's own namespace, so that all layouts can be
// applied to one cluster side by side.
func TestEveryCorpusLayoutBuildsWithTheKustomizeCLI(t *testing.T) {
	total := 0
	for _, l := range loadCorpus(t) {
		t.Run(l.Name, func(t *testing.T) {
			objects := buildWithCLI(t, l)
			if len(objects) == 0 {
				t.Fatalf("kustomize build %s renders nothing", l.Target)
			}
			for _, o := range objects {
				if o.id.Namespace != l.Namespace {
					t.Errorf("%s is in namespace %q, want %q", o.id, o.id.Namespace, l.Namespace)
				}
			}
			total += len(objects)
		})
	}
	t.Logf("the CLI rendered %d objects", total)
}

// The in-memory render of Load is kustomize's own: for every layout it yields the same
// objects, with equal values, as the CLI.
func TestTheInMemoryRenderEqualsTheKustomizeCLI(t *testing.T) {
	for _, l := range loadCorpus(t) {
		t.Run(l.Name, func(t *testing.T) {
			want := map[layout.Identity]cliRender{}
			for _, o := range buildWithCLI(t, l) {
				want[o.id] = o
			}
			f, err := Load(l.Files, l.Target, l.FolderPaths())
			if err != nil || f == nil {
				t.Fatalf("Load(%s) = %v, %v", l.Target, f, err)
			}
			got := map[layout.Identity]bool{}
			for _, obj := range f.Objects() {
				got[obj.ID] = true
				w, ok := want[obj.ID]
				if !ok {
					t.Errorf("Load renders %s, the CLI does not", obj.ID)
					continue
				}
				var v map[string]any
				if err := yaml.Unmarshal(obj.Doc, &v); err != nil {
					t.Errorf("%s: the rendered document does not parse: %v", obj.ID, err)
					continue
				}
				if !reflect.DeepEqual(v, w.value) {
					t.Errorf("%s renders differently:\nLoad:\n%s\nCLI:\n%s", obj.ID, obj.Doc, w.doc)
				}
			}
			for id := range want {
				if !got[id] {
					t.Errorf("the CLI renders %s, Load does not", id)
				}
			}
		})
	}
}
