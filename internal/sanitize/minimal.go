package sanitize

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Bounds of the questions one minimal document may cost (docs/sanitize.md#minimal-documents).
const (
	// minimalRounds bounds the dry-runs that find which fields the server needs in the
	// skeleton (one per round of its validation causes).
	minimalRounds = 8
	// minimalPasses bounds how often the skeleton is asked again with the values the
	// server filled in differently.
	minimalPasses = 3
	// verifyRounds bounds the dry-runs that check the reduced document gives the live object
	// back, each restoring what the previous one showed missing.
	verifyRounds = 3
)

// minimalKey stands for the source in the cache keys of minimal documents: no real source
// document is this.
var minimalKey = []byte("\x00minimal")

// MinimalDocument returns the document to write for an object that has no document in Git
// yet: the smallest one the API server turns into the live object
// (docs/sanitize.md#minimal-documents). Every value the server fills in by itself when it is
// left out is left out; which ones is learned from the server, never from a list kept by
// hand:
//
//  1. the skeleton keeps the object's identity and metadata and the shape of its content
//     (maps, and list elements with their names) without any other value;
//  2. server-side dry-run updates of the skeleton (dryRun=All, never persisted) show which
//     values it needs (their validation causes), which are copied back from the live object,
//     and finally what the server makes of it;
//  3. Reduce keeps every live value the server did not fill in with the same value, and
//     empty maps and lists are taken out;
//  4. a dry-run of the result must give the live object back; what differs is restored from
//     the live object and checked again.
//
// When any step cannot be completed — the server refuses in a way that names nothing to
// restore, or the bounds are reached — liveDoc is returned as it is: a longer document is
// always right, a shorter one only when the server confirmed it. Other failures (no
// permission, unreachable) are returned. Results are remembered by (gvr, liveDoc).
//
// shape, when not zero, is ShapeOf the object liveDoc was rendered from: when an object of
// that type and shape had nothing to omit, or the server could not be brought to answer for
// it, liveDoc is returned without being parsed again (and without being remembered). A
// shape that does not match liveDoc can only make the answer liveDoc itself, which is
// always right.
func (d *Defaulter) MinimalDocument(ctx context.Context, gvr schema.GroupVersionResource, liveDoc []byte, shape Shape) ([]byte, error) {
	key := keyOf(gvr, minimalKey, liveDoc)
	if out, ok := d.cache.get(key); ok {
		return out, nil
	}
	if d.shapes.writtenAsLive(gvr, shape) {
		return liveDoc, nil
	}
	live, err := Parse(liveDoc)
	if err != nil {
		return nil, fmt.Errorf("minimal %s: %w", gvr.Resource, err)
	}
	reduced, err := d.minimal(ctx, gvr, Clean(live))
	if err != nil {
		return nil, fmt.Errorf("minimal: %w", err)
	}
	out := liveDoc
	if reduced != nil {
		if out, err = Document(reduced); err != nil {
			return nil, fmt.Errorf("minimal %s: %w", gvr.Resource, err)
		}
	}
	d.cache.put(key, out)
	return out, nil
}

// minimal returns the reduced object, or nil when live is to be written as it is.
func (d *Defaulter) minimal(ctx context.Context, gvr schema.GroupVersionResource, live map[string]any) (map[string]any, error) {
	s, shape := skeletonOf(live)
	if d.shapes.writtenAsLive(gvr, shape) {
		return nil, nil
	}
	known, _ := d.shapes.get(gvr, shape)
	restored := append([][]any(nil), known.restored...)
	for _, p := range restored {
		restore(s, live, p)
	}
	var full map[string]any
	for pass := 0; ; pass++ {
		defaulted, err := d.defaultedSkeleton(ctx, gvr, s, live, &restored)
		if err != nil {
			return nil, err
		}
		if defaulted == nil {
			d.shapes.put(gvr, shape, shapeKnowledge{unanswered: true})
			return nil, nil
		}
		full = Reduce(s, live, defaulted)
		// A value the server fills in otherwise (a Service's type) changes what it fills in
		// beside it (externalTrafficPolicy): ask again with it.
		added := 0
		for _, p := range valuesDiffering(full, defaulted, nil) {
			if restore(s, live, p) {
				restored, added = append(restored, p), added+1
			}
		}
		if added == 0 || pass == minimalPasses-1 {
			break
		}
	}
	reduced := dropEmpty(copyValue(full)).(map[string]any)
	if equalValues(reduced, live) {
		d.shapes.put(gvr, shape, shapeKnowledge{nothingToOmit: true})
		return nil, nil
	}
	d.shapes.put(gvr, shape, shapeKnowledge{restored: restored})
	out, err := d.verify(ctx, gvr, reduced, full, live)
	if err == nil && out == nil {
		d.shapes.put(gvr, shape, shapeKnowledge{unanswered: true})
	}
	return out, err
}

// defaultedSkeleton asks the server what it makes of s, restoring into s from live, one
// round at a time, the first field each refusal names (one at a time: a value derived from
// another, such as a Service port's targetPort, is then derived again rather than copied).
// nil when the server keeps refusing.
func (d *Defaulter) defaultedSkeleton(ctx context.Context, gvr schema.GroupVersionResource, s, live map[string]any, restored *[][]any) (map[string]any, error) {
	for range minimalRounds {
		out, err := d.Defaulted(ctx, gvr, s)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, ErrDryRunRefused) {
			return nil, err
		}
		paths := restoreCauses(s, live, err)
		if len(paths) == 0 {
			return nil, nil // refused for something no live value answers
		}
		*restored = append(*restored, paths...)
	}
	return nil, nil
}

