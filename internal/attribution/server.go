package attribution

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// ServerConfig is the audit webhook server's configuration: the flags --audit-bind-address,
// --audit-cert-file, --audit-key-file, --audit-client-ca-file and --audit-insecure.
type ServerConfig struct {
	// BindAddress is host:port to listen on ("127.0.0.1:0" picks a free port).
	BindAddress string
	// CertFile and KeyFile are the server's certificate and key (PEM).
	CertFile, KeyFile string
	// ClientCAFile holds the CA certificates (PEM) that sign kube-apiserver's client
	// certificate. Every connection must present a certificate that verifies against it
	// for client authentication.
	ClientCAFile string
	// AllowedNames, when set, are the client certificate common names accepted, as
	// kube-apiserver's --requestheader-allowed-names: any other certificate the CA signed (a
	// kubelet's, a user's) is refused.
	AllowedNames []string
	// Insecure serves plain HTTP without client authentication, on a loopback address only.
	// The TLS fields must then be empty.
	Insecure bool
	// MaxBodyBytes bounds a request body (DefaultMaxBodyBytes when 0).
	MaxBodyBytes int64
	// Gate decides which events become facts (DefaultGate when nil).
	Gate *Gate
	// Log receives the server's log lines (discarded when zero).
	Log logr.Logger
}

// Server serves the audit webhook at /audit-webhook. It listens from NewServer on, so
// Addr is known before Start.
type Server struct {
	ln       net.Listener
	srv      *http.Server
	insecure bool
	log      logr.Logger
	// certs serves the server certificate, reloaded when its files change (nil: insecure).
	certs *certwatcher.CertWatcher
}

// NewServer checks the configuration, loads the certificates and listens.
func NewServer(cfg ServerConfig, idx *Index) (*Server, error) {
	if idx == nil {
		return nil, errors.New("audit webhook: no index")
	}
	if cfg.BindAddress == "" {
		return nil, errors.New("audit webhook: --audit-bind-address is empty")
	}
	log := cfg.Log
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	gate := DefaultGate()
	if cfg.Gate != nil {
		gate = *cfg.Gate
	}
	counters := idx.Counters()
	mux := http.NewServeMux()
	mux.Handle(Path, NewHandler(idx, gate, cfg.MaxBodyBytes, log))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          stdlog.New(io.Discard, "", 0), // handshake refusals are counted instead
	}
	var certs *certwatcher.CertWatcher
	if cfg.Insecure {
		if cfg.CertFile != "" || cfg.KeyFile != "" || cfg.ClientCAFile != "" || len(cfg.AllowedNames) > 0 {
			return nil, errors.New("audit webhook: --audit-insecure excludes --audit-cert-file, --audit-key-file, --audit-client-ca-file and --audit-allowed-names")
		}
		if !loopback(cfg.BindAddress) {
			return nil, fmt.Errorf("audit webhook: --audit-insecure serves plain HTTP without client authentication: only on a loopback address (127.0.0.1, ::1, localhost), not %q", cfg.BindAddress)
		}
	} else {
		if cfg.CertFile == "" || cfg.KeyFile == "" || cfg.ClientCAFile == "" {
			return nil, errors.New("audit webhook: --audit-cert-file, --audit-key-file and --audit-client-ca-file are required unless --audit-insecure")
		}
		var err error
		if certs, err = certwatcher.New(cfg.CertFile, cfg.KeyFile); err != nil {
			return nil, fmt.Errorf("audit webhook: load server certificate: %w", err)
		}
		cas, err := newClientCAs(cfg.ClientCAFile)
		if err != nil {
			return nil, err
		}
		srv.TLSConfig = &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: certs.GetCertificate,
			// Ask for a certificate and verify it ourselves, so that a refusal is
			// counted (the standard RequireAndVerifyClientCert fails silently).
			ClientAuth:       tls.RequestClientCert,
			VerifyConnection: verifyClient(cas, cfg.AllowedNames, counters, log),
		}
	}
	ln, err := net.Listen("tcp", cfg.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("audit webhook: listen on %s: %w", cfg.BindAddress, err)
	}
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	return &Server{ln: ln, srv: srv, insecure: cfg.Insecure, log: log, certs: certs}, nil
}

// loopback reports whether a bind address listens on a loopback interface only.
func loopback(bind string) bool {
	host, _, err := net.SplitHostPort(bind)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func verifyClient(cas *clientCAs, allowed []string, counters *Counters, log logr.Logger) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			counters.refuse(RefusedBadClientCert)
			return errors.New("audit webhook: a client certificate is required")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		pool, err := cas.pool()
		if err != nil {
			log.Error(err, "client CA unreadable; keeping the last one read")
		}
		leaf := cs.PeerCertificates[0]
		_, err = leaf.Verify(x509.VerifyOptions{
			Roots:         pool,
			Intermediates: inter,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		if err != nil {
			counters.refuse(RefusedBadClientCert)
			return fmt.Errorf("audit webhook: client certificate: %w", err)
		}
		if len(allowed) > 0 && !slices.Contains(allowed, leaf.Subject.CommonName) {
			counters.refuse(RefusedNameNotAllowed)
			return fmt.Errorf("audit webhook: client certificate %q is not among --audit-allowed-names", leaf.Subject.CommonName)
		}
		return nil
	}
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the webhook's URL on the listening address ("http" when insecure, else "https").
func (s *Server) URL() string {
	scheme := "https"
	if s.insecure {
		scheme = "http"
	}
	return scheme + "://" + s.ln.Addr().String() + Path
}

// Start serves until ctx ends, then shuts down (waiting up to 5 s for requests in
// flight). It suits a controller-runtime manager as a Runnable.
func (s *Server) Start(ctx context.Context) error {
	if s.certs != nil {
		go func() {
			if err := s.certs.Start(ctx); err != nil {
				s.log.Error(err, "watching the server certificate; it is no longer reloaded")
			}
		}()
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	s.log.Info("audit webhook serving", "url", s.URL())
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("audit webhook: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		_ = s.srv.Close()
	}
	<-errc
	return nil
}

// NeedLeaderElection is false: every replica collects facts, since kube-apiserver posts
// to whichever one its Service picks and the one that leads may change.
func (s *Server) NeedLeaderElection() bool { return false }
