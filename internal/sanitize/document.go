package sanitize

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"gopkg.in/yaml.v3"
)

// indent is the indentation of written documents. Block sequences are indented under their
// key ("ports:\n  - port: 80"), which is what yaml.v3 writes natively.
const indent = 2

// Leading keys: the top level starts with these, in this order, then the remaining keys in
// alphabetical order; metadata starts with name, namespace, labels, annotations. Every other
// map is written in alphabetical key order.
var (
	leadingTopLevel = [...]string{"apiVersion", "kind", "metadata"}
	leadingMetadata = [...]string{"name", "namespace", "labels", "annotations"}
)

// Document renders obj (normally the result of Clean) as one YAML document whose bytes
// depend only on the object's content (docs/sanitize.md#the-byte-format): fixed key order,
// 2-space indentation, block style, integers without a decimal point, strings quoted only
// where YAML would read them as something else, multi-line strings as literal blocks where
// they round-trip.
func Document(obj map[string]any) ([]byte, error) {
	if obj == nil {
		return nil, errors.New("render document: object is nil")
	}
	root, err := mappingNode(obj, leadingTopLevel[:], "")
	if err != nil {
		return nil, fmt.Errorf("render document: %w", err)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if err := encodeSafely(enc, &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, fmt.Errorf("render document: %w", err)
	}
	// A copy at its size: a document may be held long (a first mirror's snapshot holds every
	// one), and the buffer grew by doubling.
	return bytes.Clone(b.Bytes()), nil
}

// encodeSafely turns a panic of the YAML encoder into an error: Document must not panic on
// any input.
func encodeSafely(enc *yaml.Encoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml encoder: %v", r)
		}
	}()
	if err := enc.Encode(n); err != nil {
		return err
	}
	return enc.Close()
}

// mappingNode renders a map with the given keys first (when present) and the others sorted.
// path names the map in errors.
func mappingNode(m map[string]any, leading []string, path string) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	done := make(map[string]bool, len(leading))
	keys := make([]string, 0, len(m))
	for _, k := range leading {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
			done[k] = true
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	for _, k := range keys {
		var childLeading []string
		if path == "" && k == "metadata" {
			childLeading = leadingMetadata[:]
		}
		v, err := valueNode(m[k], childLeading, path+"."+k)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, stringNode(k), v)
	}
	return n, nil
}

func valueNode(v any, leading []string, path string) (*yaml.Node, error) {
	switch t := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case map[string]any:
		return mappingNode(t, leading, path)
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i, e := range t {
			c, err := valueNode(e, nil, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case string:
		return stringNode(t), nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	}
	if num, ok := number(v); ok {
		return numberNode(num, path)
	}
	// Other map and slice types (map[string]string, []map[string]any, …) from code that did
	// not go through Clean.
	if c := copyValue(v); !sameType(c, v) {
		return valueNode(c, leading, path)
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice {
		if c, ok := reflectToJSON(rv); ok {
			return valueNode(c, leading, path)
		}
	}
	return nil, fmt.Errorf("%s: unsupported value of type %T", path, v)
}

func sameType(a, b any) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }

// reflectToJSON converts maps with string keys and slices of any element type to the
// JSON-shaped types.
func reflectToJSON(rv reflect.Value) (any, bool) {
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			out[it.Key().String()] = it.Value().Interface()
		}
		return out, true
	case reflect.Slice:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out, true
	}
	return nil, false
}

// stringNode lets the encoder choose the style: plain where the string reads back as a
// string, double-quoted where YAML 1.2 would read it as a number, bool or null, literal
// block for multi-line text that a literal block can hold. Strings that only YAML 1.1 reads
// as something else ("yes", "off", "1:20") are double-quoted too: kubectl, Flux and
// kustomize read documents with YAML 1.1 parsers.
func stringNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if layout.NeedsDoubleQuotes(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func numberNode(num any, path string) (*yaml.Node, error) {
	if i, ok := num.(int64); ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(i, 10)}, nil
	}
	f := num.(float64)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%s: %v is not a JSON number", path, f)
	}
	v := formatFloat(f)
	tag := "!!float"
	if !strings.ContainsAny(v, ".e") {
		// A whole number (JSON 3.0 decodes to float64 3) is written as the integer it is;
		// tagging it a float would make the encoder write "!!float 3".
		tag = "!!int"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v}, nil
}

// formatFloat writes a float without an exponent in the usual range, so that a whole number
// (JSON 3.0 decodes to float64 3) is written "3", like kubectl does.
func formatFloat(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}