// keptByUpdate restores into the skeleton the values the dry-run update would keep from the
// existing object instead of defaulting them, so that they are never taken for defaults: a
// Service's clusterIP "None" and its node ports, the ones Clean left (a user's choice).
func keptByUpdate(s, live map[string]any) {
	if kind, _ := live["kind"].(string); kind != "Service" || groupOf(fmt.Sprint(live["apiVersion"])) != "" {
		return
	}
	restore(s, live, []any{"spec", "clusterIP"})
	restore(s, live, []any{"spec", "healthCheckNodePort"})
	ports, _ := valueAt(live, []any{"spec", "ports"}).([]any)
	for i := range ports {
		restore(s, live, []any{"spec", "ports", i, "nodePort"})
	}
}

// verify asks the server what it makes of reduced, and restores what differs until the
// server gives live back: first as the reduction had it (an empty map that means
// something, such as emptyDir: {}), else as live has it. nil when the server does not give
// live back within verifyRounds.
func (d *Defaulter) verify(ctx context.Context, gvr schema.GroupVersionResource, reduced, full, live map[string]any) (map[string]any, error) {
	for range verifyRounds {
		got, err := d.Defaulted(ctx, gvr, reduced)
		if err != nil && !errors.Is(err, ErrDryRunRefused) {
			return nil, err
		}
		var paths [][]any
		if err != nil {
			paths = causePaths(err, live, "")
		} else {
			var ok bool
			if paths, ok = differences(live, got, nil); !ok {
				return nil, nil // the server adds something live lacks: only live itself is sure
			}
			if len(paths) == 0 {
				return reduced, nil
			}
		}
		changed := false
		for _, p := range paths {
			changed = restore(reduced, full, p) || restore(reduced, live, p) || changed
		}
		if !changed {
			return nil, nil
		}
	}
	return nil, nil
}

// restoreCauses copies into s from live what the refusal err names, and returns the paths
// that changed s. Every field the server calls missing ("Required value": a Role's rules'
// verbs) is restored in one round; otherwise the first field s does not hold as live does,
// alone. A field that holds a map (an immutability refusal names a whole spec) gets its own
// values and lists first, its maps staying shapes to be asked about; only when that changes
// nothing is it copied whole.
func restoreCauses(s, live map[string]any, err error) [][]any {
	var changed [][]any
	for _, p := range causePaths(err, live, metav1.CauseTypeFieldValueRequired) {
		if restore(s, live, p) {
			changed = append(changed, p)
		}
	}
	if len(changed) > 0 {
		return changed
	}
	for _, p := range causePaths(err, live, "") {
		if restoreValuesOf(s, live, p) || restore(s, live, p) {
			return [][]any{p}
		}
	}
	return nil
}

// restoreValuesOf restores the children of the map at path that are not maps.
func restoreValuesOf(s, live map[string]any, path []any) bool {
	m, ok := valueAt(live, path).(map[string]any)
	if !ok {
		return false
	}
	changed := false
	for k, v := range m {
		if _, isMap := v.(map[string]any); !isMap {
			changed = restore(s, live, appendPath(path, k)) || changed
		}
	}
	return changed
}

