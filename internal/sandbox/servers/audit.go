package servers

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// AuditPolicy is the minimal audit policy of docs/attribution.md: mutating requests at
// RequestResponse (Secrets at Metadata), nothing else.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
omitManagedFields: true
rules:
- level: None
  verbs: ["get", "list", "watch"]
- level: None
  resources:
  - group: ""
    resources: ["events"]
  - group: "events.k8s.io"
    resources: ["events"]
  - group: "coordination.k8s.io"
    resources: ["leases"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets"]
- level: RequestResponse
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// WebhookKubeconfig points kube-apiserver's audit webhook at server, with optional TLS
// material (PEM).
func WebhookKubeconfig(server, caPEM, certPEM, keyPEM string) string {
	cluster := "    server: " + server + "\n"
	if caPEM != "" {
		cluster += "    certificate-authority-data: " + base64.StdEncoding.EncodeToString([]byte(caPEM)) + "\n"
	}
	user := "  user: {}\n"
	if certPEM != "" {
		user = "  user:\n    client-certificate-data: " + base64.StdEncoding.EncodeToString([]byte(certPEM)) +
			"\n    client-key-data: " + base64.StdEncoding.EncodeToString([]byte(keyPEM)) + "\n"
	}
	return "apiVersion: v1\nkind: Config\nclusters:\n- name: gitops-reverser\n  cluster:\n" + cluster +
		"contexts:\n- name: audit\n  context:\n    cluster: gitops-reverser\n    user: kube-apiserver\ncurrent-context: audit\n" +
		"users:\n- name: kube-apiserver\n" + user
}

// WithAuditWebhook writes AuditPolicy and webhookKubeconfig into dir and returns the
// kube-apiserver flags that send audit events to that webhook, in batches at most a second
// old.
func WithAuditWebhook(dir, webhookKubeconfig string) ([]ControlPlaneOption, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	hook := filepath.Join(dir, "audit-webhook.kubeconfig")
	if err := os.WriteFile(policy, []byte(AuditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("write the audit policy: %w", err)
	}
	if err := os.WriteFile(hook, []byte(webhookKubeconfig), 0o600); err != nil {
		return nil, fmt.Errorf("write the audit webhook's kubeconfig: %w", err)
	}
	return []ControlPlaneOption{
		WithAPIServerFlag("audit-policy-file", policy),
		WithAPIServerFlag("audit-webhook-config-file", hook),
		WithAPIServerFlag("audit-webhook-batch-max-wait", "1s"),
	}, nil
}

// StartAuditSink answers 200 to every request on addr (over TLS when tlsConfig is set) until
// it is closed. kube-apiserver delivers its buffered audit events before it stops, and waits
// for a webhook that is gone: once the operator behind addr has stopped, a sink there lets
// the control plane stop.
func StartAuditSink(addr string, tlsConfig *tls.Config) (io.Closer, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("audit sink on %s: %w", addr, err)
	}
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
	}
	sink := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = sink.Serve(l) }()
	return sink, nil
}
