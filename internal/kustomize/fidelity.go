package kustomize

import (
	"fmt"
	"regexp"
	"strings"
)

// token matches a ${...} substitution variable, as Flux's postBuild.substitute reads it.
// $(...) (kustomize vars, shell) is not a token.
var token = regexp.MustCompile(`\$\{[^}]*\}`)

// Divergence is a rendered value holding a ${...} token that the live object does not
// hold: something outside the folder substituted it (docs/kustomize.md#render-fidelity).
type Divergence struct {
	Object string
	Field  string
	Token  string
}

func (d *Divergence) String() string {
	return fmt.Sprintf("%s field %s renders %s, but the live value differs", d.Object, d.Field, d.Token)
}

// RenderDivergence compares the ${...}-bearing values of an object's render with its live
// document and returns the first that differs, or nil. A label transform that overwrote a
// token in the source is not a divergence: the render is what is compared.
func RenderDivergence(object string, render, live []byte) (*Divergence, error) {
	r, err := decodeDoc(render)
	if err != nil {
		return nil, fmt.Errorf("%s: render: %w", object, err)
	}
	l, err := decodeDoc(live)
	if err != nil {
		return nil, fmt.Errorf("%s: live document: %w", object, err)
	}
	rv, _ := normalize(r)
	lv, _ := normalize(l)
	var found *Divergence
	walkScalars(rv, nil, func(p fieldPath, v any) {
		s, ok := v.(string)
		if found != nil || !ok {
			return
		}
		tok := token.FindString(s)
		if tok == "" {
			return
		}
		got, ok := get(lv, p)
		if ok && (equal(got, v) || equal(got, unescaped(s))) {
			return
		}
		found = &Divergence{Object: object, Field: p.String(), Token: tok}
	})
	if found == nil {
		found = keyDivergence(object, rv, lv, nil)
	}
	return found, nil
}

// keyDivergence finds a map key of the render holding a ${...} token that live does not
// have (a label key "team.${ENV}/owner" substituted into "team.prod/owner").
func keyDivergence(object string, render, live any, p fieldPath) *Divergence {
	switch t := render.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if tok := token.FindString(k); tok != "" {
				if _, ok := get(live, p.key(k)); !ok {
					if _, ok := get(live, p.key(unescaped(k))); !ok {
						return &Divergence{Object: object, Field: p.key(k).String(), Token: tok}
					}
				}
			}
			if d := keyDivergence(object, t[k], live, p.key(k)); d != nil {
				return d
			}
		}
	case []any:
		for i, e := range t {
			if d := keyDivergence(object, e, live, p.elem(t, i)); d != nil {
				return d
			}
		}
	}
	return nil
}

// unescaped is a value as Flux's substitution writes an escaped token: "$${VAR}" becomes
// the literal "${VAR}", so live holding that is no divergence.
func unescaped(s string) string {
	return strings.ReplaceAll(s, "$${", "${")
}
