package secrets

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The plaintext values of the fixture: distinctive, so a scan for them cannot hit by chance.
const (
	password = "s3cr3t-Pa55w0rd-7f1c"
	username = "admin-user-91ab"
	token    = "plain-token-value-c4d2e8"
)

var b64 = base64.StdEncoding.EncodeToString

func secretDoc() []byte {
	return []byte(`apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: shop
  labels:
    app: shop
  annotations:
    note: hello
data:
  password: ` + b64([]byte(password)) + `
  username: ` + b64([]byte(username)) + `
stringData:
  token: ` + token + `
type: Opaque
`)
}

// secretValues lists every form a value could leak in: raw, base64 and, for stringData, the
// base64 of it too.
func secretValues() []string {
	return []string{password, username, token, b64([]byte(password)), b64([]byte(username)), b64([]byte(token))}
}

type identity struct{ id, recipient string }

func newIdentity(t *testing.T) identity {
	t.Helper()
	id, r, err := GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "AGE-SECRET-KEY-1") || !strings.HasPrefix(r, "age1") {
		t.Fatalf("unexpected key pair shapes")
	}
	return identity{id, r}
}

func newSealer(t *testing.T, ids ...identity) *Sealer {
	t.Helper()
	key, err := NewDigestKey()
	if err != nil {
		t.Fatal(err)
	}
	var rs []string
	for _, i := range ids {
		rs = append(rs, i.recipient)
	}
	s, err := NewSealer(rs, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func parse(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	m, err := parseDocument(doc)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m
}

func get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func TestSealedSecretDecryptsWithEachRecipientIdentity(t *testing.T) {
	a, b := newIdentity(t), newIdentity(t)
	s := newSealer(t, a, b)
	sealed, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	orig := parse(t, secretDoc())
	for _, id := range []identity{a, b} {
		plain, err := Decrypt(sealed, id.id)
		if err != nil {
			t.Fatalf("decrypt: %v", err)
		}
		got := parse(t, plain)
		for _, f := range []string{"data", "stringData", "type", "apiVersion", "kind"} {
			if !equalYAML(got[f], orig[f]) {
				t.Errorf("%s differs after round trip", f)
			}
		}
		if get(got, "metadata", "annotations", "note") != "hello" {
			t.Errorf("annotation lost")
		}
	}

	m := parse(t, sealed)
	if get(m, "metadata", "name") != "db" || get(m, "metadata", "namespace") != "shop" ||
		get(m, "metadata", "labels", "app") != "shop" || get(m, "metadata", "annotations", "note") != "hello" {
		t.Errorf("metadata not readable in the sealed document:\n%s", sealed)
	}
	if m["apiVersion"] != "v1" || m["kind"] != "Secret" || m["type"] != "Opaque" {
		t.Errorf("apiVersion, kind or type not readable")
	}
	for _, f := range []string{"data", "stringData"} {
		for k, v := range get(m, f).(map[string]any) {
			if s, _ := v.(string); !strings.HasPrefix(s, "ENC[AES256_GCM,data:") {
				t.Errorf("%s.%s is not a SOPS ciphertext: %.30s", f, k, s)
			}
		}
	}
	sopsMeta, _ := m["sops"].(map[string]any)
	if sopsMeta == nil {
		t.Fatalf("no sops metadata")
	}
	for _, k := range []string{"age", "lastmodified", "mac", "version", "encrypted_regex"} {
		if _, ok := sopsMeta[k]; !ok {
			t.Errorf("sops metadata lacks %s", k)
		}
	}
	if sopsMeta["encrypted_regex"] != SecretEncryptedRegex {
		t.Errorf("encrypted_regex = %v", sopsMeta["encrypted_regex"])
	}
	rs, ok := RecipientsOf(sealed)
	if !ok || len(rs) != 2 || rs[0] != a.recipient || rs[1] != b.recipient {
		t.Errorf("RecipientsOf = %v", rs)
	}
	if !strings.HasPrefix(string(sealed), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n") {
		t.Errorf("key order or indentation not kept:\n%s", sealed)
	}
}

func equalYAML(a, b any) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return bytes.Equal(x, y)
}

func TestSealedBytesContainNoPlaintextValue(t *testing.T) {
	s := newSealer(t, newIdentity(t))
	sealed, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range secretValues() {
		if bytes.Contains(sealed, []byte(v)) {
			t.Errorf("sealed document contains a plaintext value")
		}
	}
}

func TestErrorsFromMalformedInputContainNoValue(t *testing.T) {
	s := newSealer(t, newIdentity(t))
	pw := b64([]byte(password))
	cases := map[string]string{
		"bad indentation":       "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: " + pw + "\n bad: " + password + "\n",
		"duplicate key":         "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: " + pw + "\n  password: " + password + "\n",
		"unclosed quote":        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: \"" + password + "\n",
		"tab":                   "apiVersion: v1\nkind: Secret\nmetadata:\n\tname: " + password + "\n",
		"non-string key":        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  1: " + password + "\n",
		"two documents":         "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  p: " + pw + "\n---\nx: " + password + "\n",
		"not a mapping":         "- " + password + "\n",
		"scalar":                password + "\n",
		"no name":               "apiVersion: v1\nkind: Secret\nmetadata: {}\ndata:\n  p: " + pw + "\n",
		"sops key":              "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nsops: " + password + "\n",
		"metadata not mapping":  "apiVersion: v1\nkind: Secret\nmetadata: " + password + "\n",
		"identity field at top": "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nname: " + password + "\n",
		"empty":                 "",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := s.Seal([]byte(doc))
			if err == nil {
				t.Fatalf("Seal accepted it")
			}
			_, derr := s.Digest([]byte(doc))
			for _, e := range []error{err, derr} {
				if e == nil {
					continue
				}
				for _, v := range append(secretValues(), pw) {
					if strings.Contains(e.Error(), v) {
						t.Errorf("error contains a value: %v", e)
					}
				}
			}
		})
	}
}

