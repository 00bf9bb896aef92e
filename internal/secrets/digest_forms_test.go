package secrets

import (
	"encoding/base64"
	"testing"
	"unicode/utf16"
)

// The annotation is found however YAML spells its key: the check that spares documents
// without it a parse must not miss one written with escapes, a tag or in UTF-16.
func TestTheDigestIsFoundInEveryFormOfItsKey(t *testing.T) {
	const value = DigestPrefix + "ab"
	escaped := `"gitops\x2Dreverser.io/sealed\u002Ddigest"`
	binary := "!!binary " + base64.StdEncoding.EncodeToString([]byte(DigestAnnotation))
	cases := map[string]string{
		"plain key":                  DigestAnnotation + ": " + value,
		"single-quoted key":          "'" + DigestAnnotation + "': " + value,
		"double-quoted with escapes": escaped + ": " + value,
		"binary tag":                 "? " + binary + "\n    : " + value,
		"escaped line break":         "? \"gitops-reverser.io/\\\n      sealed-digest\"\n    : " + value,
	}
	for name, line := range cases {
		doc := []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  annotations:\n    " + line + "\n")
		if d, ok := DigestOf(doc); !ok || d != value {
			t.Errorf("%s: DigestOf = %q %v, want %q", name, d, ok, value)
		}
	}
	utf8 := "metadata:\n  annotations:\n    " + DigestAnnotation + ": " + value + "\n"
	for _, bigEndian := range []bool{false, true} {
		doc := utf16Doc(utf8, bigEndian)
		if d, ok := DigestOf(doc); !ok || d != value {
			t.Errorf("UTF-16 (big endian %v): DigestOf = %q %v, want %q", bigEndian, d, ok, value)
		}
	}
}

// A document that cannot name the annotation has none, with or without the parse.
func TestADocumentWithoutTheAnnotationHasNoDigest(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    gitops-reverser.io/sealed: x\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  re: \"a\\\\b!\"\n",
	} {
		if d, ok := DigestOf([]byte(doc)); ok {
			t.Errorf("DigestOf(%q) = %q, want none", doc, d)
		}
	}
}

// utf16Doc encodes text as UTF-16 with its byte order mark.
func utf16Doc(text string, bigEndian bool) []byte {
	units := utf16.Encode([]rune(text))
	out := make([]byte, 0, 2+2*len(units))
	put := func(u uint16) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	put(0xFEFF)
	for _, u := range units {
		put(u)
	}
	return out
}
