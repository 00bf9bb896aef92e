package sanitize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Alias expansion is bounded, so that a hostile document ("billion laughs") is refused
// instead of exhausting memory: at most maxAliasDepth aliases inside each other, and at most
// maxNodes values in the expanded document.
const (
	maxAliasDepth = 32
	maxNodes      = 1 << 20
)

// reader turns YAML nodes into JSON-shaped values, counting the values it makes.
type reader struct{ nodes int }

// Parse reads one YAML document into the JSON-shaped map that the dynamic client produces:
// integers as int64, other numbers as float64, timestamps and binary values as the strings
// they are in JSON. An empty input, more than one document, a top level that is not a
// mapping, a non-string key or a merge key ("<<") is an error.
func Parse(doc []byte) (map[string]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var root yaml.Node
	if err := decodeSafely(dec, &root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("parse document: empty")
		}
		return nil, fmt.Errorf("parse document: %w", err)
	}
	var extra yaml.Node
	if err := decodeSafely(dec, &extra); err == nil {
		return nil, errors.New("parse document: more than one YAML document")
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parse document: %w", err)
	}
	n := &root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) != 1 {
			return nil, errors.New("parse document: empty")
		}
		n = n.Content[0]
	}
	v, err := (&reader{}).value(n, 0, "")
	if err != nil {
		return nil, fmt.Errorf("parse document: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parse document: top level is %s, not a mapping", kindName(n))
	}
	return m, nil
}

func decodeSafely(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml decoder: %v", r)
		}
	}()
	return dec.Decode(n)
}

func (r *reader) value(n *yaml.Node, aliases int, path string) (any, error) {
	r.nodes++
	if r.nodes > maxNodes {
		return nil, fmt.Errorf("document has more than %d values", maxNodes)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if aliases >= maxAliasDepth || n.Alias == nil {
			return nil, fmt.Errorf("%s: alias nesting too deep", pathOrRoot(path))
		}
		return r.value(n.Alias, aliases+1, path)
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || (k.ShortTag() != "!!str" && k.ShortTag() != "!!merge") {
				return nil, fmt.Errorf("%s: key on line %d is not a string", pathOrRoot(path), k.Line)
			}
			if k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("%s: merge keys (<<) are not supported", pathOrRoot(path))
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("%s: duplicate key %q", pathOrRoot(path), k.Value)
			}
			e, err := r.value(v, aliases, path+"."+k.Value)
			if err != nil {
				return nil, err
			}
			out[k.Value] = e
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			e, err := r.value(c, aliases, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case yaml.ScalarNode:
		return scalarValue(n, path)
	}
	return nil, fmt.Errorf("%s: unexpected YAML node on line %d", pathOrRoot(path), n.Line)
}

func scalarValue(n *yaml.Node, path string) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("%s: %w", pathOrRoot(path), err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		// Beyond int64: keep the value as a float, as encoding/json would.
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: integer %q: %w", pathOrRoot(path), n.Value, err)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("%s: %w", pathOrRoot(path), err)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: %q is not a JSON number", pathOrRoot(path), n.Value)
		}
		return f, nil
	}
	// !!str, !!timestamp, !!binary and custom tags: JSON holds them as strings.
	return n.Value, nil
}

func pathOrRoot(path string) string {
	if path == "" {
		return "document"
	}
	return strings.TrimPrefix(path, ".")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "not a mapping"
}
