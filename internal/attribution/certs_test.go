package attribution

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// testCA is a throwaway certificate authority.
type testCA = testenv.CA

func newTestCA(t testing.TB, name string) *testCA { return testenv.NewCA(t, name) }

// tlsFiles writes a server certificate and key signed by serverCA, and clientCA's
// certificate, into a temporary folder, and returns the TLS ServerConfig fields.
func tlsFiles(t testing.TB, serverCA, clientCA *testCA) ServerConfig {
	t.Helper()
	dir := t.TempDir()
	cert, key := serverCA.Issue(t, "gitops-reverser-audit", true)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return ServerConfig{
		BindAddress:  "127.0.0.1:0",
		CertFile:     write("tls.crt", cert),
		KeyFile:      write("tls.key", key),
		ClientCAFile: write("client-ca.crt", clientCA.PEM),
	}
}

func clientTLS(t testing.TB, serverCA *testCA, client *testCA) *tls.Config {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(serverCA.Cert)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if client != nil {
		c, k := client.Issue(t, "kube-apiserver", false)
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}
