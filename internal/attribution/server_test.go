package attribution

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"
)

func startServer(t *testing.T, cfg ServerConfig, idx *Index) *Server {
	t.Helper()
	srv, err := NewServer(cfg, idx)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	return srv
}

func TestServerVerifiesClientCertificates(t *testing.T) {
	serverCA, clientCA, strangerCA := newTestCA(t, "server-ca"), newTestCA(t, "audit-client-ca"), newTestCA(t, "stranger")
	idx := NewIndex(IndexConfig{})
	srv := startServer(t, tlsFiles(t, serverCA, clientCA), idx)
	body := eventList(event("a1", "create", "ns", "cm", "u1", "10", "alice"))
	postWith := func(tlsCfg *http.Transport) (int, error) {
		c := &http.Client{Transport: tlsCfg, Timeout: 30 * time.Second}
		resp, err := c.Post(srv.URL(), "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}

	if _, err := postWith(&http.Transport{TLSClientConfig: clientTLS(t, serverCA, strangerCA)}); err == nil {
		t.Fatal("a certificate of another CA was accepted")
	}
	if _, err := postWith(&http.Transport{TLSClientConfig: clientTLS(t, serverCA, nil)}); err == nil {
		t.Fatal("a client without certificate was accepted")
	}
	if got := idx.Counters().Refused(RefusedBadClientCert); got != 2 {
		t.Fatalf("bad client cert refusals %d, want 2", got)
	}
	if idx.Len() != 0 {
		t.Fatalf("facts %d after refused connections", idx.Len())
	}
	code, err := postWith(&http.Transport{TLSClientConfig: clientTLS(t, serverCA, clientCA)})
	if err != nil || code != http.StatusOK {
		t.Fatalf("signed client: %d, %v", code, err)
	}
	if idx.Len() != 1 {
		t.Fatalf("facts %d, want 1", idx.Len())
	}
}

func TestServerConfigurationIsChecked(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	ca := newTestCA(t, "ca")
	files := tlsFiles(t, ca, ca)
	bad := map[string]ServerConfig{
		"no address":               {Insecure: true},
		"insecure with TLS files":  {BindAddress: "127.0.0.1:0", Insecure: true, CertFile: files.CertFile},
		"TLS without client CA":    {BindAddress: "127.0.0.1:0", CertFile: files.CertFile, KeyFile: files.KeyFile},
		"missing certificate file": {BindAddress: "127.0.0.1:0", CertFile: files.CertFile + ".gone", KeyFile: files.KeyFile, ClientCAFile: files.ClientCAFile},
		"client CA not PEM":        {BindAddress: "127.0.0.1:0", CertFile: files.CertFile, KeyFile: files.KeyFile, ClientCAFile: files.KeyFile},
	}
	for name, cfg := range bad {
		t.Run(name, func(t *testing.T) {
			if srv, err := NewServer(cfg, idx); err == nil {
				_ = srv.ln.Close()
				t.Fatal("accepted")
			}
		})
	}
}

func TestInsecureServerServesPlainHTTPAndStops(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	srv := startServer(t, ServerConfig{BindAddress: "127.0.0.1:0", Insecure: true}, idx)
	resp, err := http.Post(srv.URL(), "application/json", bytes.NewReader(eventList(event("a1", "create", "ns", "cm", "u1", "10", "alice"))))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || idx.Len() != 1 {
		t.Fatalf("status %d facts %d", resp.StatusCode, idx.Len())
	}
}
