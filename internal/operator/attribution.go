package operator

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
)

// startAttribution serves the audit webhook when --audit-bind-address is set and returns
// the index of its facts; nil when attribution is off. Every replica collects facts (the
// server needs no leadership), so that a successor knows the recent authors.
func startAttribution(mgr ctrl.Manager, opts Options) (*attribution.Index, error) {
	if opts.AuditBindAddress == "" {
		return nil, nil
	}
	index := attribution.NewIndex(attribution.IndexConfig{})
	server, err := attribution.NewServer(attribution.ServerConfig{
		BindAddress:  opts.AuditBindAddress,
		CertFile:     opts.AuditCertFile,
		KeyFile:      opts.AuditKeyFile,
		ClientCAFile: opts.AuditClientCAFile,
		Insecure:     opts.AuditInsecure,
		AllowedNames: opts.AllowedNames(),
		Log:          ctrl.Log.WithName("audit-webhook"),
	}, index)
	if err != nil {
		return nil, fmt.Errorf("audit webhook: %w", err)
	}
	if err := mgr.Add(server); err != nil {
		return nil, fmt.Errorf("audit webhook: %w", err)
	}
	if err := registerAuditMetrics(index); err != nil {
		return nil, err
	}
	ctrl.Log.WithName("audit-webhook").Info("serving", "url", server.URL())
	return index, nil
}
