package layout

import (
	"reflect"
	"testing"
)

// A document prepared ahead (in parallel, before the plan reaches it) is written exactly as
// Upsert writes it, whether the guess that the folder lacks it was right or wrong, and a
// document Upsert refuses is refused with the same error.
func TestAPreparedUpsertWritesWhatAnUpsertWrites(t *testing.T) {
	held := folder{"ns/core/configmaps/cfg.yaml": "# kept\n" + configMap("ns", "cfg", "1")}
	cases := []struct {
		name     string
		existing folder
		doc      string
	}{
		{"new document", folder{}, configMap("ns", "cfg", "1")},
		{"new document in flow style", folder{}, `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "ns"}, "data": {"k": "yes"}}`},
		{"edit of a held document", held, configMap("ns", "cfg", "2")},
		{"held document unchanged", held, configMap("ns", "cfg", "1")},
		{"new document beside a held one", held, configMap("ns", "other", "1")},
		{"invalid YAML", folder{}, "a: [\n"},
		{"unsafe name", folder{}, configMap("ns", "../x", "1")},
		{"wrong type", folder{}, secretDoc("ns", "db")},
	}
	for _, c := range cases {
		ix := mustIndex(t, c.existing)
		want, wantErr := Upsert(ix, c.existing.read, cmType(), []byte(c.doc), Placement{})
		for _, absent := range []bool{true, false} {
			got, err := UpsertPrepared(ix, c.existing.read, cmType(), Prepare([]byte(c.doc), absent), Placement{})
			if !reflect.DeepEqual(got, want) || errText(err) != errText(wantErr) {
				t.Errorf("%s (absent %v): got %q, %v; Upsert wrote %q, %v", c.name, absent, got, err, want, wantErr)
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A rendered document is written unparsed only as a new file of an unsealed object whose
// identity lines name it alone; an object the folder holds (an edit), a sealed document, an
// unsafe name and a document that names another object or more than one take the path
// Upsert takes, with the same result.
func TestARenderedDocumentIsParsedWhereAnUpsertNeedsIt(t *testing.T) {
	held := folder{"ns/core/configmaps/cfg.yaml": "# kept\n" + configMap("ns", "cfg", "1")}
	encrypted := configMap("ns", "enc", "1") + "sops:\n  version: 3.9.0\n"
	cases := []struct {
		name     string
		existing folder
		typ      TypeInfo
		doc      string
		id       Identity
	}{
		{"edit of a held document", held, cmType(), configMap("ns", "cfg", "2"), Identity{Kind: "ConfigMap", Namespace: "ns", Name: "cfg"}},
		{"core Secret", folder{}, secretType(), secretDoc("ns", "db"), Identity{Kind: "Secret", Namespace: "ns", Name: "db"}},
		{"encrypted document", folder{}, cmType(), encrypted, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "enc"}},
		{"unsafe name", folder{}, cmType(), configMap("ns", "../x", "1"), Identity{Kind: "ConfigMap", Namespace: "ns", Name: "../x"}},
		{"new document", folder{}, cmType(), configMap("ns", "cfg", "1"), Identity{Kind: "ConfigMap", Namespace: "ns", Name: "cfg"}},
		{"identity other than the document's", folder{}, cmType(), configMap("ns", "cfg", "1"), Identity{Kind: "ConfigMap", Namespace: "ns", Name: "other"}},
		{"two documents", folder{}, cmType(), configMap("ns", "cfg", "1") + "---\n" + configMap("ns", "b", "1"), Identity{Kind: "ConfigMap", Namespace: "ns", Name: "cfg"}},
	}
	for _, c := range cases {
		ix := mustIndex(t, c.existing)
		want, wantErr := Upsert(ix, c.existing.read, c.typ, []byte(c.doc), Placement{})
		got, err := UpsertPrepared(ix, c.existing.read, c.typ, PrepareRendered([]byte(c.doc), c.id), Placement{})
		if !reflect.DeepEqual(got, want) || errText(err) != errText(wantErr) {
			t.Errorf("%s: got %q, %v; Upsert wrote %q, %v", c.name, got, err, want, wantErr)
		}
	}
}
