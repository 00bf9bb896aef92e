package gitrepo

import (
	"bytes"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v6/plumbing/object"
	gossh "golang.org/x/crypto/ssh"
)

// CommitSigner signs commits with an SSH key, in the format `git verify-commit` checks
// with gpg.format=ssh (an armored SSHSIG over the commit in the "git" namespace).
type CommitSigner struct {
	signer gossh.Signer
}

// NewCommitSigner parses an OpenSSH private key (the signing Secret's ssh-privatekey).
func NewCommitSigner(privateKeyPEM []byte) (*CommitSigner, error) {
	s, err := gossh.ParsePrivateKey(privateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("signing key is not a usable private key: %w", err)
	}
	return &CommitSigner{signer: s}, nil
}

// PublicKey is the signing key in authorized_keys form, to publish in status so that the
// Git host can be told to trust it.
func (c *CommitSigner) PublicKey() string {
	return strings.TrimSpace(string(gossh.MarshalAuthorizedKey(c.signer.PublicKey())))
}

// sign sets the commit's signature over its encoding without one.
func (c *CommitSigner) sign(r *Repo, commit *object.Commit) error {
	unsigned := r.repo.Storer.NewEncodedObject()
	if err := commit.EncodeWithoutSignature(unsigned); err != nil {
		return fmt.Errorf("encode commit to sign: %w", err)
	}
	rd, err := unsigned.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	payload, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	sig, err := c.sshsig(payload)
	if err != nil {
		return fmt.Errorf("sign commit: %w", err)
	}
	commit.Signature = sig
	return nil
}

const (
	sshsigMagic     = "SSHSIG"
	sshsigNamespace = "git"
	sshsigHash      = "sha512"
)

// sshsig produces the armored signature of the SSHSIG format (OpenSSH PROTOCOL.sshsig).
func (c *CommitSigner) sshsig(message []byte) (string, error) {
	digest := sha512.Sum512(message)
	var toSign bytes.Buffer
	toSign.WriteString(sshsigMagic)
	writeString(&toSign, []byte(sshsigNamespace))
	writeString(&toSign, nil) // reserved
	writeString(&toSign, []byte(sshsigHash))
	writeString(&toSign, digest[:])

	var sig *gossh.Signature
	var err error
	if algo, ok := c.signer.(gossh.AlgorithmSigner); ok && c.signer.PublicKey().Type() == gossh.KeyAlgoRSA {
		sig, err = algo.SignWithAlgorithm(rand.Reader, toSign.Bytes(), gossh.KeyAlgoRSASHA512)
	} else {
		sig, err = c.signer.Sign(rand.Reader, toSign.Bytes())
	}
	if err != nil {
		return "", err
	}
	var blob bytes.Buffer
	blob.WriteString(sshsigMagic)
	_ = binary.Write(&blob, binary.BigEndian, uint32(1))
	writeString(&blob, c.signer.PublicKey().Marshal())
	writeString(&blob, []byte(sshsigNamespace))
	writeString(&blob, nil)
	writeString(&blob, []byte(sshsigHash))
	writeString(&blob, gossh.Marshal(sig))
	return armor(blob.Bytes()), nil
}

func writeString(b *bytes.Buffer, s []byte) {
	_ = binary.Write(b, binary.BigEndian, uint32(len(s)))
	b.Write(s)
}

func armor(blob []byte) string {
	enc := base64.StdEncoding.EncodeToString(blob)
	var out strings.Builder
	out.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(enc) > 70 {
		out.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	out.WriteString(enc + "\n-----END SSH SIGNATURE-----\n")
	return out.String()
}
