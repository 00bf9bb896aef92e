package layout

import (
	"fmt"
	"path"

	"gopkg.in/yaml.v3"
)

// checkKustomization accepts a kustomization file whose one document is a mapping.
func checkKustomization(content []byte) error {
	_, _, err := kustomizationRoot(content)
	return err
}

// kustomizationRoot finds the segment of a kustomization file that holds its
// document, and the document's root mapping.
func kustomizationRoot(content []byte) (splitFile, int, error) {
	text := splitDocuments(string(content))
	at := -1
	for i, s := range text.segs {
		if isEmptyBody(s.body) {
			continue
		}
		if at >= 0 {
			return text, -1, problemf("a kustomization file holds more than one document; keep one")
		}
		n, err := parseDocument(s.body)
		if err != nil {
			return text, -1, problemf("invalid YAML in the kustomization: %v; fix the syntax", err)
		}
		if n != nil && (len(n.Content) != 1 || n.Content[0].Kind != yaml.MappingNode) {
			return text, -1, problemf("the kustomization is not a YAML mapping; fix it")
		}
		at = i
	}
	return text, at, nil
}

// addResource returns a kustomization file with entry added to its resources
// list. The key is created when absent. changed is false when entry is listed already.
func addResource(content []byte, entry string) (out []byte, changed bool, err error) {
	return editResources(content, func(root *yaml.Node) (bool, error) {
		key, list := resourcesOf(root)
		switch {
		case key == nil:
			root.Content = append(root.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "resources"},
				&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"})
			list = root.Content[len(root.Content)-1]
		case list.Kind == yaml.ScalarNode && list.ShortTag() == "!!null":
			*list = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", LineComment: list.LineComment}
		case list.Kind != yaml.SequenceNode:
			return false, fmt.Errorf("resources is not a list")
		}
		for _, item := range list.Content {
			if item.Kind == yaml.ScalarNode && sameResource(item.Value, entry) {
				return false, nil
			}
		}
		if len(list.Content) == 0 {
			list.Style = 0 // "[]" becomes a block list
		}
		list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: entry})
		return true, nil
	})
}

// removeResource returns a kustomization file of directory dir without the entries of its
// resources list that name the file p (both relative to the folder). changed is false when
// none did.
func removeResource(content []byte, dir, p string) (out []byte, changed bool, err error) {
	return editResources(content, func(root *yaml.Node) (bool, error) {
		_, list := resourcesOf(root)
		if list == nil || list.Kind != yaml.SequenceNode {
			return false, nil
		}
		kept := list.Content[:0:0]
		for _, item := range list.Content {
			if item.Kind == yaml.ScalarNode && path.Join(dir, item.Value) == p {
				continue
			}
			kept = append(kept, item)
		}
		if len(kept) == len(list.Content) {
			return false, nil
		}
		list.Content = kept
		return true, nil
	})
}

// editResources applies edit to the root mapping of a kustomization file and
// re-renders only that document.
func editResources(content []byte, edit func(root *yaml.Node) (bool, error)) ([]byte, bool, error) {
	text, at, err := kustomizationRoot(content)
	if err != nil {
		return nil, false, err
	}
	if at < 0 {
		// No document yet: write a fresh one after whatever comments are there.
		root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		changed, err := edit(root)
		if err != nil || !changed {
			return nil, false, err
		}
		out, err := renderNode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}, true)
		if err != nil {
			return nil, false, err
		}
		return appendDocument(content, out), true, nil
	}
	changed := false
	body, err := rewriteDocument(text.segs[at].body, nil, func(doc *yaml.Node) error {
		var err error
		changed, err = edit(doc.Content[0])
		return err
	})
	if err != nil || !changed {
		return nil, false, err
	}
	text.segs[at].body = body
	return text.join(), true, nil
}

// resourcesOf returns the resources key and value nodes of a kustomization, or nils.
func resourcesOf(root *yaml.Node) (key, value *yaml.Node) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "resources" {
			return k, root.Content[i+1]
		}
	}
	return nil, nil
}

// sameResource reports whether a resources entry names the file entry.
func sameResource(listed, entry string) bool {
	return listed == entry || path.Clean(listed) == path.Clean(entry)
}

// EditKustomization applies edit to the root mapping of a kustomization file and
// re-renders only that document, keeping comments and the bytes of unchanged lines.
// A file without a document gets a fresh one. changed is false when edit changed nothing.
func EditKustomization(content []byte, edit func(root *yaml.Node) (bool, error)) (out []byte, changed bool, err error) {
	return editResources(content, edit)
}
