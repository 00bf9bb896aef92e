package secrets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
	"google.golang.org/grpc"
)

// Decrypt decrypts a sealed document with an age identity ("AGE-SECRET-KEY-1…"; several may
// be given one per line), the way `sops decrypt` does: the data key is recovered through SOPS's
// key-group logic, the tree is decrypted and the MAC is verified. It exists for tests and
// tooling; the operator holds no private key and never calls it.
func Decrypt(sealedDoc []byte, identity string) ([]byte, error) {
	var ids sopsage.ParsedIdentities
	parsed, err := age.ParseIdentities(strings.NewReader(identity))
	if err != nil {
		return nil, errors.New("secrets: malformed age identity")
	}
	ids = append(ids, parsed...)

	tree, err := loadSealed(sealedDoc)
	if err != nil {
		return nil, errors.New("secrets: not a SOPS YAML document")
	}
	dataKey, err := tree.Metadata.GetDataKeyWithKeyServices(
		[]keyservice.KeyServiceClient{identityKeyService{ids: ids}}, nil)
	if err != nil {
		return nil, fmt.Errorf("secrets: recovering the data key: %w", err)
	}
	defer clear(dataKey)
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(dataKey, cipher)
	if err != nil {
		return nil, errors.New("secrets: decrypting the document failed")
	}
	stored, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, dataKey,
		tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil || stored != mac {
		return nil, errors.New("secrets: MAC mismatch: the document was altered")
	}
	out, err := emitSOPSBranches(tree.Branches)
	if err != nil {
		return nil, errors.New("secrets: writing the decrypted document failed")
	}
	return out, nil
}

// identityKeyService is a SOPS key service that decrypts age-encrypted data keys with the
// given identities instead of reading them from the environment or the user's files (which
// SOPS's local key service does).
type identityKeyService struct{ ids sopsage.ParsedIdentities }

func (identityKeyService) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errors.New("secrets: this key service only decrypts")
}

func (s identityKeyService) Decrypt(_ context.Context, req *keyservice.DecryptRequest, _ ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	ak := req.GetKey().GetAgeKey()
	if ak == nil {
		return nil, errors.New("secrets: not an age key")
	}
	mk := &sopsage.MasterKey{Recipient: ak.GetRecipient(), EncryptedKey: string(req.GetCiphertext())}
	s.ids.ApplyToMasterKey(mk)
	pt, err := mk.Decrypt()
	if err != nil {
		return nil, fmt.Errorf("secrets: no identity matches recipient %s", ak.GetRecipient())
	}
	return &keyservice.DecryptResponse{Plaintext: pt}, nil
}
