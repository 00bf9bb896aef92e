package layout

import "gopkg.in/yaml.v3"

// mergeInto changes dst so that it holds the value of src, keeping dst's
// comments, key order and scalar styles wherever the value did not change:
//   - scalars are updated in place;
//   - mapping keys missing from src are removed, keys new in src are appended;
//   - sequences of equal length are merged element by element, others replaced.
func mergeInto(dst, src *yaml.Node) {
	if dst.Kind == yaml.DocumentNode && src.Kind == yaml.DocumentNode &&
		len(dst.Content) == 1 && len(src.Content) == 1 && !hasAlias(dst) {
		mergeValue(dst.Content[0], src.Content[0])
		return
	}
	replaceValue(dst, src)
}

func mergeValue(dst, src *yaml.Node) {
	if dst.Kind != src.Kind {
		replaceValue(dst, src)
		return
	}
	switch dst.Kind {
	case yaml.ScalarNode:
		mergeScalar(dst, src)
	case yaml.MappingNode:
		mergeMapping(dst, src)
	case yaml.SequenceNode:
		if len(dst.Content) != len(src.Content) {
			replaceContent(dst, src)
			return
		}
		for i := range dst.Content {
			mergeValue(dst.Content[i], src.Content[i])
		}
	default:
		replaceValue(dst, src)
	}
}

func mergeScalar(dst, src *yaml.Node) {
	if dst.ShortTag() == src.ShortTag() && dst.Value == src.Value {
		return
	}
	if dst.ShortTag() != src.ShortTag() {
		dst.Style = src.Style
	}
	dst.Tag, dst.Value = src.Tag, src.Value
	quoteYAML11(dst)
}

// quoteYAML11 double-quotes a plain string that a YAML 1.1 reader would take for a bool or
// a number ("yes", "off", "1:20"), which the encoder, writing YAML 1.2, would leave plain,
// and a string that starts with a line break, which no block scalar keeps
// (NeedsDoubleQuotes).
func quoteYAML11(n *yaml.Node) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return
	}
	block := n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	if (!block && NeedsDoubleQuotes(n.Value)) || (block && startsWithLineBreak(n.Value)) {
		n.Style = yaml.DoubleQuotedStyle
	}
}

func mergeMapping(dst, src *yaml.Node) {
	srcAt, ok := keyPositions(src)
	if !ok {
		replaceContent(dst, src)
		return
	}
	if _, ok := keyPositions(dst); !ok {
		replaceContent(dst, src)
		return
	}
	seen := make(map[string]bool, len(srcAt))
	content := dst.Content[:0:0]
	for i := 0; i+1 < len(dst.Content); i += 2 {
		k, v := dst.Content[i], dst.Content[i+1]
		j, ok := srcAt[k.Value]
		if !ok {
			continue
		}
		seen[k.Value] = true
		mergeValue(v, src.Content[j+1])
		content = append(content, k, v)
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		if !seen[src.Content[i].Value] {
			content = append(content, src.Content[i], src.Content[i+1])
		}
	}
	if len(dst.Content) == 0 {
		dst.Style = src.Style // an empty "{}" takes the new style
	}
	dst.Content = content
}

// keyPositions maps each scalar key of a mapping to its index in Content. ok
// is false when a key is not a plain scalar or appears twice.
func keyPositions(m *yaml.Node) (map[string]int, bool) {
	at := make(map[string]int, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode || k.Value == "<<" {
			return nil, false
		}
		if _, dup := at[k.Value]; dup {
			return nil, false
		}
		at[k.Value] = i
	}
	return at, true
}

// replaceContent gives a collection node the elements of src.
func replaceContent(dst, src *yaml.Node) {
	if len(dst.Content) == 0 {
		dst.Style = src.Style
	}
	dst.Tag, dst.Content = src.Tag, src.Content
}

// replaceValue makes dst a copy of src but keeps dst's own comments.
func replaceValue(dst, src *yaml.Node) {
	head, line, foot := dst.HeadComment, dst.LineComment, dst.FootComment
	*dst = *src
	if dst.HeadComment == "" {
		dst.HeadComment = head
	}
	if dst.LineComment == "" {
		dst.LineComment = line
	}
	if dst.FootComment == "" {
		dst.FootComment = foot
	}
}

// hasAlias reports whether a tree uses aliases, which an in-place merge could
// leave pointing at removed anchors.
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// blockStyle drops flow and quoting styles from a tree, so that a document
// given as JSON or flow YAML is written in block style. The encoder still
// quotes strings that would otherwise read as another type in YAML 1.2, and
// quoteYAML11 those that would in YAML 1.1.
func blockStyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		n.Style &^= yaml.FlowStyle
	case yaml.ScalarNode:
		n.Style &^= yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle
		quoteYAML11(n)
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
