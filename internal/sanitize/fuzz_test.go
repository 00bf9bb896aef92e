package sanitize

import "testing"

// Any document is parsed or refused with an error, never a panic or a runaway expansion.
func FuzzParse(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"))
	f.Add([]byte("{\"a\": 1e400}"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, _ = Parse(doc)
	})
}
