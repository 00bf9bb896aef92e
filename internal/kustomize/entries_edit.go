package kustomize

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// entryChange is one change of an images: or replicas: list, decided by SourceForm.
type entryChange struct {
	kust string // repository path of the kustomization to edit
	// index is the entry to edit; -1 appends a new entry.
	index int
	field string // "images" or "replicas"
	// image: the live image, and the image name the new entry matches (append only).
	image, match string
	// count: the live replica count; name: the object the new entry names (append only).
	count int64
	name  string
}

// apply edits a kustomization file's content.
func (c entryChange) apply(content []byte) ([]byte, error) {
	out, _, err := layout.EditKustomization(content, func(root *yaml.Node) (bool, error) {
		list := listUnder(root, c.field)
		if list == nil {
			return false, fmt.Errorf("%s is not a list", c.field)
		}
		var entry *yaml.Node
		if c.index < 0 {
			entry = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			list.Style = 0
			list.Content = append(list.Content, entry)
			if c.field == "images" {
				setString(entry, "name", c.match)
			} else {
				setString(entry, "name", c.name)
			}
		} else {
			if c.index >= len(list.Content) || list.Content[c.index].Kind != yaml.MappingNode {
				return false, fmt.Errorf("%s entry %d is missing", c.field, c.index)
			}
			entry = list.Content[c.index]
		}
		if c.field == "replicas" {
			setScalar(entry, "count", strconv.FormatInt(c.count, 10), "!!int")
			return true, nil
		}
		setImage(entry, c.image)
		return true, nil
	})
	return out, err
}

// setImage makes an images: entry turn its image into image: the name, tag and digest are
// replaced together, as kustomize applies them.
func setImage(entry *yaml.Node, image string) {
	name, tag, digest := splitImage(image)
	matched, _ := scalarOf(entry, "name")
	renamed, hasNewName := scalarOf(entry, "newName")
	switch {
	case name != matched:
		setString(entry, "newName", name)
	case hasNewName && renamed != name:
		removeKey(entry, "newName")
	}
	if tag != "" {
		setString(entry, "newTag", tag)
	} else {
		removeKey(entry, "newTag")
	}
	if digest != "" {
		setString(entry, "digest", digest)
	} else {
		removeKey(entry, "digest")
	}
}

// listUnder returns the sequence under key, creating it when absent.
func listUnder(root *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			v := root.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
				*v = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", LineComment: v.LineComment}
			}
			if v.Kind != yaml.SequenceNode {
				return nil
			}
			return v
		}
	}
	v := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

func scalarOf(m *yaml.Node, key string) (string, bool) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value, true
		}
	}
	return "", false
}

func setString(m *yaml.Node, key, value string) { setScalar(m, key, value, "!!str") }

// setScalar sets key to a scalar, keeping the key's place and comments when it exists.
func setScalar(m *yaml.Node, key, value, tag string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Value == value {
				return
			}
			*v = yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value, LineComment: v.LineComment, HeadComment: v.HeadComment}
			return
		}
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value})
}

func removeKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			return
		}
	}
}