func TestDecryptFailsWithoutTheIdentityAndSaysNoValue(t *testing.T) {
	s := newSealer(t, newIdentity(t))
	sealed, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	other := newIdentity(t)
	_, err = Decrypt(sealed, other.id)
	if err == nil {
		t.Fatal("decrypted with a foreign identity")
	}
	if strings.Contains(err.Error(), other.id) {
		t.Errorf("error echoes the identity")
	}
	if _, err := Decrypt(sealed, "AGE-SECRET-KEY-1NOTAKEY"); err == nil || strings.Contains(err.Error(), "NOTAKEY") {
		t.Errorf("malformed identity: %v", err)
	}
}

func TestDecryptDetectsAnAlteredDigestAnnotation(t *testing.T) {
	id := newIdentity(t)
	s := newSealer(t, id)
	sealed, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	d, ok := DigestOf(sealed)
	if !ok {
		t.Fatal("no digest annotation")
	}
	forged := bytes.Replace(sealed, []byte(d), []byte(DigestPrefix+strings.Repeat("0", 64)), 1)
	if _, err := Decrypt(forged, id.id); err == nil || !strings.Contains(err.Error(), "MAC") {
		t.Fatalf("altered annotation not detected: %v", err)
	}
	forged = bytes.Replace(sealed, []byte("namespace: shop"), []byte("namespace: prod"), 1)
	if _, err := Decrypt(forged, id.id); err == nil {
		t.Fatalf("altered namespace not detected")
	}
}

func TestDigestIsIndependentOfKeyOrder(t *testing.T) {
	s := newSealer(t, newIdentity(t))
	reordered := []byte(`type: Opaque
stringData:
  token: ` + token + `
data:
  username: ` + b64([]byte(username)) + `
  password: ` + b64([]byte(password)) + `
metadata:
  annotations:
    note: hello
  labels:
    app: shop
  namespace: shop
  name: db
kind: Secret
apiVersion: v1
`)
	d1, err := s.Digest(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	d2, err := s.Digest(reordered)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("key order changed the digest")
	}
	if !strings.HasPrefix(d1, DigestPrefix) || len(d1) != len(DigestPrefix)+64 {
		t.Errorf("digest shape: %s", d1)
	}
}

