package testenv

import (
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
)

// AuditPolicy is the minimal audit policy of docs/attribution.md (servers.AuditPolicy).
const AuditPolicy = servers.AuditPolicy

// WebhookKubeconfig points kube-apiserver's audit webhook at server, with optional TLS
// material (PEM).
func WebhookKubeconfig(server, caPEM, certPEM, keyPEM string) string {
	return servers.WebhookKubeconfig(server, caPEM, certPEM, keyPEM)
}

// WithAuditWebhook returns the kube-apiserver flags that send audit events (AuditPolicy) to
// the webhook described by webhookKubeconfig, in batches at most a second old.
func WithAuditWebhook(t testing.TB, webhookKubeconfig string) []ControlPlaneOption {
	t.Helper()
	opts, err := servers.WithAuditWebhook(t.TempDir(), webhookKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return opts
}
