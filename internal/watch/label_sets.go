package watch

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxLabelSets bounds the distinct label sets a stream shares; past it, an object with a
// set not seen yet keeps a map of its own.
const maxLabelSets = 4096

// labelSets gives the objects of one stream whose labels are equal one map between them:
// the objects of an application carry the same few labels, and the stream keeps every
// object it watches (docs/watch-streams.md#what-a-stream-holds). The maps it returns are
// read, never changed.
type labelSets struct {
	sets map[string]map[string]string
}

// of returns the labels of u, shared with the objects before it that have the same.
func (l *labelSets) of(u *unstructured.Unstructured) map[string]string {
	labels := u.GetLabels()
	if len(labels) == 0 {
		return nil
	}
	key := labelKey(labels)
	if shared, ok := l.sets[key]; ok {
		return shared
	}
	if l.sets == nil {
		l.sets = map[string]map[string]string{}
	}
	if len(l.sets) < maxLabelSets {
		l.sets[key] = labels
	}
	return labels
}

// labelKey writes a label set as one string, keys in order; a label key or value never
// holds a NUL byte.
func labelKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}
