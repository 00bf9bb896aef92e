package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
	"sigs.k8s.io/kustomize/api/pkg/util"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// source is the document a rendered object comes from, as the folder holds it now.
type source struct {
	path     string // repository path of its file
	writable bool   // the file lies in the target folder
	id       layout.Identity
	doc      map[string]any
}

// sourceOf reads the current source document of a rendered object.
func (f *Folder) sourceOf(obj *rendered) (source, error) {
	if obj.prov.source == "" || obj.prov.sourceID.Kind == "" {
		return source{}, refuse(CodeRenderRefused, obj.id.String(), "", "the render does not tell which file produces it")
	}
	docs, err := objectDocs(f.files[obj.prov.source])
	if err != nil {
		return source{}, fmt.Errorf("%s: read %s: %w", obj.id, obj.prov.source, err)
	}
	for _, d := range docs {
		id, err := identityOf(d)
		if err == nil && id == obj.prov.sourceID {
			return source{path: obj.prov.source, writable: inFolder(f.prefix, obj.prov.source), id: id, doc: d}, nil
		}
	}
	return source{}, fmt.Errorf("%s: its source document %s is no longer in %s", obj.id, obj.prov.sourceID, obj.prov.source)
}

// objectDocs decodes the mapping documents of a file, in order.
func objectDocs(content []byte) ([]map[string]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(content))
	var out []map[string]any
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(n.Content) != 1 || n.Content[0].Kind != yaml.MappingNode {
			continue
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		nv, err := normalize(v)
		if err != nil {
			return nil, err
		}
		m, _ := nv.(map[string]any)
		out = append(out, m)
	}
}

// recordSourceIDs notes the identity of every rendered object's source document, while
// the files are as Load read them (the dye names a document by its position).
func (f *Folder) recordSourceIDs() {
	parsed := map[string][]map[string]any{}
	for _, obj := range f.objects {
		p := obj.prov.source
		if p == "" {
			continue
		}
		docs, ok := parsed[p]
		if !ok {
			docs, _ = objectDocs(f.files[p])
			parsed[p] = docs
		}
		if obj.prov.sourceIndex < len(docs) {
			if id, err := identityOf(docs[obj.prov.sourceIndex]); err == nil {
				obj.prov.sourceID = id
			}
		}
	}
}

func splitImage(image string) (name, tag, digest string) {
	return util.SplitImageName(image)
}
