package controller

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
)

// readCredentials reads the GitProvider's Secret into credentials. The problems it reports
// name the Secret and the keys, never their values.
func readCredentials(ctx context.Context, c client.Reader, p *v1.GitProvider) (gitrepo.Credentials, *problem) {
	creds := gitrepo.Credentials{PlainHTTP: p.Spec.Insecure}
	if p.Spec.SecretRef == nil {
		if needsSSHKey(p.Spec.URL) {
			return creds, &problem{condition: v1.ConditionValidated, reason: ReasonSecretInvalid, stalled: true,
				message: "an ssh URL needs spec.secretRef naming a Secret with keys ssh-privatekey and known_hosts"}
		}
		return creds, nil
	}
	var s corev1.Secret
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Spec.SecretRef.Name}
	if err := c.Get(ctx, key, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return creds, &problem{condition: v1.ConditionValidated, reason: ReasonSecretNotFound, stalled: true,
				message: fmt.Sprintf("Secret %s named by spec.secretRef does not exist: create it with the keys username/password, bearerToken, or ssh-privatekey and known_hosts", key)}
		}
		return creds, &problem{condition: v1.ConditionValidated, reason: ReasonSecretNotFound, transient: true,
			message: fmt.Sprintf("Secret %s cannot be read: %v", key, err)}
	}
	creds = gitrepo.Credentials{
		Username:      string(s.Data[v1.SecretKeyUsername]),
		Password:      string(s.Data[v1.SecretKeyPassword]),
		BearerToken:   string(s.Data[v1.SecretKeyBearerToken]),
		SSHPrivateKey: s.Data[v1.SecretKeySSHPrivateKey],
		KnownHosts:    s.Data[v1.SecretKeyKnownHosts],
		CABundle:      s.Data[v1.SecretKeyCABundle],
		PlainHTTP:     p.Spec.Insecure,
	}
	if msg := credentialsProblem(p.Spec.URL, creds); msg != "" {
		return creds, &problem{condition: v1.ConditionValidated, reason: ReasonSecretInvalid, stalled: true,
			message: fmt.Sprintf("Secret %s: %s", key, msg)}
	}
	return creds, nil
}

// credentialsProblem says what a Secret lacks for the URL's transport, or "".
func credentialsProblem(rawURL string, c gitrepo.Credentials) string {
	if needsSSHKey(rawURL) {
		switch {
		case len(c.SSHPrivateKey) == 0:
			return "an ssh URL needs the key ssh-privatekey"
		case len(c.KnownHosts) == 0:
			return "an ssh URL needs the key known_hosts (host keys are never trusted blindly)"
		}
		return ""
	}
	switch {
	case c.Password != "" && c.Username == "":
		return "the key password needs the key username beside it"
	case c.Username != "" && c.Password == "":
		return "the key username needs the key password beside it"
	case c.Username == "" && c.BearerToken == "" && isHTTP(rawURL):
		return "an http(s) URL needs the keys username and password, or bearerToken"
	}
	return ""
}

func needsSSHKey(rawURL string) bool {
	if strings.HasPrefix(rawURL, "ssh://") {
		return true
	}
	// scp-like form: user@host:path
	return !strings.Contains(rawURL, "://") && strings.Contains(rawURL, "@") && strings.Contains(rawURL, ":")
}

func isHTTP(rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// readSigningKey reads the commit signing key of the GitProvider, when it has one.
func readSigningKey(ctx context.Context, c client.Reader, p *v1.GitProvider) ([]byte, *problem) {
	if p.Spec.Commit.Signing == nil {
		return nil, nil
	}
	var s corev1.Secret
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Spec.Commit.Signing.SecretRef.Name}
	if err := c.Get(ctx, key, &s); err != nil {
		return nil, &problem{condition: v1.ConditionValidated, reason: ReasonSecretNotFound, stalled: apierrors.IsNotFound(err), transient: !apierrors.IsNotFound(err),
			message: fmt.Sprintf("signing Secret %s named by spec.commit.signing.secretRef cannot be read: %s", key, reasonOf(err))}
	}
	pem := s.Data[v1.SecretKeySSHPrivateKey]
	if len(pem) == 0 {
		return nil, &problem{condition: v1.ConditionValidated, reason: ReasonSigningKeyInvalid, stalled: true,
			message: fmt.Sprintf("signing Secret %s has no key ssh-privatekey", key)}
	}
	if _, err := gitrepo.NewCommitSigner(pem); err != nil {
		return nil, &problem{condition: v1.ConditionValidated, reason: ReasonSigningKeyInvalid, stalled: true,
			message: fmt.Sprintf("signing Secret %s: ssh-privatekey is not a usable OpenSSH private key", key)}
	}
	return pem, nil
}

func reasonOf(err error) string {
	if apierrors.IsNotFound(err) {
		return "it does not exist"
	}
	return err.Error()
}
