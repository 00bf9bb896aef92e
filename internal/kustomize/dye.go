package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// The dye: to learn which file and which images:/replicas: entry produced a rendered
// field, the folder is rendered a second time with every source document marked by an
// annotation and every entry's value replaced by a value unique to it. Kustomize itself
// then says where each value went; no transformer is modelled here.
const (
	dyeSourceKey  = "dye.gitops-reverser.io/source"
	dyeTagPrefix  = "dye-"
	dyeReplicaMin = 700000000
)

// entryRef names one entry of a kustomization's images: or replicas: list.
type entryRef struct {
	kust  string // repository path of the kustomization
	field string // "images" or "replicas"
	index int
}

// dyeing is a dyed copy of the files and the meaning of each dye.
type dyeing struct {
	files    MapFiles
	images   map[string]entryRef // dyed image tag -> entry
	replicas map[int64]entryRef  // dyed count -> entry
}

// dye returns the dyed copy of the folder's files.
func (f *Folder) dye() (*dyeing, error) {
	d := &dyeing{files: MapFiles{}, images: map[string]entryRef{}, replicas: map[int64]entryRef{}}
	for p, c := range f.files {
		d.files[p] = c
	}
	for p := range f.resourceFiles {
		out, err := dyeSources(p, f.files[p])
		if err != nil {
			return nil, err
		}
		d.files[p] = out
	}
	paths := make([]string, 0, len(f.kusts))
	for p := range f.kusts {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	next := int64(dyeReplicaMin)
	for ki, p := range paths {
		out, err := d.dyeEntries(p, ki, f.files[p], &next)
		if err != nil {
			return nil, err
		}
		d.files[p] = out
	}
	return d, nil
}

// dyeSources marks every object document of a resource file with its path and position.
func dyeSources(p string, content []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(content))
	var out bytes.Buffer
	n := 0
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &UnsupportedError{Path: p, Feature: "unparseable", Hint: fmt.Sprintf("invalid YAML: %v", err)}
		}
		if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		setAnnotation(doc.Content[0], dyeSourceKey, p+"#"+strconv.Itoa(n))
		n++
		b, err := yaml.Marshal(&doc)
		if err != nil {
			return nil, fmt.Errorf("dye %s: %w", p, err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes(), nil
}

// setAnnotation sets metadata.annotations[key] on a mapping node.
func setAnnotation(root *yaml.Node, key, value string) {
	meta := mapChild(root, "metadata")
	ann := mapChild(meta, "annotations")
	ann.Content = append(ann.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// mapChild returns the mapping under key, creating it (or replacing a null) as needed.
func mapChild(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind != yaml.MappingNode {
				*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			return v
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

// dyeEntries gives every images: and replicas: entry of a kustomization a unique value.
func (d *dyeing) dyeEntries(p string, ki int, content []byte, next *int64) ([]byte, error) {
	var raw map[string]any
	if err := sigsyaml.Unmarshal(content, &raw); err != nil {
		return nil, &UnsupportedError{Path: p, Feature: "unparseable", Hint: err.Error()}
	}
	images, _ := raw["images"].([]any)
	for i, e := range images {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		// Only the tag is dyed: the name (and a newName) stay, so that a later entry that
		// matches this image still matches it, as it does in the plain render.
		tag := fmt.Sprintf("%sk%d-%d", dyeTagPrefix, ki, i)
		m["newTag"] = tag
		delete(m, "digest")
		d.images[tag] = entryRef{kust: p, field: "images", index: i}
	}
	replicas, _ := raw["replicas"].([]any)
	for i, e := range replicas {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		m["count"] = *next
		d.replicas[*next] = entryRef{kust: p, field: "replicas", index: i}
		*next++
	}
	return sigsyaml.Marshal(raw)
}

// provenance is what the dye tells about one rendered object.
type provenance struct {
	source      string // repository path of the source file
	sourceIndex int    // position of the source document among the file's objects
	sourceID    layout.Identity
	images      []imageField
	replicas    *entryRef
}

// imageField is an image value set by an images: entry.
type imageField struct {
	path  fieldPath
	entry entryRef
}

// read takes the dye out of a dyed rendered object and returns what it told.
func (d *dyeing) read(doc map[string]any) provenance {
	var pv provenance
	if meta, ok := doc["metadata"].(map[string]any); ok {
		if ann, ok := meta["annotations"].(map[string]any); ok {
			if v, ok := ann[dyeSourceKey].(string); ok {
				if i := strings.LastIndexByte(v, '#'); i > 0 {
					pv.source = v[:i]
					pv.sourceIndex, _ = strconv.Atoi(v[i+1:])
				}
			}
		}
	}
	walkScalars(doc, nil, func(p fieldPath, v any) {
		if len(p) > 0 && !p[len(p)-1].list && p[len(p)-1].key == "image" {
			if s, ok := v.(string); ok {
				if _, tag, _ := splitImage(s); strings.HasPrefix(tag, dyeTagPrefix) {
					if e, ok := d.images[tag]; ok {
						pv.images = append(pv.images, imageField{path: p, entry: e})
					}
				}
			}
		}
	})
	if spec, ok := doc["spec"].(map[string]any); ok {
		if n, ok := asInt(spec["replicas"]); ok {
			if e, ok := d.replicas[n]; ok {
				pv.replicas = &e
			}
		}
	}
	return pv
}
