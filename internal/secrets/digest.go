package secrets

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// DigestAnnotation is the annotation a sealed document carries in clear: the keyed digest of
// its plaintext ("hmac-sha256:<hex>").
const DigestAnnotation = "gitops-reverser.io/sealed-digest"

// DigestPrefix starts every value of DigestAnnotation.
const DigestPrefix = "hmac-sha256:"

// MinDigestKeyLen is the shortest digest key NewSealer accepts.
const MinDigestKeyLen = 32

// digestDomain separates this use of the key from any other.
const digestDomain = "gitops-reverser.io/sealed-digest/v1\x00"

// NewDigestKey returns 32 random bytes for the digest key.
func NewDigestKey() ([]byte, error) {
	k := make([]byte, MinDigestKeyLen)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("secrets: generating a digest key: %w", err)
	}
	return k, nil
}

// digest computes the HMAC of the canonical form of doc (see canonical).
func digest(key, doc []byte) (string, error) {
	obj, err := parseDocument(doc)
	if err != nil {
		return "", err
	}
	return digestObject(key, obj)
}

func digestObject(key []byte, obj map[string]any) (string, error) {
	canon, err := canonical(obj)
	if err != nil {
		return "", err
	}
	defer clear(canon)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(digestDomain))
	mac.Write(canon)
	return DigestPrefix + hex.EncodeToString(mac.Sum(nil)), nil
}

// canonical renders obj without DigestAnnotation (and without an annotations map that is
// empty without it: an empty annotations map means nothing, as in sanitize) as JSON, whose maps are written in sorted key order. The result holds plaintext:
// the caller clears it.
func canonical(obj map[string]any) ([]byte, error) {
	obj = withoutDigestAnnotation(obj)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		clear(buf.Bytes())
		return nil, errors.New("secrets: document holds a value JSON cannot represent")
	}
	return buf.Bytes(), nil
}

// withoutDigestAnnotation returns obj with the annotation removed, copying only the maps on
// the way (obj is not modified).
func withoutDigestAnnotation(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	ann, ok := md["annotations"].(map[string]any)
	if !ok {
		return obj
	}
	if _, ok := ann[DigestAnnotation]; !ok && len(ann) > 0 {
		return obj
	}
	ann2 := make(map[string]any, len(ann))
	for k, v := range ann {
		if k != DigestAnnotation {
			ann2[k] = v
		}
	}
	md2 := make(map[string]any, len(md))
	for k, v := range md {
		md2[k] = v
	}
	if len(ann2) == 0 {
		delete(md2, "annotations")
	} else {
		md2["annotations"] = ann2
	}
	obj2 := make(map[string]any, len(obj))
	for k, v := range obj {
		obj2[k] = v
	}
	obj2["metadata"] = md2
	return obj2
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// parseDocument reads exactly one YAML document whose top level is a mapping with string keys
// everywhere. Errors never contain the input: YAML errors are reduced to their line number.
func parseDocument(doc []byte) (map[string]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("secrets: empty document")
		}
		return nil, yamlError(err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("secrets: more than one YAML document")
	}
	norm, err := normalize(v, 0)
	if err != nil {
		return nil, err
	}
	obj, ok := norm.(map[string]any)
	if !ok {
		return nil, errors.New("secrets: document is not a mapping")
	}
	return obj, nil
}

func yamlError(err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("secrets: invalid YAML at line %s", m[1])
	}
	return errors.New("secrets: invalid YAML")
}

const maxDepth = 100

// normalize checks that every mapping key is a string and converts yaml.v3's maps.
func normalize(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("secrets: document nested too deeply")
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			n, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case map[any]any:
		return nil, errors.New("secrets: document has a mapping key that is not a string")
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			n, err := normalize(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	default:
		return v, nil
	}
}

// DigestOf reads DigestAnnotation of a sealed (or any) document. It does not decrypt and does
// not verify anything: the SOPS MAC covers the annotation, and it is checked on decryption.
func DigestOf(sealedDoc []byte) (string, bool) {
	if !mayNameDigest(sealedDoc) {
		return "", false
	}
	var doc struct {
		Metadata struct {
			Annotations map[string]any `yaml:"annotations"`
		} `yaml:"metadata"`
	}
	if err := yaml.Unmarshal(sealedDoc, &doc); err != nil {
		return "", false
	}
	d, ok := doc.Metadata.Annotations[DigestAnnotation].(string)
	if !ok || !strings.HasPrefix(d, DigestPrefix) {
		return "", false
	}
	return d, true
}

// mayNameDigest reports whether doc can hold DigestAnnotation at all, without parsing it:
// every document of a first mirror is asked, and most hold no sealed Secret. YAML spells a
// key other than by its own characters only through an escape of a double-quoted scalar
// (a backslash) or a tag such as !!binary (an exclamation mark); a folded line adds a
// space. A document in UTF-16 (the parser reads one that starts with its byte order mark)
// spells no character as in UTF-8. A document with none of these cannot name the annotation.
func mayNameDigest(doc []byte) bool {
	return bytes.Contains(doc, []byte(DigestAnnotation)) || bytes.ContainsAny(doc, `\!`) ||
		bytes.HasPrefix(doc, []byte{0xFF, 0xFE}) || bytes.HasPrefix(doc, []byte{0xFE, 0xFF})
}

// RecipientsOf returns the age recipients a sealed document is encrypted for, from its sops
// metadata, in file order.
func RecipientsOf(sealedDoc []byte) ([]string, bool) {
	var doc struct {
		Sops *struct {
			Age []struct {
				Recipient string `yaml:"recipient"`
			} `yaml:"age"`
		} `yaml:"sops"`
	}
	if err := yaml.Unmarshal(sealedDoc, &doc); err != nil || doc.Sops == nil {
		return nil, false
	}
	out := make([]string, 0, len(doc.Sops.Age))
	for _, a := range doc.Sops.Age {
		out = append(out, a.Recipient)
	}
	return out, len(out) > 0
}
