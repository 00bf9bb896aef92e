package kustomize

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// renderedDoc is one object of a render.
type renderedDoc struct {
	id  layout.Identity
	doc map[string]any
}

// renderRoot builds one root from files, in memory: no plugins, no exec, no network. A
// panic of the library on strange input is an error of the render, never of the operator.
func renderRoot(files MapFiles, root string) (out []renderedDoc, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("kustomize failed on this input: %v", r)
		}
	}()
	fs := filesys.MakeFsInMemory()
	for p, content := range files {
		if err := fs.WriteFile("/"+p, content); err != nil {
			return nil, fmt.Errorf("stage %s: %w", p, err)
		}
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone // the filesystem holds only what Load read
	opts.PluginConfig = types.DisabledPluginConfig()
	dir := "/" + rootDir(root)
	m, err := krusty.MakeKustomizer(opts).Run(fs, dir)
	if err != nil {
		return nil, err
	}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", r.CurId(), err)
		}
		doc, err := decodeDoc(y)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", r.CurId(), err)
		}
		id, err := identityOf(doc)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", r.CurId(), err)
		}
		out = append(out, renderedDoc{id: id, doc: doc})
	}
	return out, nil
}

// rootDir is the directory of a root kustomization file.
func rootDir(root string) string {
	if i := strings.LastIndexByte(root, '/'); i >= 0 {
		return root[:i]
	}
	return ""
}

// identityOf reads the identity of a decoded object.
func identityOf(doc map[string]any) (layout.Identity, error) {
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	meta, _ := doc["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	if apiVersion == "" || kind == "" || name == "" {
		return layout.Identity{}, fmt.Errorf("not a Kubernetes object (apiVersion, kind and metadata.name are needed)")
	}
	group := ""
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		group = apiVersion[:i]
	}
	return layout.Identity{Group: group, Kind: kind, Namespace: ns, Name: name}, nil
}

// encodeDoc renders a JSON value as YAML.
func encodeDoc(v any) ([]byte, error) {
	return yaml.Marshal(v)
}
