package testenv

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// TCPProxy forwards TCP connections from a loopback port to an upstream address, so that a
// test can cut the connections of a client (such as a watch) without touching the server.
type TCPProxy struct {
	upstream string
	ln       net.Listener

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	down  bool
	cuts  int
	// armed, when >= 0, is the number of bytes from upstream after which every connection
	// is cut once (and the proxy goes down if armedDown).
	armed     int64
	armedDown bool
	wg        sync.WaitGroup
}

// StartTCPProxy listens on 127.0.0.1:0 and forwards every connection to upstream
// ("host:port"). It stops when the test ends.
func StartTCPProxy(t testing.TB, upstream string) *TCPProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &TCPProxy{upstream: upstream, ln: ln, conns: map[net.Conn]struct{}{}, armed: -1}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// StartAPIServerProxy starts a proxy in front of the API server of cfg and returns it with a
// copy of cfg that goes through it. TLS still verifies: the serving certificate of the test
// control plane covers 127.0.0.1.
func StartAPIServerProxy(t testing.TB, cfg *rest.Config) (*TCPProxy, *rest.Config) {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := StartTCPProxy(t, u.Host)
	c := rest.CopyConfig(cfg)
	u.Host = p.Addr()
	c.Host = u.String()
	return p, c
}

// Addr is the proxy's "127.0.0.1:port".
func (p *TCPProxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every open connection, both ways.
func (p *TCPProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

func (p *TCPProxy) cutLocked() {
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
	p.cuts++
}

// Cuts counts the calls to Cut, including those made by CutAfter.
func (p *TCPProxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// CutAfter cuts every connection once, as soon as n more bytes have come from upstream
// (summed over all connections). It lets a test break a response in its middle.
func (p *TCPProxy) CutAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.armedDown = n, false
}

// DownAfter is CutAfter that also sets the proxy down when it cuts, so that a client's
// transparent retries fail too; SetDown(false) brings it back.
func (p *TCPProxy) DownAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.armedDown = n, true
}

// SetDown makes the proxy close new connections at once (down) or forward them again.
func (p *TCPProxy) SetDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

func (p *TCPProxy) close() {
	_ = p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *TCPProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			_ = client.Close()
			continue
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

func (p *TCPProxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client] = struct{}{}
	p.conns[server] = struct{}{}
	p.mu.Unlock()

	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() {
		defer pipes.Done()
		_, _ = io.Copy(server, client)
		p.closePair(client, server)
	}()
	go func() {
		defer pipes.Done()
		p.copyDown(client, server)
		p.closePair(client, server)
	}()
	pipes.Wait()
}

// copyDown copies upstream to the client, counting bytes for CutAfter.
func (p *TCPProxy) copyDown(client, server net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
			p.count(int64(n))
		}
		if err != nil {
			return
		}
	}
}

func (p *TCPProxy) count(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed < 0 {
		return
	}
	p.armed -= n
	if p.armed <= 0 {
		p.armed = -1
		p.down = p.down || p.armedDown
		p.cutLocked()
	}
}

func (p *TCPProxy) closePair(a, b net.Conn) {
	p.mu.Lock()
	delete(p.conns, a)
	delete(p.conns, b)
	p.mu.Unlock()
	_ = a.Close()
	_ = b.Close()
}
