package secrets

import (
	"reflect"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/config"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// formatDocs are documents of every shape a sanitized object can take, and a few a sealed
// file edited by hand can.
var formatDocs = map[string]string{
	"secret":   "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: team-a\n  labels:\n    app: web\ndata:\n  password: c2VjcmV0\n  user: YWRtaW4=\nstringData:\n  token: abc\ntype: Opaque\n",
	"scalars":  "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  int: 42\n  negative: -7\n  float: 3.25\n  exp: 1e3\n  bool: true\n  off: false\n  none: null\n  tilde: ~\n  empty: \"\"\n  quoted: \"42\"\n  yes: \"yes\"\n  octal: 0o17\n  hex: 0x1F\n  date: 2026-12-03\n  stamp: 2026-12-03T06:00:00Z\n",
	"strings":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  multi: |\n    line one\n    line two\n  folded: >\n    folded text\n  keep: |+\n    kept\n\n  colon: \"a: b\"\n  hash: \"a # b\"\n  unicode: \"héllo ✓\"\n  tab: \"a\\tb\"\n  lead: \" space\"\n  dash: \"- x\"\n  star: \"*x\"\n  \"key with space\": v\n  \"123\": numeric key\n",
	"nested":   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n        args: [\"--a\", \"--b\"]\n        env:\n        - {name: A, value: \"1\"}\n        ports: []\n      volumes: {}\n  list:\n  - - nested\n    - 2\n  - null\n",
	"anchors":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nbase: &b\n  x: 1\n  y: [1, 2]\ncopy: *b\nscalar: &s value\nagain: *s\n",
	"empty":    "",
	"odd keys": "true: 1\n2: two\nnull: x\ninf: .inf\n",
}

// The operator reads and writes SOPS YAML itself (sops_yaml.go); SOPS's own YAML store is
// the reference: every document reads into the same tree, with the same value types (they
// decide what SOPS records as each value's type), and every tree is written byte for byte as
// SOPS writes it, plain and sealed.
func TestSOPSYAMLIsReadAndWrittenAsSOPSDoes(t *testing.T) {
	store := sopsyaml.NewStore(&config.YAMLStoreConfig{Indent: Indent})
	for name, doc := range formatDocs {
		t.Run(name, func(t *testing.T) {
			want, err := store.LoadPlainFile([]byte(doc))
			if err != nil {
				t.Fatalf("SOPS cannot read it: %v", err)
			}
			got, err := loadSOPSBranch([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				if len(got) != 0 {
					t.Fatalf("read %v from an empty document", got)
				}
				return
			}
			if !reflect.DeepEqual(got, want[0]) {
				t.Fatalf("read\n%#v\nSOPS reads\n%#v", got, want[0])
			}
			wantOut, err := store.EmitPlainFile(want)
			if err != nil {
				t.Fatal(err)
			}
			gotOut, err := emitSOPSBranches(want)
			if err != nil {
				t.Fatal(err)
			}
			if string(gotOut) != string(wantOut) {
				t.Fatalf("wrote\n%s\nSOPS writes\n%s", gotOut, wantOut)
			}
		})
	}
}

func TestASealedDocumentIsWrittenAndReadAsSOPSDoes(t *testing.T) {
	store := sopsyaml.NewStore(&config.YAMLStoreConfig{Indent: Indent})
	s := newSealer(t, newIdentity(t))
	for _, name := range []string{"secret", "nested", "scalars"} {
		t.Run(name, func(t *testing.T) {
			sealed, err := s.Seal([]byte(formatDocs[name]))
			if err != nil {
				t.Fatal(err)
			}
			want, err := store.LoadEncryptedFile(sealed)
			if err != nil {
				t.Fatalf("SOPS cannot read the sealed document: %v", err)
			}
			got, err := loadSealed(sealed)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Branches, want.Branches) || !reflect.DeepEqual(got.Metadata, want.Metadata) {
				t.Fatalf("read the sealed document differently from SOPS:\n%#v\n%#v", got, want)
			}
			wantOut, err := store.EmitEncryptedFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if string(sealed) != string(wantOut) {
				t.Fatalf("sealed\n%s\nSOPS writes that tree as\n%s", sealed, wantOut)
			}
			if !strings.Contains(string(sealed), "\nsops:\n") {
				t.Fatalf("no sops metadata:\n%s", sealed)
			}
		})
	}
}

// A document that is not one mapping, defines a key twice, or expands its aliases past the
// bound is refused, as SOPS refuses the first two.
func TestSOPSYAMLRefusesWhatIsNotOneMapping(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	for name, doc := range map[string]string{
		"a list":          "- a\n- b\n",
		"a scalar":        "just text\n",
		"two documents":   "a: 1\n---\nb: 2\n",
		"a key twice":     "a: 1\na: 2\n",
		"aliases":         bomb,
		"not yaml at all": "a: [\n",
	} {
		if _, err := loadSOPSBranch([]byte(doc)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
