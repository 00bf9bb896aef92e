package layout

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// indent is the indentation of rendered YAML.
const indent = 2

// encodeNode renders a node with 2-space indentation. Block sequences come out
// indented under their key ("key:\n  - a").
func encodeNode(n *yaml.Node) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("yaml encoder failed: %v", r)
		}
	}()
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// renderNode renders a node, with block sequences under a key written at the
// key's own indentation ("key:\n- a", as kubectl does) when compact is true.
func renderNode(n *yaml.Node, compact bool) (string, error) {
	out, err := encodeNode(n)
	if err != nil || !compact {
		return out, err
	}
	return compactSequences(out), nil
}

// compactSequences moves block sequences that are values of a mapping key left
// by one indentation step, so they start at the key's column. It returns text
// unchanged when the result would not mean the same.
func compactSequences(text string) string {
	if !hasSequenceEntry(text) {
		return text // nothing to move: spare the parse
	}
	root, err := parseDocument(text)
	if err != nil || root == nil {
		return text
	}
	lines := splitLines(text)
	shift := make([]int, len(lines))
	found := false
	walkMappingSequences(root, func(key, seq *yaml.Node) {
		start := seq.Line - 1
		if start < 0 || start >= len(lines) || seq.Column != key.Column+indent {
			return
		}
		col := seq.Column - 1
		for i := start; i < len(lines); i++ {
			l := trimEOL(lines[i])
			if i > start && strings.TrimSpace(l) != "" && leadingSpaces(l) < col {
				break
			}
			shift[i] += indent
			found = true
		}
	})
	if !found {
		return text
	}
	var b strings.Builder
	for i, l := range lines {
		n := shift[i]
		if n > leadingSpaces(l) {
			n = leadingSpaces(l)
		}
		b.WriteString(l[n:])
	}
	out := b.String()
	if !sameMeaning(text, out) {
		return text
	}
	return out
}

// hasSequenceEntry reports whether a line of text starts (after spaces) with a block
// sequence entry ("- " or a lone "-"). Rendered YAML without one holds no block sequence;
// a line of a block scalar may look like one, which only costs compactSequences a parse.
func hasSequenceEntry(text string) bool {
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimLeft(line, " ")
		if line == "-" || line == "-\r" || strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "-\t") {
			return true
		}
	}
	return false
}

// walkMappingSequences calls fn for every non-empty block sequence that is the
// value of a mapping key.
func walkMappingSequences(n *yaml.Node, fn func(key, seq *yaml.Node)) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 {
				fn(k, v)
			}
		}
	}
	for _, c := range n.Content {
		walkMappingSequences(c, fn)
	}
}

// usesCompactSequences tells the sequence style of a parsed document: true
// when its first block sequence under a key starts at the key's column. A
// document without such a sequence gets the compact (kubectl) style.
func usesCompactSequences(n *yaml.Node) bool {
	compact, decided := true, false
	walkMappingSequences(n, func(key, seq *yaml.Node) {
		if !decided {
			compact, decided = seq.Column == key.Column, true
		}
	})
	return compact
}

func leadingSpaces(s string) int {
	return len(s) - len(strings.TrimLeft(s, " "))
}

// sameMeaning reports whether two YAML texts hold the same single document.
func sameMeaning(a, b string) bool {
	na, err := parseDocument(a)
	if err != nil {
		return false
	}
	nb, err := parseDocument(b)
	if err != nil {
		return false
	}
	return sameNodeMeaning(na, nb)
}

// sameNodeMeaning reports whether two parsed documents say the same thing.
func sameNodeMeaning(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	va, err := meaningOf(a)
	if err != nil {
		return false
	}
	vb, err := meaningOf(b)
	if err != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// rewriteDocument re-renders one document body after edit changed its node
// tree. Leading and trailing comment lines of the body stay byte-identical, and
// lines of the document whose values did not change keep their original text
// where possible. Line endings follow the original body. parsed, when not nil, is
// body parsed already (parseDocument); it is read, never changed.
func rewriteDocument(body string, parsed *yaml.Node, edit func(root *yaml.Node) error) (string, error) {
	lead, core, tail := splitTrivia(body)
	old := parsed
	if old == nil || core != body {
		var err error
		old, err = parseDocument(core)
		if err != nil || old == nil || (tail != "" && !sameMeaning(body, core)) {
			// The trailing lines belong to the document (a block scalar ending in
			// lines that look like comments): keep them with it.
			core, tail = core+tail, ""
			if old, err = parseDocument(core); err != nil {
				return "", err
			}
			if old == nil {
				return "", fmt.Errorf("no document to edit")
			}
		}
	}
	edited := cloneNode(old) // old stays as it was
	if err := edit(edited); err != nil {
		return "", err
	}

	crlf := strings.Contains(core, "\r\n")
	orig := strings.ReplaceAll(core, "\r\n", "\n")
	compact := usesCompactSequences(old)
	before, err := renderNode(old, compact)
	if err != nil {
		return "", err
	}
	after, err := renderNode(edited, compact)
	if err != nil {
		return "", err
	}
	out := after
	if before != orig {
		if patched, ok := patchLines(splitLines(orig), splitLines(before), splitLines(after)); ok && sameMeaningAs(patched, edited) {
			out = patched
		}
	}
	if !strings.HasSuffix(orig, "\n") {
		out = strings.TrimSuffix(out, "\n")
	}
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return lead + out + tail, nil
}

// sameMeaningAs reports whether text holds one document that says what n says.
func sameMeaningAs(text string, n *yaml.Node) bool {
	want, err := meaningOf(n)
	return err == nil && bodyHolds(text, want)
}

// cloneNode copies a node tree; an alias in the copy points to the copy of its anchor.
func cloneNode(n *yaml.Node) *yaml.Node {
	copies := map[*yaml.Node]*yaml.Node{}
	var clone func(n *yaml.Node) *yaml.Node
	clone = func(n *yaml.Node) *yaml.Node {
		if n == nil {
			return nil
		}
		if c, ok := copies[n]; ok {
			return c
		}
		c := *n
		copies[n] = &c
		if n.Content != nil {
			c.Content = make([]*yaml.Node, len(n.Content))
			for i, child := range n.Content {
				c.Content[i] = clone(child)
			}
		}
		c.Alias = clone(n.Alias)
		return &c
	}
	return clone(n)
}