func TestDigestChangesWithAValue(t *testing.T) {
	s := newSealer(t, newIdentity(t))
	d1, _ := s.Digest(secretDoc())
	changed := bytes.Replace(secretDoc(), []byte(b64([]byte(password))), []byte(b64([]byte(password+"x"))), 1)
	d2, err := s.Digest(changed)
	if err != nil {
		t.Fatal(err)
	}
	if d1 == d2 {
		t.Errorf("a changed value kept the digest")
	}
	relabeled := bytes.Replace(secretDoc(), []byte("app: shop"), []byte("app: shop2"), 1)
	if d3, _ := s.Digest(relabeled); d3 == d1 {
		t.Errorf("a changed label kept the digest")
	}
}

func TestDigestChangesWithTheDigestKey(t *testing.T) {
	id := newIdentity(t)
	s1, s2 := newSealer(t, id), newSealer(t, id)
	d1, _ := s1.Digest(secretDoc())
	d2, _ := s2.Digest(secretDoc())
	if d1 == d2 {
		t.Errorf("two digest keys gave the same digest")
	}
}

func TestDigestIgnoresItsOwnAnnotation(t *testing.T) {
	s := newSealer(t, newIdentity(t))
	d, _ := s.Digest(secretDoc())
	with := bytes.Replace(secretDoc(), []byte("    note: hello\n"), []byte("    note: hello\n    "+DigestAnnotation+": stale\n"), 1)
	if d2, _ := s.Digest(with); d2 != d {
		t.Errorf("the digest annotation is part of the digest")
	}
	// An annotations map that only held the digest is the same as none.
	noAnn := bytes.Replace(secretDoc(), []byte("  annotations:\n    note: hello\n"), nil, 1)
	onlyDigest := bytes.Replace(secretDoc(), []byte("    note: hello\n"), []byte("    "+DigestAnnotation+": x\n"), 1)
	a, _ := s.Digest(noAnn)
	b, _ := s.Digest(onlyDigest)
	if a != b {
		t.Errorf("annotations holding only the digest differ from no annotations")
	}
}

func TestSealTwiceGivesNewCiphertextAndTheSameDigest(t *testing.T) {
	id := newIdentity(t)
	s := newSealer(t, id)
	one, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	two, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(one, two) {
		t.Fatal("same ciphertext twice")
	}
	d1, ok1 := DigestOf(one)
	d2, ok2 := DigestOf(two)
	want, _ := s.Digest(secretDoc())
	if !ok1 || !ok2 || d1 != d2 || d1 != want {
		t.Errorf("digest annotations %q %q, want %q", d1, d2, want)
	}
	// The decrypted document carries the annotation and digests to the same value.
	plain, err := Decrypt(one, id.id)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Digest(plain); d != want {
		t.Errorf("digest of the decrypted document %q, want %q", d, want)
	}
	if d, _ := DigestOf(plain); d != want {
		t.Errorf("decrypted document lacks the annotation")
	}
}

func TestUpToDateKeepsTheFileOnlyForSamePlaintextAndRecipients(t *testing.T) {
	a, b := newIdentity(t), newIdentity(t)
	key, _ := NewDigestKey()
	s, _ := NewSealer([]string{a.recipient, b.recipient}, key)
	sealed, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.UpToDate(sealed, secretDoc()); !ok || err != nil {
		t.Errorf("unchanged: %v %v", ok, err)
	}
	reversed, _ := NewSealer([]string{b.recipient, a.recipient}, key)
	if ok, _ := reversed.UpToDate(sealed, secretDoc()); !ok {
		t.Errorf("recipient order matters")
	}
	changed := bytes.Replace(secretDoc(), []byte("Opaque"), []byte("kubernetes.io/basic-auth"), 1)
	if ok, _ := s.UpToDate(sealed, changed); ok {
		t.Errorf("changed plaintext is up to date")
	}
	fewer, _ := NewSealer([]string{a.recipient}, key)
	if ok, _ := fewer.UpToDate(sealed, secretDoc()); ok {
		t.Errorf("other recipients are up to date")
	}
	if ok, _ := s.UpToDate(secretDoc(), secretDoc()); ok {
		t.Errorf("an unsealed document is up to date")
	}
}

