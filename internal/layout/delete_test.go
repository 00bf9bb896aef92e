package layout

import (
	"errors"
	"strings"
	"testing"
)

func TestDelete(t *testing.T) {
	a, b, c := configMap("ns", "a", "1"), configMap("ns", "b", "1"), configMap("ns", "c", "1")
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	tests := []struct {
		name    string
		content string
		want    string // "" = the file is deleted
	}{
		{name: "only document", content: b, want: ""},
		{name: "only document with empty ones around", content: "# c\n---\n" + b + "---\n", want: ""},
		{name: "middle", content: a + "---\n" + b + "---\n" + c, want: a + "---\n" + c},
		{name: "last", content: a + "---\n" + b, want: a},
		{name: "first, no separator of its own", content: b + "--- # second\n" + c, want: c},
		{name: "first, with separator", content: "---\n" + b + "---\n" + c, want: "---\n" + c},
		{name: "comments of the others kept", content: "# a head\n" + a + "# a foot\n---\n" + b + "---\n# c head\n" + c + "...\n",
			want: "# a head\n" + a + "# a foot\n---\n# c head\n" + c + "...\n"},
		{name: "crlf", content: crlf(a + "---\n" + b + "---\n" + c), want: crlf(a + "---\n" + c)},
		{name: "byte order mark", content: "\ufeff" + b + "---\n" + c, want: "\ufeff" + c},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{"f.yaml": tt.content}
			ix := mustIndex(t, f)
			edits, err := Delete(ix, f.read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "b"})
			if err != nil {
				t.Fatal(err)
			}
			if len(edits) != 1 || edits[0].Path != "f.yaml" {
				t.Fatalf("edits %q, want one edit of f.yaml", editPaths(edits))
			}
			if tt.want == "" {
				if edits[0].Content != nil {
					t.Errorf("want the file deleted, got\n%s", edits[0].Content)
				}
				return
			}
			if got := string(edits[0].Content); got != tt.want {
				t.Errorf("content:\n%q\nwant:\n%q", got, tt.want)
			}
			f.apply(t, ix, edits)
			if _, ok := ix.Lookup(Identity{Kind: "ConfigMap", Namespace: "ns", Name: "b"}); ok {
				t.Errorf("b still indexed")
			}
		})
	}
}

func TestDeleteAbsent(t *testing.T) {
	f := folder{"f.yaml": configMap("ns", "a", "1")}
	ix := mustIndex(t, f)
	edits, err := Delete(ix, f.read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "zzz"})
	if err != nil || edits != nil {
		t.Errorf("Delete absent = %q, %v; want nil, nil", editPaths(edits), err)
	}
}

func TestDeleteStaleIndexAndReadErrors(t *testing.T) {
	f := folder{"f.yaml": configMap("ns", "a", "1")}
	ix := mustIndex(t, f)
	f["f.yaml"] = configMap("ns", "x", "1")
	if _, err := Delete(ix, f.read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"}); !errors.Is(err, ErrStaleIndex) {
		t.Errorf("err = %v, want ErrStaleIndex", err)
	}
	boom := errors.New("boom")
	failing := func(string) ([]byte, bool, error) { return nil, false, boom }
	_, err := Delete(ix, failing, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "f.yaml") {
		t.Errorf("err = %v, want the read error with the path", err)
	}
}
