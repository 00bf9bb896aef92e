package kustomize

// project computes the new source value s from the render r and the live value l: where r
// and l agree, s is kept as it is; where they differ, l is written. It models no
// transformer: a field the build supplies and the user changed is written into the source,
// and the verification render refuses it when the build overrides it again.
func project(s, r, l any, p fieldPath, object string) (any, error) {
	if equal(r, l) {
		return s, nil
	}
	rm, rok := r.(map[string]any)
	lm, lok := l.(map[string]any)
	if rok && lok {
		return projectMap(s, rm, lm, p, object)
	}
	rl, rok := r.([]any)
	ll, lok := l.([]any)
	if rok && lok {
		_, rNamed := elementNames(rl)
		_, lNamed := elementNames(ll)
		if rNamed && lNamed {
			return projectNamed(s, rl, ll, p, object)
		}
		return projectUnnamed(s, r, l, p, object)
	}
	return clone(l), nil
}

func projectMap(s any, rm, lm map[string]any, p fieldPath, object string) (any, error) {
	sm, _ := s.(map[string]any)
	out := make(map[string]any, len(sm))
	for k, v := range sm {
		out[k] = v
	}
	for _, k := range unionKeys(rm, lm) {
		rv, inR := rm[k]
		lv, inL := lm[k]
		switch {
		case inR && inL:
			if equal(rv, lv) {
				continue
			}
			nv, err := project(sm[k], rv, lv, p.key(k), object)
			if err != nil {
				return nil, err
			}
			out[k] = nv
		case inL:
			out[k] = clone(lv)
		default:
			delete(out, k)
		}
	}
	return out, nil
}

// projectNamed pairs list elements by their unique name. Elements the build added and the
// user left alone stay out of the source; elements the user added are appended.
func projectNamed(s any, rl, ll []any, p fieldPath, object string) (any, error) {
	sl, _ := s.([]any)
	sNames, sNamed := elementNames(sl)
	if !sNamed && len(sl) > 0 {
		return projectUnnamed(s, rl, ll, p, object)
	}
	rBy, lBy := byName(rl), byName(ll)
	out := make([]any, 0, len(ll))
	seen := map[string]bool{}
	for i, e := range sl {
		n := sNames[i]
		seen[n] = true
		rv, inR := rBy[n]
		lv, inL := lBy[n]
		switch {
		case inL && inR:
			nv, err := project(e, rv, lv, append(p[:len(p):len(p)], step{list: true, name: n}), object)
			if err != nil {
				return nil, err
			}
			out = append(out, nv)
		case inL:
			out = append(out, clone(lv))
		case !inR:
			out = append(out, e) // the build dropped it and live does not have it
		}
	}
	for _, e := range ll {
		n := e.(map[string]any)["name"].(string)
		if seen[n] {
			continue
		}
		rv, inR := rBy[n]
		if !inR {
			out = append(out, clone(e))
			continue
		}
		if equal(rv, e) {
			continue // the build adds it, unchanged
		}
		nv, err := project(nil, rv, e, append(p[:len(p):len(p)], step{list: true, name: n}), object)
		if err != nil {
			return nil, err
		}
		if m, ok := nv.(map[string]any); ok {
			m["name"] = n
		}
		out = append(out, nv)
	}
	return out, nil
}

// projectUnnamed handles a list whose elements cannot be paired by name: when the build
// left the list as the source has it, the live list replaces it; when the build rewrote it
// too, there is no safe place for the edit (docs/kustomize.md#unplaceable-edits). Elements
// are never paired by position.
func projectUnnamed(s, r, l any, p fieldPath, object string) (any, error) {
	if equal(s, r) {
		return clone(l), nil
	}
	return nil, refuse(CodeUnplaceable, object, p.String(),
		"the build and the live object both changed this list and its elements have no unique name to pair them by; change it in the source files")
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}
