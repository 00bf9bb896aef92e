package sanitize

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// causePaths returns the fields a refusal's validation causes name, resolved against live
// ("spec.template.spec.containers[0].image", "metadata.labels[app.kubernetes.io/name]"):
// first those live holds as named, most precise first ("spec.selector" before an
// immutability refusal of all of "spec"), then, for fields live does not hold (a
// StatefulSet's volumes made from its claim templates), their deepest ancestor live holds.
// Only causes of the given type count, all when it is "".
func causePaths(err error, live map[string]any, only metav1.CauseType) [][]any {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var held, ancestors [][]any
	for _, c := range status.Status().Details.Causes {
		if only != "" && c.Type != only {
			continue
		}
		p, whole := resolveField(c.Field, live)
		switch {
		case len(p) == 0:
		case whole:
			held = append(held, p)
		default:
			ancestors = append(ancestors, p)
		}
	}
	slices.SortStableFunc(held, func(a, b []any) int { return len(b) - len(a) })
	return append(held, ancestors...)
}

// fieldToken is one step of a field path as the API server prints it: a name after a dot,
// or what stands in brackets (a list index or a map key).
type fieldToken struct {
	text      string
	bracketed bool
}

func tokenizeField(field string) []fieldToken {
	var out []fieldToken
	for len(field) > 0 {
		switch field[0] {
		case '.':
			field = field[1:]
		case '[':
			end := strings.IndexByte(field, ']')
			if end < 0 {
				return out
			}
			out = append(out, fieldToken{text: field[1:end], bracketed: true})
			field = field[end+1:]
		default:
			end := strings.IndexAny(field, ".[")
			if end < 0 {
				end = len(field)
			}
			out = append(out, fieldToken{text: field[:end]})
			field = field[end:]
		}
	}
	return out
}

// resolveField walks live along field. A map key holding dots is matched greedily (the
// longest run of dotted names that is a key). It stops at the first step live lacks; whole
// tells whether it got to the end.
func resolveField(field string, live map[string]any) (path []any, whole bool) {
	tokens := tokenizeField(field)
	var cur any = live
	for i := 0; i < len(tokens); {
		switch node := cur.(type) {
		case map[string]any:
			key, used := matchKey(node, tokens[i:])
			if used == 0 {
				return path, false
			}
			path, cur, i = append(path, key), node[key], i+used
		case []any:
			n, err := strconv.Atoi(tokens[i].text)
			if !tokens[i].bracketed || err != nil || n < 0 || n >= len(node) {
				return path, false
			}
			path, cur, i = append(path, n), node[n], i+1
		default:
			return path, false
		}
	}
	return path, len(tokens) > 0
}

// matchKey finds the key of node that the tokens start with: a bracketed key as it is, or
// the longest run of dotted names joined by dots.
func matchKey(node map[string]any, tokens []fieldToken) (string, int) {
	if tokens[0].bracketed {
		if hasKey(node, tokens[0].text) {
			return tokens[0].text, 1
		}
		return "", 0
	}
	run := 1
	for run < len(tokens) && !tokens[run].bracketed {
		run++
	}
	for n := run; n > 0; n-- {
		parts := make([]string, n)
		for j := range n {
			parts[j] = tokens[j].text
		}
		if key := strings.Join(parts, "."); hasKey(node, key) {
			return key, n
		}
	}
	return "", 0
}

// Shape names what an object's content is made of: its apiVersion and kind, its maps and its
// lists of maps without their other values (each list element keeping its name), and the
// values a dry-run update keeps from the existing object (keptByUpdate) — metadata aside.
// Objects of one shape need the same values restored, and share whether the server fills
// anything in (docs/sanitize.md#minimal-documents). The zero Shape names none.
type Shape [sha256.Size]byte

// ShapeOf is the shape of a cleaned object: Clean's result, or a sanitized document parsed.
// The watch learns it from the object it decoded, so that a minimal document of a known
// shape needs no second parse.
func ShapeOf(obj map[string]any) Shape {
	s := contentSkeleton(obj)
	keptByUpdate(s, obj)
	return shapeOfSkeleton(s)
}

// shapeOfSkeleton is the Shape of a skeleton that keptByUpdate completed; its metadata, if
// any, is left out.
func shapeOfSkeleton(s map[string]any) Shape {
	content := make(map[string]any, len(s))
	for k, v := range s {
		if k != "metadata" {
			content[k] = v
		}
	}
	b, _ := json.Marshal(content) // maps of plain values: encoding cannot fail
	return sha256.Sum256(b)
}

// shapeKnowledge is what one object taught about its shape.
type shapeKnowledge struct {
	// nothingToOmit: the server filled in no value of it; the live document is minimal.
	nothingToOmit bool
	// unanswered: the server could not be brought to answer for it within the bounds; the
	// live document is written without asking again.
	unanswered bool
	// restored are the paths the server needed in the skeleton.
	restored [][]any
}

// maxShapes bounds the shapes remembered; past it they are forgotten all at once.
const maxShapes = 1024

// shapeMemory is safe for concurrent use. It knows shapes per resource type.
type shapeMemory struct {
	mu     sync.Mutex
	shapes map[typedShape]shapeKnowledge
}

type typedShape struct {
	gvr   schema.GroupVersionResource
	shape Shape
}

func (m *shapeMemory) get(gvr schema.GroupVersionResource, shape Shape) (shapeKnowledge, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.shapes[typedShape{gvr, shape}]
	return v, ok
}

// writtenAsLive reports whether an object of the type and shape had no server-filled
// value, or the server could not be brought to answer for it: its live document is
// written, with no question. The zero Shape is never known.
func (m *shapeMemory) writtenAsLive(gvr schema.GroupVersionResource, shape Shape) bool {
	if shape == (Shape{}) {
		return false
	}
	known, seen := m.get(gvr, shape)
	return seen && (known.nothingToOmit || known.unanswered)
}

func (m *shapeMemory) put(gvr schema.GroupVersionResource, shape Shape, v shapeKnowledge) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shapes == nil || len(m.shapes) >= maxShapes {
		m.shapes = map[typedShape]shapeKnowledge{}
	}
	m.shapes[typedShape{gvr, shape}] = v
}

func hasKey(node map[string]any, key string) bool {
	_, ok := node[key]
	return ok
}
