package sanitize

// Reduce is the pure part of telling server defaults from edits
// (docs/sanitize.md#server-defaults-are-not-edits). source is the cleaned document a person
// wrote in Git, live the cleaned live object, defaulted the cleaned object the API server
// makes of source (see Defaulter). The result is live without the fields that source omits
// and whose live value equals the defaulted value at the same place: server defaults and
// values the server keeps on update are not edits. Everything else in live stays, so a
// field that source omits but whose live value differs from the defaulted one is kept (a
// real edit).
//
// Maps are compared key by key, also below a field that source omits, so that an edit to one
// default (strategy.rollingUpdate.maxSurge) keeps only that field. Lists are followed element
// by element when every element is a map with a unique string "name" (containers, ports,
// env, volumes), matched by name; otherwise when the lists have the same length, by
// position; otherwise live's list is kept whole. None of the arguments is modified.
func Reduce(source, live, defaulted map[string]any) map[string]any {
	out, _ := reduceMap(source, live, defaulted, true).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// reduceValue reduces one live value. inSource tells whether source holds the field at all
// (a field present with a null value counts as present).
func reduceValue(src, live, def any, inSource bool) any {
	switch l := live.(type) {
	case map[string]any:
		s, _ := src.(map[string]any)
		d, _ := def.(map[string]any)
		if (inSource && s == nil) || (!inSource && d == nil) {
			// A map where source holds something else, or with nothing to compare to.
			return copyValue(l)
		}
		return reduceMap(s, l, d, inSource)
	case []any:
		s, _ := src.([]any)
		d, _ := def.([]any)
		if inSource && s == nil {
			return copyValue(l)
		}
		return reduceList(s, l, d, inSource)
	}
	return copyValue(live)
}

func reduceMap(src, live, def map[string]any, inSource bool) any {
	out := make(map[string]any, len(live))
	for k, lv := range live {
		sv, kInSource := src[k]
		kInSource = kInSource && inSource
		dv, inDefault := def[k]
		if !kInSource && inDefault && equalValues(lv, dv) {
			continue // a default the source left to the server
		}
		if !kInSource && !inDefault {
			out[k] = copyValue(lv)
			continue
		}
		out[k] = reduceValue(sv, lv, dv, kInSource)
	}
	if !inSource && len(out) == 0 && len(live) > 0 {
		// Every field matched a default but live still differs from the default map (it
		// lacks a defaulted field): write live as it is rather than an empty map that the
		// server would fill differently.
		return copyValue(live)
	}
	return out
}

func reduceList(src, live, def []any, inSource bool) any {
	if inSource {
		if pairs, ok := pairByName(src, live); ok {
			defByName, dOK := pairByName(def, live)
			out := make([]any, len(live))
			for i, l := range live {
				var d any
				if dOK {
					d = defByName[i]
				}
				s := pairs[i]
				out[i] = reduceValue(s, l, d, s != nil)
			}
			return out
		}
		if len(src) == len(live) && len(def) == len(live) {
			out := make([]any, len(live))
			for i := range live {
				out[i] = reduceValue(src[i], live[i], def[i], true)
			}
			return out
		}
		return copyValue(live)
	}
	// Source omits the whole list: compare with the defaulted list alone.
	if pairs, ok := pairByName(def, live); ok {
		out := make([]any, len(live))
		for i, l := range live {
			out[i] = reduceValue(nil, l, pairs[i], false)
		}
		return out
	}
	if len(def) == len(live) {
		out := make([]any, len(live))
		for i := range live {
			out[i] = reduceValue(nil, live[i], def[i], false)
		}
		return out
	}
	return copyValue(live)
}

// pairByName returns, for each element of live, the element of other with the same "name"
// (nil when other has none). It reports false unless every element of both lists is a map
// with a string name that is unique in its list.
func pairByName(other, live []any) ([]any, bool) {
	liveNames, ok := uniqueNames(live)
	if !ok {
		return nil, false
	}
	otherNames, ok := uniqueNames(other)
	if !ok {
		return nil, false
	}
	byName := make(map[string]any, len(other))
	for i, n := range otherNames {
		byName[n] = other[i]
	}
	out := make([]any, len(live))
	for i, n := range liveNames {
		out[i] = byName[n]
	}
	return out, true
}

func uniqueNames(list []any) ([]string, bool) {
	names := make([]string, len(list))
	seen := make(map[string]bool, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		n, ok := m["name"].(string)
		if !ok || seen[n] {
			return nil, false
		}
		seen[n] = true
		names[i] = n
	}
	return names, true
}

// OmitsNothing reports whether source holds every field of live, at every depth, with list
// elements paired as Reduce pairs them. Then Reduce returns live whole whatever the server's
// defaults are: no field of live can be a default the source left out, and the dry-run that
// learns the defaults can be skipped (docs/sanitize.md#when-no-dry-run-is-asked).
func OmitsNothing(source, live map[string]any) bool {
	for k, lv := range live {
		sv, ok := source[k]
		if !ok || !omitsNothing(sv, lv) {
			return false
		}
	}
	return true
}

// omitsNothing follows reduceValue for a field source holds.
func omitsNothing(src, live any) bool {
	switch l := live.(type) {
	case map[string]any:
		s, _ := src.(map[string]any)
		if s == nil {
			return true // Reduce keeps a map whole where source holds something else
		}
		return OmitsNothing(s, l)
	case []any:
		s, _ := src.([]any)
		if s == nil {
			return true // Reduce keeps a list whole where source holds something else
		}
		if pairs, ok := pairByName(s, l); ok {
			for i, lv := range l {
				if pairs[i] == nil || !omitsNothing(pairs[i], lv) {
					return false
				}
			}
			return true
		}
		if len(s) != len(l) {
			return true // kept whole: neither paired by name nor by position
		}
		for i := range l {
			if !omitsNothing(s[i], l[i]) {
				return false
			}
		}
		return true
	}
	return true
}
