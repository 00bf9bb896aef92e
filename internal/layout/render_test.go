package layout

import (
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestCompactSequences(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "nested lists",
			in:   "spec:\n  containers:\n    - name: a\n      ports:\n        - 80\n        - 81\n      env: []\n    - name: b\n  other: x\n",
			want: "spec:\n  containers:\n  - name: a\n    ports:\n    - 80\n    - 81\n    env: []\n  - name: b\n  other: x\n"},
		{name: "block scalar inside a list",
			in:   "items:\n  - script: |\n      a\n\n      b\n  - x\nafter: 1\n",
			want: "items:\n- script: |\n    a\n\n    b\n- x\nafter: 1\n"},
		{name: "list of lists is left alone",
			in:   "a:\n  - - 1\n    - 2\n",
			want: "a:\n- - 1\n  - 2\n"},
		{name: "nothing to do", in: "a: 1\n", want: "a: 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compactSequences(tt.in); got != tt.want {
				t.Errorf("compactSequences:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestPatchLines(t *testing.T) {
	split := splitLines
	tests := []struct {
		name             string
		target, from, to string
		want             string
	}{
		{name: "blank lines of the target stay",
			target: "a: 1\n\nb: 2\n\nc: 3\n", from: "a: 1\nb: 2\nc: 3\n", to: "a: 1\nb: 5\nc: 3\n",
			want: "a: 1\n\nb: 5\n\nc: 3\n"},
		{name: "insertion before a blank line",
			target: "a: 1\n\nc: 3\n", from: "a: 1\nc: 3\n", to: "a: 1\nb: 2\nc: 3\n",
			want: "a: 1\nb: 2\n\nc: 3\n"},
		{name: "differently written line is replaced",
			target: "a:   1\nb: 2\n", from: "a: 1\nb: 2\n", to: "a: 7\nb: 2\n",
			want: "a: 7\nb: 2\n"},
		{name: "unchanged differently written line stays",
			target: "a:   1\nb: 2\n", from: "a: 1\nb: 2\n", to: "a: 1\nb: 3\n",
			want: "a:   1\nb: 3\n"},
		{name: "deletion at the end",
			target: "a: 1\nb: 2\n", from: "a: 1\nb: 2\n", to: "a: 1\n",
			want: "a: 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := patchLines(split(tt.target), split(tt.from), split(tt.to))
			if !ok || got != tt.want {
				t.Errorf("patchLines = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func TestSplitDocumentsRoundTrip(t *testing.T) {
	for _, in := range []string{"", "---", "---\n", "a\n---\nb", "\ufeff---\r\na\r\n--- # x\r\n", "...\n", "----\n---x\n--- \n"} {
		if got := string(splitDocuments(in).join()); got != in {
			t.Errorf("join(split(%q)) = %q", in, got)
		}
	}
	if n := len(splitDocuments("----\n---x\na: 1\n").segs); n != 1 {
		t.Errorf("lines that only start with --- split the file into %d segments", n)
	}
}

func TestASequenceEntryLineIsFoundWhereverItIs(t *testing.T) {
	for text, want := range map[string]bool{
		"a: 1\nb: x-y\n":            false,
		"a: -1\n":                   false,
		"a:\n  - 1\n":               true,
		"a:\n- 1\n":                 true,
		"a:\n  -\n    b: 1\n":       true,
		"a:\r\n  -\r\n    b: 1\r\n": true,
		"a: |\n  - text\n":          true, // a block scalar's line: only costs a parse
		"---\na: 1\n":               false,
	} {
		if got := hasSequenceEntry(text); got != want {
			t.Errorf("hasSequenceEntry(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestAnEditedCopyLeavesTheParsedDocumentAsItWas(t *testing.T) {
	const text = "base: &b\n  x: 1\nuse: *b\nlist:\n- a\n"
	parsed, err := parseDocument(text)
	if err != nil {
		t.Fatal(err)
	}
	before, err := encodeNode(parsed)
	if err != nil {
		t.Fatal(err)
	}
	copied := cloneNode(parsed)
	root := copied.Content[0]
	root.Content[1].Content[1].Value = "2" // base.x in the copy
	root.Content[5].Content = append(root.Content[5].Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "b"})

	if got, err := encodeNode(parsed); err != nil || got != before {
		t.Errorf("the parsed document changed with its copy:\n%s(err %v)", got, err)
	}
	alias := root.Content[3]
	if alias.Kind != yaml.AliasNode || alias.Alias != root.Content[1] {
		t.Fatalf("the copy's alias does not point to the copy's anchor")
	}
	want := map[string]any{"base": map[string]any{"x": 2}, "use": map[string]any{"x": 2}, "list": []any{"a", "b"}}
	if got, err := meaningOf(copied); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("the copy means %v (err %v), want %v", got, err, want)
	}
}
