package kustomize

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// Delete decides how the folder stops rendering an object deleted in the cluster: its
// source document is removed when it lies in the folder; an object inherited from a base
// outside the folder gets a `$patch: delete` patch file in its render root.
func (f *Folder) Delete(id layout.Identity) (Write, error) {
	if err := f.current(); err != nil {
		return Write{}, err
	}
	obj, ok := f.objects[id]
	if !ok {
		return Write{}, fmt.Errorf("%s is not rendered by the folder", id)
	}
	if obj.roots > 1 {
		return Write{}, refuse(CodeFanIn, id.String(), "", "%d render roots of the folder produce it; no single source can be edited", obj.roots)
	}
	src, err := f.sourceOf(obj)
	if err != nil {
		return Write{}, err
	}
	if src.writable {
		if n := len(f.reach[src.path]); n > 1 {
			return Write{}, refuse(CodeFanIn, id.String(), "", "%s is read by %d render roots; deleting from it would change them all", src.path, n)
		}
		return Write{Source: relTo(f.prefix, src.path), SourceID: src.id, Delete: true}, nil
	}
	return f.deletePatch(obj, src)
}

// deletePatch writes a strategic-merge patch that deletes an inherited object, and lists
// it under the root's patches:. The patch names the object as the root's inputs hold it,
// before the root's own namespace: applies; that is tried, not modelled.
func (f *Folder) deletePatch(obj *rendered, src source) (Write, error) {
	dir := rootDir(obj.root)
	name := "delete-" + strings.ToLower(obj.id.Kind) + "-" + obj.id.Name + ".yaml"
	if obj.id.Namespace != "" {
		name = "delete-" + strings.ToLower(obj.id.Kind) + "-" + obj.id.Namespace + "-" + obj.id.Name + ".yaml"
	}
	file := path.Join(dir, name)
	release := ""
	if scaled[obj.id.Kind] {
		release = obj.id.Name
	}
	kc, err := addPatchEntry(f.files[obj.root], path.Base(file), release)
	if err != nil {
		return Write{}, fmt.Errorf("%s: edit %s: %w", obj.id, obj.root, err)
	}
	for _, ns := range uniqueStrings(obj.id.Namespace, src.id.Namespace, "") {
		patch := deletePatchText(obj, ns)
		trial := MapFiles{}
		for p, c := range f.files {
			trial[p] = c
		}
		trial[file], trial[obj.root] = patch, kc
		docs, err := renderRoot(trial, obj.root)
		if err != nil || rendersID(docs, obj.id) {
			continue
		}
		return Write{Edits: []layout.FileEdit{
			{Path: relTo(f.prefix, file), Content: patch},
			{Path: relTo(f.prefix, obj.root), Content: kc},
		}}, nil
	}
	return Write{}, refuse(CodeRenderRefused, obj.id.String(), "", "no $patch: delete in %s removes it from the render", relTo(f.prefix, obj.root))
}

func deletePatchText(obj *rendered, namespace string) []byte {
	apiVersion, _ := obj.doc["apiVersion"].(string)
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by GitOps Reverser: %s was deleted in the cluster.\n", obj.id)
	b.WriteString("# This patch removes it from the render of the base it comes from.\n")
	b.WriteString("$patch: delete\n")
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", apiVersion, obj.id.Kind, obj.id.Name)
	if namespace != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", namespace)
	}
	return []byte(b.String())
}

// addPatchEntry lists a patch file under a kustomization's patches:, and drops the
// replicas: entry of the deleted object (kustomize refuses an entry that matches nothing).
func addPatchEntry(content []byte, entry, deleted string) ([]byte, error) {
	if dropped, changed, err := dropReplicas(content, deleted); deleted != "" && err == nil && changed {
		content = dropped
	}
	out, changed, err := layout.EditKustomization(content, func(root *yaml.Node) (bool, error) {
		list := listUnder(root, "patches")
		if list == nil {
			return false, fmt.Errorf("patches is not a list")
		}
		for _, e := range list.Content {
			if p, ok := scalarOf(e, "path"); ok && path.Clean(p) == entry {
				return false, nil
			}
		}
		item := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		setString(item, "path", entry)
		list.Style = 0
		list.Content = append(list.Content, item)
		return true, nil
	})
	if err != nil || !changed {
		return content, err
	}
	return out, nil
}

func rendersID(docs []renderedDoc, id layout.Identity) bool {
	for _, d := range docs {
		if d.id == id {
			return true
		}
	}
	return false
}

func uniqueStrings(values ...string) []string {
	var out []string
	for _, v := range values {
		dup := false
		for _, o := range out {
			dup = dup || o == v
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

// scaled are the kinds a replicas: entry scales.
var scaled = map[string]bool{"Deployment": true, "StatefulSet": true, "ReplicaSet": true, "ReplicationController": true}

// ReleaseReplicas drops the replicas: entries of the folder's kustomizations that name a
// deleted object, in the folder's current state; call it after the source document's
// removal was applied. An entry another rendered object of a scaled kind still answers to
// stays.
func (f *Folder) ReleaseReplicas(id layout.Identity) []layout.FileEdit {
	obj, ok := f.objects[id] // as rendered before the removal that calls for it
	if !ok || !scaled[id.Kind] {
		return nil
	}
	for other := range f.objects {
		if other != id && other.Name == id.Name && scaled[other.Kind] {
			return nil
		}
	}
	var edits []layout.FileEdit
	for p, k := range f.kusts {
		if !k.writable || !f.reaches(obj.root, p) {
			continue
		}
		if out, changed, err := dropReplicas(f.files[p], id.Name); err == nil && changed {
			edits = append(edits, layout.FileEdit{Path: relTo(f.prefix, p), Content: out})
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Path < edits[j].Path })
	return edits
}

// reaches reports whether root reads file p.
func (f *Folder) reaches(root, p string) bool {
	for _, r := range f.reach[p] {
		if r == root {
			return true
		}
	}
	return false
}

// dropReplicas removes the replicas: entries that name a deleted object: kustomize refuses
// an entry that matches nothing.
func dropReplicas(content []byte, name string) ([]byte, bool, error) {
	return dropEntries(content, "replicas", true, func(e *yaml.Node) bool {
		n, _ := scalarOf(e, "name")
		return n == name
	})
}

// dropEntries removes the elements of a kustomization's list key that match; an emptied
// list loses its key when dropKey is set.
func dropEntries(content []byte, key string, dropKey bool, match func(*yaml.Node) bool) ([]byte, bool, error) {
	return layout.EditKustomization(content, func(root *yaml.Node) (bool, error) {
		var list *yaml.Node
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == key && root.Content[i+1].Kind == yaml.SequenceNode {
				list = root.Content[i+1]
			}
		}
		if list == nil {
			return false, nil
		}
		kept := list.Content[:0:0]
		for _, e := range list.Content {
			if !match(e) {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(list.Content) {
			return false, nil
		}
		list.Content = kept
		if len(kept) == 0 && dropKey {
			removeKey(root, key)
		}
		return true, nil
	})
}
