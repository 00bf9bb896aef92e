package attribution

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"os"
	"testing"
	"time"
)

// clientCert is a client TLS config presenting a certificate named cn, signed by ca.
func clientCert(t *testing.T, serverCA, ca *testCA, cn string) *tls.Config {
	t.Helper()
	cfg := clientTLS(t, serverCA, nil)
	c, k := ca.Issue(t, cn, false)
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Certificates = []tls.Certificate{pair}
	return cfg
}

func postTo(srv *Server, tlsCfg *tls.Config) error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg, DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := c.Post(srv.URL(), "application/json", bytes.NewReader(eventList(event("a1", "create", "ns", "cm", "u1", "10", "mallory"))))
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// With --audit-allowed-names, a certificate the client CA signed for another name (a
// kubelet's, a user's) cannot post audit events: it would choose the author of commits.
func TestAForgedAuditEventFromACertificateNotAllowedIsRefused(t *testing.T) {
	serverCA, clusterCA := newTestCA(t, "server-ca"), newTestCA(t, "cluster-ca")
	idx := NewIndex(IndexConfig{})
	cfg := tlsFiles(t, serverCA, clusterCA)
	cfg.AllowedNames = []string{"kube-apiserver"}
	srv := startServer(t, cfg, idx)

	if err := postTo(srv, clientCert(t, serverCA, clusterCA, "system:node:worker-1")); err == nil {
		t.Fatal("a kubelet's certificate posted audit events")
	}
	if n := idx.Counters().Refused(RefusedNameNotAllowed); n != 1 || idx.Len() != 0 {
		t.Fatalf("refused %d, facts %d; want 1 refusal and no fact", n, idx.Len())
	}
	if err := postTo(srv, clientCert(t, serverCA, clusterCA, "kube-apiserver")); err != nil || idx.Len() != 1 {
		t.Fatalf("the allowed name: %v, facts %d", err, idx.Len())
	}
}

// Plain HTTP without client authentication listens on a loopback address only.
func TestTheInsecureAuditPortListensOnLoopbackOnly(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	for _, bind := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		if srv, err := NewServer(ServerConfig{BindAddress: bind, Insecure: true}, idx); err == nil {
			_ = srv.ln.Close()
			t.Errorf("--audit-insecure listened on %s", bind)
		}
	}
	srv, err := NewServer(ServerConfig{BindAddress: "localhost:0", Insecure: true}, idx)
	if err != nil {
		t.Fatalf("localhost: %v", err)
	}
	_ = srv.ln.Close()
}

// A rotated server certificate and client CA are used without a restart.
func TestAuditPortCertificatesAreReloadedWhenTheirFilesChange(t *testing.T) {
	oldServerCA, oldClientCA := newTestCA(t, "server-ca-1"), newTestCA(t, "client-ca-1")
	idx := NewIndex(IndexConfig{})
	cfg := tlsFiles(t, oldServerCA, oldClientCA)
	srv := startServer(t, cfg, idx)
	if err := postTo(srv, clientCert(t, oldServerCA, oldClientCA, "kube-apiserver")); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}

	newServerCA, newClientCA := newTestCA(t, "server-ca-2"), newTestCA(t, "client-ca-2")
	cert, key := newServerCA.Issue(t, "gitops-reverser-audit", true)
	for path, data := range map[string][]byte{cfg.CertFile: cert, cfg.KeyFile: key, cfg.ClientCAFile: newClientCA.PEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for postTo(srv, clientCert(t, newServerCA, newClientCA, "kube-apiserver")) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the rotated certificates were not used")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := postTo(srv, clientCert(t, newServerCA, oldClientCA, "kube-apiserver")); err == nil {
		t.Fatal("a client of the replaced CA is still accepted")
	}
}