func TestDigestOfReadsOnlyTheAnnotation(t *testing.T) {
	if _, ok := DigestOf(secretDoc()); ok {
		t.Errorf("digest found in a document without one")
	}
	if _, ok := DigestOf([]byte("{")); ok {
		t.Errorf("digest found in invalid YAML")
	}
	doc := []byte("metadata:\n  annotations:\n    " + DigestAnnotation + ": \"" + DigestPrefix + "ab\"\n")
	if d, ok := DigestOf(doc); !ok || d != DigestPrefix+"ab" {
		t.Errorf("DigestOf = %q %v", d, ok)
	}
}

func TestSealEncryptsEveryTopLevelFieldOfOtherSensitiveKinds(t *testing.T) {
	id := newIdentity(t)
	s := newSealer(t, id)
	doc := []byte(`apiVersion: example.com/v1
kind: Credential
metadata:
  name: api
  namespace: shop
spec:
  template:
    metadata:
      name: ` + password + `
  endpoint: ` + username + `
  retries: 3
`)
	sealed, err := s.Seal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{password, username} {
		if bytes.Contains(sealed, []byte(v)) {
			t.Errorf("value left in clear:\n%s", sealed)
		}
	}
	m := parse(t, sealed)
	if get(m, "metadata", "name") != "api" || get(m, "sops", "encrypted_regex") != "^(spec)$" {
		t.Errorf("unexpected sealed document:\n%s", sealed)
	}
	plain, err := Decrypt(sealed, id.id)
	if err != nil {
		t.Fatal(err)
	}
	got := parse(t, plain)
	if get(got, "spec", "retries") != 3 || get(got, "spec", "template", "metadata", "name") != password {
		t.Errorf("round trip lost content:\n%s", plain)
	}
}

func TestSealAddsAnnotationsWhenTheDocumentHasNone(t *testing.T) {
	id := newIdentity(t)
	s := newSealer(t, id)
	doc := []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: bare\ndata:\n  k: " + b64([]byte(password)) + "\n")
	sealed, err := s.Seal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := s.Digest(doc)
	if d, ok := DigestOf(sealed); !ok || d != want {
		t.Errorf("DigestOf = %q, want %q", d, want)
	}
	if !bytes.Equal(doc, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: bare\ndata:\n  k: "+b64([]byte(password))+"\n")) {
		t.Errorf("Seal modified its input")
	}
}

func TestParseRecipientsRejectsBadEntriesWithoutEchoingThem(t *testing.T) {
	id := newIdentity(t)
	good := id.recipient
	if _, err := ParseRecipients(nil); !errors.Is(err, ErrNoRecipients) {
		t.Errorf("empty list: %v", err)
	}
	cases := map[string]struct {
		entry, want string
	}{
		"empty":     {"  ", "recipient 1: empty"},
		"identity":  {id.id, "recipient 1: is an age identity"},
		"lower id":  {strings.ToLower(id.id), "recipient 1: is an age identity"},
		"malformed": {"age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", "recipient 1: malformed age recipient"},
		"bad char":  {good[:len(good)-1] + "b", "recipient 1: malformed age recipient"},
		"not age":   {"hunter2", "recipient 1: not an age recipient"},
		"ssh":       {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE", "recipient 1: not an age recipient"},
		"plugin":    {"age1yubikey1qwerty", "recipient 1: age plugin recipients are not supported"},
		"pq":        {"age1pq1qqqq", "recipient 1: post-quantum"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseRecipients([]string{good, c.entry})
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
			if strings.TrimSpace(c.entry) != "" && strings.Contains(err.Error(), strings.TrimSpace(c.entry)) {
				t.Errorf("error echoes the entry: %v", err)
			}
			if _, err := NewSealer([]string{c.entry}, make([]byte, 32)); err == nil {
				t.Errorf("NewSealer accepted it")
			}
		})
	}
	got, err := ParseRecipients([]string{" " + good + "\n", good})
	if err != nil || len(got) != 1 || got[0] != good {
		t.Errorf("trim and dedupe: %v %v", got, err)
	}
}