// valueAt returns the value at path in v, nil when there is none.
func valueAt(v any, path []any) any {
	for _, step := range path {
		switch k := step.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// valuesDiffering lists the paths where reduced keeps a value the server filled in
// differently (both hold one: a leaf, or a list of another length).
func valuesDiffering(reduced, defaulted any, at []any) [][]any {
	switch r := reduced.(type) {
	case map[string]any:
		d, ok := defaulted.(map[string]any)
		if !ok {
			return [][]any{at}
		}
		var out [][]any
		for k, rv := range r {
			if dv, in := d[k]; in {
				out = append(out, valuesDiffering(rv, dv, appendPath(at, k))...)
			}
		}
		return out
	case []any:
		d, ok := defaulted.([]any)
		if ok && len(d) == len(r) {
			var out [][]any
			for i := range r {
				out = append(out, valuesDiffering(r[i], d[i], appendPath(at, i))...)
			}
			return out
		}
	}
	if !equalValues(reduced, defaulted) {
		return [][]any{at}
	}
	return nil
}

// skeletonOf is the skeleton of live that keptByUpdate completed, and the Shape it names.
func skeletonOf(live map[string]any) (map[string]any, Shape) {
	s := skeleton(live)
	keptByUpdate(s, live)
	return s, shapeOfSkeleton(s)
}

// skeleton keeps apiVersion, kind and metadata of live, and the shape of everything else:
// maps, and lists of maps with each element's name, without any other value.
func skeleton(live map[string]any) map[string]any {
	out := contentSkeleton(live)
	if md, ok := live["metadata"]; ok {
		out["metadata"] = copyValue(md)
	}
	return out
}

// contentSkeleton is skeleton without the metadata.
func contentSkeleton(live map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range live {
		switch k {
		case "metadata":
		case "apiVersion", "kind":
			out[k] = copyValue(v)
		default:
			if shaped, ok := shapeOf(v); ok {
				out[k] = shaped
			}
		}
	}
	return out
}

// shapeOf returns the maps and lists of maps of v without their other values (a list
// element keeps its "name", or its metadata.name, which pairs it with the live element); ok is false for a
// value that has no shape (a scalar, a list of scalars, an empty list).
func shapeOf(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if shaped, ok := shapeOf(e); ok {
				out[k] = shaped
			}
		}
		return out, true
	case []any:
		if len(t) == 0 {
			return nil, false
		}
		out := make([]any, len(t))
		for i, e := range t {
			m, isMap := e.(map[string]any)
			if !isMap {
				return nil, false
			}
			shaped, _ := shapeOf(m)
			if name, ok := m["name"]; ok {
				shaped.(map[string]any)["name"] = name
			}
			// An embedded object (a StatefulSet's claim template) is named in its metadata.
			if name, ok := valueAt(m, []any{"metadata", "name"}).(string); ok {
				shaped.(map[string]any)["metadata"].(map[string]any)["name"] = name
			}
			out[i] = shaped
		}
		return out, true
	}
	return nil, false
}

// dropEmpty removes, below the top level too, map entries whose value is an empty map or
// list once their own empty entries are gone. List elements stay (their position counts).
func dropEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			e = dropEmpty(e)
			if isEmptyContainer(e) {
				delete(t, k)
				continue
			}
			t[k] = e
		}
	case []any:
		for i, e := range t {
			t[i] = dropEmpty(e)
		}
	}
	return v
}

func isEmptyContainer(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// differences lists the paths where got differs from live: a value missing or different in
// got, a list of another length. ok is false when got holds a field live lacks.
func differences(live, got any, at []any) (paths [][]any, ok bool) {
	switch l := live.(type) {
	case map[string]any:
		g, isMap := got.(map[string]any)
		if !isMap {
			return [][]any{at}, true
		}
		for k := range g {
			if _, in := l[k]; !in {
				return nil, false
			}
		}
		for k, lv := range l {
			gv, in := g[k]
			if !in {
				paths = append(paths, appendPath(at, k))
				continue
			}
			sub, subOK := differences(lv, gv, appendPath(at, k))
			if !subOK {
				return nil, false
			}
			paths = append(paths, sub...)
		}
		return paths, true
	case []any:
		g, isList := got.([]any)
		if !isList || len(g) != len(l) {
			return [][]any{at}, true
		}
		for i := range l {
			sub, subOK := differences(l[i], g[i], appendPath(at, i))
			if !subOK {
				return nil, false
			}
			paths = append(paths, sub...)
		}
		return paths, true
	}
	if !equalValues(live, got) {
		return [][]any{at}, true
	}
	return nil, true
}

func appendPath(at []any, step any) []any {
	return append(append(make([]any, 0, len(at)+1), at...), step)
}

// restore copies live's value at path into dst (a map), adding what dst lacks on the way
// and replacing a list of another length whole; it reports whether dst changed.
func restore(dst, live map[string]any, path []any) bool {
	if len(path) == 0 {
		return false
	}
	_, changed := restoreAt(dst, live, path)
	return changed
}

func restoreAt(dst, src any, path []any) (any, bool) {
	if len(path) == 0 {
		return replaced(dst, src)
	}
	switch step := path[0].(type) {
	case string:
		sm, ok := src.(map[string]any)
		if !ok {
			return dst, false
		}
		sv, ok := sm[step]
		if !ok {
			return dst, false
		}
		dm, ok := dst.(map[string]any)
		if !ok {
			return replaced(dst, src)
		}
		dv, present := dm[step]
		if !present {
			dm[step] = copyValue(sv)
			return dm, true
		}
		nv, changed := restoreAt(dv, sv, path[1:])
		dm[step] = nv
		return dm, changed
	case int:
		sl, ok := src.([]any)
		if !ok || step < 0 || step >= len(sl) {
			return dst, false
		}
		dl, ok := dst.([]any)
		if !ok || len(dl) != len(sl) {
			return replaced(dst, src)
		}
		nv, changed := restoreAt(dl[step], sl[step], path[1:])
		dl[step] = nv
		return dl, changed
	}
	return dst, false
}

func replaced(dst, src any) (any, bool) {
	if equalValues(dst, src) {
		return dst, false
	}
	return copyValue(src), true
}
