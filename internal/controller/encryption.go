package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
	"github.com/gitops-reverser/gitops-reverser/internal/secrets"
)

// Reasons of the EncryptionConfigured condition.
const (
	ReasonEncryptionNotConfigured = "EncryptionNotConfigured"
	ReasonRecipientsInvalid       = "RecipientsInvalid"
	ReasonDigestKeyUnavailable    = "DigestKeyUnavailable"
)

// targetSealer seals the Secrets of one GitTarget; it serves route.Sealer.
type targetSealer struct {
	*secrets.Sealer
	fingerprint string
	rules       []byte // the folder's .sops.yaml
}

func (s *targetSealer) Fingerprint() string { return s.fingerprint }

// sealerFor builds the sealer of t's spec.encryption. Without encryption it returns nil
// and a message; with unusable encryption, nil and a problem for EncryptionConfigured.
func sealerFor(ctx context.Context, c client.Client, keys *pipeline.DigestKeys, t *v1.GitTarget) (*targetSealer, *problem) {
	enc := t.Spec.Encryption
	if enc == nil {
		return nil, &problem{condition: v1.ConditionEncryptionConfigured, reason: ReasonEncryptionNotConfigured,
			message: "spec.encryption is not set: Secrets are not mirrored (they are never written in plaintext)"}
	}
	recipients := slices.Clone(enc.Age.Recipients)
	if ref := enc.Age.RecipientsSecretRef; ref != nil {
		var s corev1.Secret
		key := types.NamespacedName{Namespace: t.Namespace, Name: ref.Name}
		err := c.Get(ctx, key, &s)
		if apierrors.IsNotFound(err) && enc.Age.GenerateKeyPair {
			err = generateKeyPair(ctx, c, key, &s)
		}
		if err != nil {
			return nil, &problem{condition: v1.ConditionEncryptionConfigured, reason: ReasonRecipientsInvalid, transient: !apierrors.IsNotFound(err),
				message: fmt.Sprintf("Secret %s named by spec.encryption.age.recipientsSecretRef cannot be read: %s; Secrets are not mirrored", key, reasonOf(err))}
		}
		more, err := secrets.RecipientsFromSecretData(s.Data)
		if err != nil {
			return nil, &problem{condition: v1.ConditionEncryptionConfigured, reason: ReasonRecipientsInvalid,
				message: fmt.Sprintf("Secret %s: %v; Secrets are not mirrored", key, err)}
		}
		recipients = append(recipients, more...)
	}
	parsed, err := secrets.ParseRecipients(recipients)
	if err != nil {
		return nil, &problem{condition: v1.ConditionEncryptionConfigured, reason: ReasonRecipientsInvalid,
			message: fmt.Sprintf("spec.encryption.age: %v; Secrets are not mirrored", err)}
	}
	dk, err := keys.Get(ctx)
	if err != nil {
		return nil, &problem{condition: v1.ConditionEncryptionConfigured, reason: ReasonDigestKeyUnavailable, transient: true,
			message: fmt.Sprintf("%v; Secrets are not mirrored", err)}
	}
	sealer, err := secrets.NewSealer(parsed, dk)
	if err != nil {
		return nil, &problem{condition: v1.ConditionEncryptionConfigured, reason: ReasonRecipientsInvalid, message: err.Error()}
	}
	sorted := slices.Sorted(slices.Values(parsed))
	sum := sha256.Sum256([]byte(strings.Join(sorted, ",")))
	return &targetSealer{Sealer: sealer, fingerprint: hex.EncodeToString(sum[:8]),
		rules: secrets.CreationRules(parsed, secrets.DefaultPathRegex)}, nil
}

// generateKeyPair creates the Secret key with a new age key pair, because the GitTarget asked
// for it (spec.encryption.age.generateKeyPair). The Secret has no owner: deleting the target
// must not destroy the only key that decrypts what is in Git.
func generateKeyPair(ctx context.Context, c client.Client, key types.NamespacedName, into *corev1.Secret) error {
	identity, recipient, err := secrets.GenerateIdentity()
	if err != nil {
		return err
	}
	*into = corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": "gitops-reverser"},
			Annotations: map[string]string{"gitops-reverser.io/generated": "an age key pair for spec.encryption; back up identity" + secrets.IdentitySuffix}},
		Data: map[string][]byte{"identity" + secrets.IdentitySuffix: []byte(identity), "recipient": []byte(recipient)},
	}
	err = c.Create(ctx, into)
	if apierrors.IsAlreadyExists(err) {
		return c.Get(ctx, key, into)
	}
	return err
}
