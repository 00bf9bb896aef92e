package controller

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
)

func TestCredentialsProblemSaysWhatTheURLsTransportLacks(t *testing.T) {
	cases := []struct {
		name, url string
		creds     gitrepo.Credentials
		want      string // "" = usable
	}{
		{"https with user and password", "https://git.example.com/a.git", gitrepo.Credentials{Username: "u", Password: "hunter2-secret"}, ""},
		{"https with a token", "https://git.example.com/a.git", gitrepo.Credentials{BearerToken: "t"}, ""},
		{"https with nothing", "https://git.example.com/a.git", gitrepo.Credentials{}, "username and password, or bearerToken"},
		{"password without user", "https://git.example.com/a.git", gitrepo.Credentials{Password: "hunter2-secret"}, "needs the key username"},
		{"user without password", "http://git.example.com/a.git", gitrepo.Credentials{Username: "u"}, "needs the key password"},
		{"ssh without key", "ssh://git@git.example.com/a.git", gitrepo.Credentials{KnownHosts: []byte("h")}, "ssh-privatekey"},
		{"scp-like ssh without known_hosts", "git@git.example.com:team/a.git", gitrepo.Credentials{SSHPrivateKey: []byte("k")}, "known_hosts"},
		{"ssh complete", "ssh://git@git.example.com/a.git", gitrepo.Credentials{SSHPrivateKey: []byte("k"), KnownHosts: []byte("h")}, ""},
		{"file needs nothing", "file:///srv/git/a.git", gitrepo.Credentials{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := credentialsProblem(c.url, c.creds)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("credentialsProblem = %q, want %q", got, c.want)
			}
			if c.creds.Password != "" && strings.Contains(got, c.creds.Password) {
				t.Fatalf("the message holds the password: %q", got)
			}
		})
	}
}

func TestProbeBranchAsksForALiteralAllowedBranch(t *testing.T) {
	if got := probeBranch([]string{"release/*", "main"}); got != "main" {
		t.Fatalf("probeBranch = %q", got)
	}
	if got := probeBranch([]string{"feature/*"}); got != "main" {
		t.Fatalf("probeBranch of globs only = %q", got)
	}
}

// A private Git server's CA comes from the credentials Secret's ca.crt, beside the keys of
// the transport (docs/security.md#git-transport).
func TestTheCredentialsSecretsCACertificateVerifiesTheServer(t *testing.T) {
	caPEM := []byte("-----BEGIN CERTIFICATE-----\nprivate CA\n-----END CERTIFICATE-----\n")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "git"}, Data: map[string][]byte{
		v1.SecretKeyUsername: []byte("bot"), v1.SecretKeyPassword: []byte("pw"), v1.SecretKeyCABundle: caPEM,
	}}
	c := fake.NewClientBuilder().WithObjects(secret).Build()
	p := &v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "origin"}, Spec: v1.GitProviderSpec{
		URL: "https://git.internal.example/team/app.git", SecretRef: &v1.LocalObjectReference{Name: "git"},
	}}
	creds, prob := readCredentials(context.Background(), c, p)
	if prob != nil {
		t.Fatalf("problem: %+v", prob)
	}
	if !bytes.Equal(creds.CABundle, caPEM) || creds.Username != "bot" {
		t.Fatalf("credentials carry CA %q, user %q; want the Secret's ca.crt and username", creds.CABundle, creds.Username)
	}
}