func TestRecipientsFromSecretDataReadsLinesAndComments(t *testing.T) {
	a, b, c := newIdentity(t), newIdentity(t), newIdentity(t)
	data := map[string][]byte{
		"team.txt": []byte("# the team\n" + a.recipient + "\n\n  " + b.recipient + "  \r\n# end\n"),
		"ci":       []byte(c.recipient + "\n" + a.recipient),
	}
	got, err := RecipientsFromSecretData(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{c.recipient, a.recipient, b.recipient} // keys sorted: ci, team.txt
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v, want %v", got, want)
	}

	_, err = RecipientsFromSecretData(map[string][]byte{"keys": []byte("# ok\n" + a.recipient + "\n" + a.id + "\n")})
	if err == nil || !strings.Contains(err.Error(), `key "keys" line 3: is an age identity`) || strings.Contains(err.Error(), a.id) {
		t.Errorf("identity in the Secret: %v", err)
	}
	if _, err := RecipientsFromSecretData(map[string][]byte{"k": []byte("# only a comment\n")}); !errors.Is(err, ErrNoRecipients) {
		t.Errorf("no recipients: %v", err)
	}
	if _, err := RecipientsFromSecretData(nil); !errors.Is(err, ErrNoRecipients) {
		t.Errorf("empty Secret: %v", err)
	}
}

func TestNewSealerRejectsAShortDigestKey(t *testing.T) {
	id := newIdentity(t)
	if _, err := NewSealer([]string{id.recipient}, make([]byte, 31)); err == nil {
		t.Fatal("accepted a 31-byte digest key")
	}
	key, _ := NewDigestKey()
	s, err := NewSealer([]string{id.recipient}, key)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := s.Digest(secretDoc())
	clear(key) // the Sealer keeps its own copy
	if d2, _ := s.Digest(secretDoc()); d1 != d2 {
		t.Errorf("the Sealer shares the caller's key slice")
	}
	s.Close()
	if d3, _ := s.Digest(secretDoc()); d3 == d1 {
		t.Errorf("Close did not zero the key")
	}
}

func TestCreationRulesParseAsSOPSConfig(t *testing.T) {
	a, b := newIdentity(t), newIdentity(t)
	out := CreationRules([]string{a.recipient, b.recipient}, "")
	var cfg struct {
		CreationRules []struct {
			PathRegex      string `yaml:"path_regex"`
			EncryptedRegex string `yaml:"encrypted_regex"`
			Age            string `yaml:"age"`
		} `yaml:"creation_rules"`
		Stores struct {
			YAML struct {
				Indent int `yaml:"indent"`
			} `yaml:"yaml"`
		} `yaml:"stores"`
	}
	if err := yaml.Unmarshal(out, &cfg); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(cfg.CreationRules) != 1 {
		t.Fatalf("rules: %s", out)
	}
	r := cfg.CreationRules[0]
	if r.PathRegex != DefaultPathRegex || r.EncryptedRegex != SecretEncryptedRegex || r.Age != a.recipient+","+b.recipient || cfg.Stores.YAML.Indent != Indent {
		t.Errorf("unexpected .sops.yaml:\n%s", out)
	}
	custom := CreationRules([]string{a.recipient}, `^clusters/dev/.*\.sops\.yaml$`)
	if !bytes.Contains(custom, []byte(`clusters/dev/.*\.sops\.yaml$`)) {
		t.Errorf("custom path regex lost:\n%s", custom)
	}
}

func TestSealHandlesEmptyNullAndImmutableSecrets(t *testing.T) {
	id := newIdentity(t)
	s := newSealer(t, id)
	for name, doc := range map[string]string{
		"empty data":   "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata: {}\ntype: Opaque\n",
		"null data":    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata: null\n",
		"no data":      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n",
		"empty value":  "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata:\n  k: \"\"\nimmutable: true\n",
		"multi-line":   "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\nstringData:\n  cfg: |\n    user=" + username + "\n    pass=" + password + "\n",
		"empty labels": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  annotations: {}\ndata:\n  k: " + b64([]byte(password)) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			sealed, err := s.Seal([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(sealed, []byte(password)) || bytes.Contains(sealed, []byte(b64([]byte(password)))) {
				t.Errorf("value in clear")
			}
			plain, err := Decrypt(sealed, id.id)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := s.Digest([]byte(doc))
			if got, _ := s.Digest(plain); got != want {
				t.Errorf("round trip changed the document:\n%s", plain)
			}
			if ok, _ := s.UpToDate(sealed, []byte(doc)); !ok {
				t.Errorf("not up to date with its own plaintext")
			}
		})
	}
}
