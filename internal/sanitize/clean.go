package sanitize

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Clean returns a deep copy of obj (the Object map of an unstructured.Unstructured) holding
// only what a written document may hold (docs/sanitize.md#what-is-removed): apiVersion,
// kind, metadata.name, metadata.namespace, user labels and annotations, and every other
// top-level field except status. Server-allocated values (a Service's clusterIP, clusterIPs
// and ipFamilies, a claim's volumeName filled in by the binder) are removed as well. Empty
// values inside the content are kept (docs/sanitize.md#empty-values-are-kept); labels or
// annotations left empty are dropped. obj is not modified. Clean is idempotent.
func Clean(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k == "metadata" || isDroppedTopLevel(k) {
			continue
		}
		out[k] = copyValue(v)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if cleaned := cleanMetadata(meta); len(cleaned) > 0 {
		out["metadata"] = cleaned
	}
	removeAllocated(out, meta)
	removeNullTemplateTimestamps(out)
	removeDeprecatedAliases(out)
	return out
}

// CleanUnstructured is Clean for an *unstructured.Unstructured; nil gives nil.
func CleanUnstructured(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: Clean(u.Object)}
}

func isDroppedTopLevel(key string) bool {
	for _, k := range droppedTopLevel {
		if k == key {
			return true
		}
	}
	return false
}

func cleanMetadata(meta map[string]any) map[string]any {
	out := map[string]any{}
	for _, key := range metadataKept {
		v, ok := meta[key]
		if !ok {
			continue
		}
		switch key {
		case "labels":
			if m := filterStringMap(v, keepLabel); len(m) > 0 {
				out[key] = m
			}
		case "annotations":
			if m := filterStringMap(v, keepAnnotation); len(m) > 0 {
				out[key] = m
			}
		default:
			out[key] = copyValue(v)
		}
	}
	return out
}

// filterStringMap copies the entries of a labels or annotations map that keep accepts.
func filterStringMap(v any, keep func(string) bool) map[string]any {
	m, ok := copyValue(v).(map[string]any)
	if !ok {
		return nil
	}
	for k := range m {
		if !keep(k) {
			delete(m, k)
		}
	}
	return m
}

func keepLabel(key string) bool {
	return !hasAnyPrefix(key, droppedLabelPrefixes[:])
}

func keepAnnotation(key string) bool {
	for _, k := range droppedAnnotations {
		if k == key {
			return false
		}
	}
	return !hasAnyPrefix(key, droppedAnnotationPrefixes[:])
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
