package secrets

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keys"
	"github.com/getsops/sops/v3/keyservice"
)

// sopsVersion is the version of SOPS that seals, recorded in each document's metadata: the
// linked module's (go.mod), which TestTheSealedVersionIsTheLinkedSOPS checks. It is not read
// from SOPS's version package, which links a command-line framework and a Markdown renderer
// into the operator for this one string (docs/operations.md#memory).
const sopsVersion = "3.13.3"

// SecretEncryptedRegex is the SOPS encrypted_regex of a sealed core/v1 Secret: the values of
// data and stringData are encrypted, everything else stays readable.
const SecretEncryptedRegex = "^(data|stringData)$"

// Indent is the indentation of sealed documents (the repository's style). CreationRules writes
// the same into .sops.yaml so that `sops edit` keeps it.
const Indent = 2

// Sealer seals documents for a fixed set of age recipients with a fixed digest key. It is safe
// for concurrent use.
type Sealer struct {
	recipients []string
	digestKey  []byte
}

// NewSealer validates the recipients (see ParseRecipients) and keeps a copy of digestKey,
// which must be at least MinDigestKeyLen bytes.
func NewSealer(recipients []string, digestKey []byte) (*Sealer, error) {
	rs, err := ParseRecipients(recipients)
	if err != nil {
		return nil, err
	}
	if len(digestKey) < MinDigestKeyLen {
		return nil, fmt.Errorf("secrets: the digest key must be at least %d bytes", MinDigestKeyLen)
	}
	return &Sealer{recipients: rs, digestKey: slices.Clone(digestKey)}, nil
}

// Recipients returns the validated recipients, in order.
func (s *Sealer) Recipients() []string { return slices.Clone(s.recipients) }

// Close zeroes the Sealer's copy of the digest key; the Sealer must not be used afterwards.
func (s *Sealer) Close() { clear(s.digestKey) }

// Digest returns the value of DigestAnnotation for a plaintext document: HMAC-SHA256 with the
// digest key over the canonical form of the document without that annotation. It is the same
// for the document Seal was given and for the document Decrypt returns.
func (s *Sealer) Digest(plainDoc []byte) (string, error) {
	return digest(s.digestKey, plainDoc)
}

// UpToDate reports whether sealedDoc already seals plainDoc for this Sealer: its digest
// annotation equals Digest(plainDoc) and it is encrypted for exactly the Sealer's recipients.
// When true, the existing file is kept and no new ciphertext is made.
func (s *Sealer) UpToDate(sealedDoc, plainDoc []byte) (bool, error) {
	have, ok := DigestOf(sealedDoc)
	if !ok {
		return false, nil
	}
	want, err := s.Digest(plainDoc)
	if err != nil {
		return false, err
	}
	if have != want {
		return false, nil
	}
	rs, ok := RecipientsOf(sealedDoc)
	if !ok {
		return false, nil
	}
	a, b := slices.Clone(rs), slices.Clone(s.recipients)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), b), nil
}

// Seal encrypts a sanitized plaintext document into a SOPS YAML document for the Sealer's
// recipients. A core/v1 Secret has the values of data and stringData encrypted
// (SecretEncryptedRegex); any other kind has every top-level field except apiVersion, kind and
// metadata encrypted. DigestAnnotation is added before encryption, so the SOPS MAC covers it.
// Every call makes a new data key and new ciphertext. The input is not modified.
func (s *Sealer) Seal(plainDoc []byte) ([]byte, error) {
	obj, err := parseDocument(plainDoc)
	if err != nil {
		return nil, err
	}
	regex, err := encryptedRegex(obj)
	if err != nil {
		return nil, err
	}
	dgst, err := digestObject(s.digestKey, obj)
	if err != nil {
		return nil, err
	}

	plain, err := loadSOPSBranch(plainDoc)
	if err != nil {
		return nil, errors.New("secrets: SOPS cannot read the document")
	}
	branch, err := withAnnotation(plain, DigestAnnotation, dgst)
	if err != nil {
		return nil, err
	}

	group := make(sops.KeyGroup, 0, len(s.recipients))
	for i, r := range s.recipients {
		k, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			return nil, fmt.Errorf("secrets: recipient %d rejected by SOPS", i)
		}
		group = append(group, keys.MasterKey(k))
	}
	tree := sops.Tree{
		Branches: sops.TreeBranches{branch},
		Metadata: sops.Metadata{
			KeyGroups:      []sops.KeyGroup{group},
			EncryptedRegex: regex,
			Version:        sopsVersion,
		},
	}
	dataKey, errs := tree.GenerateDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyservice.NewLocalClient()})
	defer clear(dataKey)
	if len(errs) > 0 {
		// These errors name recipients (public keys) only.
		return nil, fmt.Errorf("secrets: encrypting the data key: %w", errors.Join(errs...))
	}
	if err := encryptTree(&tree, dataKey); err != nil {
		// Not wrapped: SOPS's message may quote what it failed on.
		return nil, errors.New("secrets: SOPS could not encrypt the document")
	}
	out, err := emitSealed(tree)
	if err != nil {
		return nil, errors.New("secrets: SOPS could not write the encrypted document")
	}
	return out, nil
}

