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
	"os"
	"time"

	"github.com/go-logr/logr"
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
	// Insecure serves plain HTTP without client authentication: local use only. The TLS
	// fields must then be empty.
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
	if cfg.Insecure {
		if cfg.CertFile != "" || cfg.KeyFile != "" || cfg.ClientCAFile != "" {
			return nil, errors.New("audit webhook: --audit-insecure excludes --audit-cert-file, --audit-key-file and --audit-client-ca-file")
		}
	} else {
		if cfg.CertFile == "" || cfg.KeyFile == "" || cfg.ClientCAFile == "" {
			return nil, errors.New("audit webhook: --audit-cert-file, --audit-key-file and --audit-client-ca-file are required unless --audit-insecure")
		}
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("audit webhook: load server certificate: %w", err)
		}
		caPEM, err := os.ReadFile(cfg.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("audit webhook: read client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("audit webhook: %s holds no PEM certificate", cfg.ClientCAFile)
		}
		srv.TLSConfig = &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{cert},
			// Ask for a certificate and verify it ourselves, so that a refusal is
			// counted (the standard RequireAndVerifyClientCert fails silently).
			ClientAuth:       tls.RequestClientCert,
			VerifyConnection: verifyClient(pool, counters),
		}
	}
	ln, err := net.Listen("tcp", cfg.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("audit webhook: listen on %s: %w", cfg.BindAddress, err)
	}
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	return &Server{ln: ln, srv: srv, insecure: cfg.Insecure, log: log}, nil
}

func verifyClient(pool *x509.CertPool, counters *Counters) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			counters.refuse(RefusedBadClientCert)
			return errors.New("audit webhook: a client certificate is required")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
			Roots:         pool,
			Intermediates: inter,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		if err != nil {
			counters.refuse(RefusedBadClientCert)
			return fmt.Errorf("audit webhook: client certificate: %w", err)
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
