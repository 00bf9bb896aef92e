package kustomize

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Documents are compared as JSON values: map[string]any, []any, string, float64, bool, nil.

// decodeDoc parses one YAML document into a JSON value.
func decodeDoc(doc []byte) (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal(doc, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// normalize turns any decoded value into the JSON value kinds.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// clone deep-copies a JSON value (every value here is one: see normalize).
func clone(v any) any { return runtime.DeepCopyJSONValue(v) }

// step is one element of a field path: a map key, or a list element found by its name
// (named lists) or by its position.
type step struct {
	key   string
	list  bool
	name  string
	index int
}

// fieldPath locates a field in a document.
type fieldPath []step

func (p fieldPath) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case !s.list:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		case s.name != "":
			fmt.Fprintf(&b, "[name=%s]", s.name)
		default:
			fmt.Fprintf(&b, "[%d]", s.index)
		}
	}
	if b.Len() == 0 {
		return "(document)"
	}
	return b.String()
}

func (p fieldPath) key(k string) fieldPath {
	return append(p[:len(p):len(p)], step{key: k})
}

func (p fieldPath) elem(list []any, i int) fieldPath {
	if names, ok := elementNames(list); ok {
		return append(p[:len(p):len(p)], step{list: true, name: names[i]})
	}
	return append(p[:len(p):len(p)], step{list: true, index: i})
}

// elementNames returns the name of every element when each element is a mapping with a
// unique, non-empty string name.
func elementNames(list []any) ([]string, bool) {
	names := make([]string, len(list))
	seen := map[string]bool{}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		n, ok := m["name"].(string)
		if !ok || n == "" || seen[n] {
			return nil, false
		}
		seen[n] = true
		names[i] = n
	}
	return names, true
}

// byName indexes a named list.
func byName(list []any) map[string]any {
	out := map[string]any{}
	names, ok := elementNames(list)
	if !ok {
		return out
	}
	for i, n := range names {
		out[n] = list[i]
	}
	return out
}

// get returns the value at path.
func get(doc any, p fieldPath) (any, bool) {
	cur := doc
	for _, s := range p {
		switch {
		case !s.list:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[s.key]; !ok {
				return nil, false
			}
		case s.name != "":
			l, _ := cur.([]any)
			e, ok := byName(l)[s.name]
			if !ok {
				return nil, false
			}
			cur = e
		default:
			l, _ := cur.([]any)
			if s.index >= len(l) {
				return nil, false
			}
			cur = l[s.index]
		}
	}
	return cur, true
}

// set replaces the value at an existing path; it reports false when the path is missing.
func set(doc any, p fieldPath, v any) bool {
	if len(p) == 0 {
		return false
	}
	parent, ok := get(doc, p[:len(p)-1])
	if !ok {
		return false
	}
	last := p[len(p)-1]
	switch {
	case !last.list:
		m, ok := parent.(map[string]any)
		if !ok {
			return false
		}
		m[last.key] = v
	case last.name != "":
		l, _ := parent.([]any)
		names, ok := elementNames(l)
		if !ok {
			return false
		}
		for i, n := range names {
			if n == last.name {
				l[i] = v
				return true
			}
		}
		return false
	default:
		l, _ := parent.([]any)
		if last.index >= len(l) {
			return false
		}
		l[last.index] = v
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// walkScalars calls fn for every scalar of a value with its path.
func walkScalars(v any, p fieldPath, fn func(p fieldPath, v any)) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			walkScalars(t[k], p.key(k), fn)
		}
	case []any:
		for i, e := range t {
			walkScalars(e, p.elem(t, i), fn)
		}
	default:
		fn(p, v)
	}
}

// firstDifference names the first field where two values differ, "" when they are equal.
func firstDifference(a, b any, p fieldPath) string {
	if equal(a, b) {
		return ""
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if d := firstDifference(am[k], bm[k], p.key(k)); d != "" {
				return d
			}
		}
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			if d := firstDifference(al[i], bl[i], p.elem(al, i)); d != "" {
				return d
			}
		}
	}
	return p.String()
}

// asInt reads a JSON number as an integer.
func asInt(v any) (int64, bool) {
	switch t := v.(type) {
	case float64:
		if t == float64(int64(t)) {
			return int64(t), true
		}
	case int64:
		return t, true
	case int:
		return int64(t), true
	case string:
		n, err := strconv.ParseInt(t, 10, 64)
		return n, err == nil
	}
	return 0, false
}
