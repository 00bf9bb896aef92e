package layout

import (
	"fmt"
	"testing"
)

// BenchmarkUpsertInPlace edits one existing document in folders of different
// sizes. The index lookup is O(1), so the time per Upsert must not grow with
// the folder.
func BenchmarkUpsertInPlace(b *testing.B) {
	for _, n := range []int{100, 20000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			f := folder{}
			for i := range n {
				name := fmt.Sprintf("cfg-%05d", i)
				f[fmt.Sprintf("ns-%d/core/configmaps/%s.yaml", i%50, name)] = configMap(fmt.Sprintf("ns-%d", i%50), name, "v1")
			}
			ix, err := BuildIndex(f.files())
			if err != nil {
				b.Fatal(err)
			}
			doc := []byte(configMap("ns-7", "cfg-00007", "v2"))
			b.ReportAllocs()
			for b.Loop() {
				edits, err := Upsert(ix, f.read, cmType(), doc, Placement{})
				if err != nil || len(edits) != 1 {
					b.Fatalf("edits %v, err %v", editPaths(edits), err)
				}
			}
		})
	}
}
