package attribution

import (
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"
)

// clientCAs is the pool of the client CA file, read again when the file changes, so that a
// rotated CA is trusted without a restart (the server certificate is reloaded by
// controller-runtime's certwatcher).
type clientCAs struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	current *x509.CertPool
}

func newClientCAs(path string) (*clientCAs, error) {
	c := &clientCAs{path: path}
	if _, err := c.pool(); err != nil {
		return nil, err
	}
	return c, nil
}

// pool returns the CAs, reading the file again when its modification time or size
// changed. When the file cannot be read or holds no certificate, the last pool read is
// kept and the error returned with it.
func (c *clientCAs) pool() (*x509.CertPool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, err := os.Stat(c.path)
	if err != nil {
		return c.current, fmt.Errorf("audit webhook: read client CA: %w", err)
	}
	if c.current != nil && info.ModTime().Equal(c.modTime) && info.Size() == c.size {
		return c.current, nil
	}
	pem, err := os.ReadFile(c.path)
	if err != nil {
		return c.current, fmt.Errorf("audit webhook: read client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return c.current, fmt.Errorf("audit webhook: %s holds no PEM certificate", c.path)
	}
	c.current, c.modTime, c.size = pool, info.ModTime(), info.Size()
	return pool, nil
}
