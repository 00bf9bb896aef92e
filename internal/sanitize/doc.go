// Package sanitize turns a live Kubernetes object into the clean, stable YAML document that
// is written to Git (docs/sanitize.md).
//
//   - Clean keeps only what a person would write: apiVersion, kind, name, namespace, user
//     labels and annotations, and the object's content. Server bookkeeping, applier
//     bookkeeping and server-allocated values are removed (docs/sanitize.md#what-is-removed);
//     meaningful empty values in the content are kept
//     (docs/sanitize.md#empty-values-are-kept).
//   - Document renders a cleaned object as YAML bytes that depend only on the object, never
//     on map order or time (docs/sanitize.md#the-byte-format). Parse reads such a document
//     back.
//   - Reduce and Defaulter tell server defaults from edits
//     (docs/sanitize.md#server-defaults-are-not-edits): a field that the document in Git
//     omits and whose live value is exactly what the API server would default it to is not
//     an edit, and is left out again. Defaulter asks the API server (a server-side dry-run
//     update) instead of keeping a list of defaults.
//
// Everything except Defaulter is pure and works on the JSON-shaped maps of
// unstructured.Unstructured (map[string]any, []any, string, bool, int64, float64, nil).
// See docs/sanitize.md for what is removed and why.
package sanitize
