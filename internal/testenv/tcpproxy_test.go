package testenv

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func dialEcho(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return c, bufio.NewReader(c)
}

func echoes(c net.Conn, r *bufio.Reader, line string) bool {
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return false
	}
	got, err := r.ReadString('\n')
	return err == nil && got == line+"\n"
}

func TestTCPProxyForwardsCutsAndRefusesWhileDown(t *testing.T) {
	p := StartTCPProxy(t, echoServer(t))

	c, r := dialEcho(t, p.Addr())
	if !echoes(c, r, "hello") {
		t.Fatal("the proxy does not forward both ways")
	}

	p.Cut()
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("a cut connection still reads")
	}

	p.SetDown(true)
	c, r = dialEcho(t, p.Addr())
	if echoes(c, r, "while down") {
		t.Fatal("a connection made while down was forwarded")
	}

	p.SetDown(false)
	c, r = dialEcho(t, p.Addr())
	if !echoes(c, r, "up again") {
		t.Fatal("the proxy does not forward after coming back up")
	}
}

func TestTCPProxyCutsAfterBytes(t *testing.T) {
	p := StartTCPProxy(t, echoServer(t))
	c, r := dialEcho(t, p.Addr())
	p.CutAfter(10)
	if !echoes(c, r, "12345") { // 6 bytes back
		t.Fatal("cut before the threshold")
	}
	// The next 6 bytes cross the threshold: they are delivered, then the connection is cut.
	if !echoes(c, r, "abcde") {
		t.Fatal("the bytes that crossed the threshold were not delivered")
	}
	if echoes(c, r, "more") {
		t.Fatal("the connection survived the threshold")
	}
	if p.Cuts() != 1 {
		t.Fatalf("cuts = %d, want 1", p.Cuts())
	}
}

func TestTCPProxyGoesDownAfterBytes(t *testing.T) {
	p := StartTCPProxy(t, echoServer(t))
	c, r := dialEcho(t, p.Addr())
	p.DownAfter(1)
	if !echoes(c, r, "x") || echoes(c, r, "y") {
		t.Fatal("the connection survived the threshold")
	}
	c, r = dialEcho(t, p.Addr())
	if echoes(c, r, "while down") {
		t.Fatal("the proxy is not down after the threshold")
	}
	p.SetDown(false)
	c, r = dialEcho(t, p.Addr())
	if !echoes(c, r, "up") {
		t.Fatal("the proxy does not come back up")
	}
}