// encryptTree encrypts the tree's values with dataKey and records the MAC of their
// plaintext, encrypted too, with the time it was made, as `sops encrypt` does.
func encryptTree(tree *sops.Tree, dataKey []byte) error {
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		return err
	}
	tree.Metadata.LastModified = time.Now().UTC()
	tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	return err
}

// identityFields are the metadata path components that must stay readable.
var identityFields = []string{"apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations", DigestAnnotation, "sops"}

// encryptedRegex chooses the encrypted_regex for a document and checks that the document can be
// sealed: a mapping with apiVersion, kind and metadata.name, and no top-level sops key.
func encryptedRegex(obj map[string]any) (string, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if apiVersion == "" || kind == "" || name == "" {
		return "", errors.New("secrets: document lacks apiVersion, kind or metadata.name")
	}
	if _, ok := obj["sops"]; ok {
		return "", errors.New("secrets: document already has a top-level sops key")
	}
	if apiVersion == "v1" && kind == "Secret" {
		return SecretEncryptedRegex, nil
	}
	// SOPS encrypts a value when any component of its path matches the regex, so the regex
	// names the top-level fields to encrypt. A top-level field named like an identity field
	// would encrypt the identity too.
	var fields []string
	for k := range obj {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		}
		if slices.Contains(identityFields, k) {
			return "", fmt.Errorf("secrets: top-level field %q cannot be encrypted without hiding the identity", k)
		}
		fields = append(fields, regexp.QuoteMeta(k))
	}
	if len(fields) == 0 {
		// Nothing but identity: a regex that matches no key (keys are never empty here).
		return "^$", nil
	}
	sort.Strings(fields)
	return "^(" + strings.Join(fields, "|") + ")$", nil
}

// withAnnotation returns branch with metadata.annotations[key] = value (added at the end of
// annotations, which is added at the end of metadata when missing). branch is not modified.
func withAnnotation(branch sops.TreeBranch, key, value string) (sops.TreeBranch, error) {
	out := slices.Clone(branch)
	mi := indexOf(out, "metadata")
	if mi < 0 {
		return nil, errors.New("secrets: document has no metadata")
	}
	md, ok := out[mi].Value.(sops.TreeBranch)
	if !ok {
		return nil, errors.New("secrets: metadata is not a mapping")
	}
	md = slices.Clone(md)
	ai := indexOf(md, "annotations")
	if ai < 0 {
		md = append(md, sops.TreeItem{Key: "annotations", Value: sops.TreeBranch{{Key: key, Value: value}}})
	} else {
		ann, ok := md[ai].Value.(sops.TreeBranch)
		if !ok {
			return nil, errors.New("secrets: metadata.annotations is not a mapping")
		}
		ann = slices.Clone(ann)
		if i := indexOf(ann, key); i >= 0 {
			ann[i].Value = value
		} else {
			ann = append(ann, sops.TreeItem{Key: key, Value: value})
		}
		md[ai].Value = ann
	}
	out[mi].Value = md
	return out, nil
}

func indexOf(b sops.TreeBranch, key string) int {
	for i, it := range b {
		if k, ok := it.Key.(string); ok && k == key {
			return i
		}
	}
	return -1
}
