package loopback

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// The range ports are taken from: below Linux's default ephemeral range (32768–60999), so
// neither outgoing connections nor port-0 listeners are handed these ports by the kernel.
const (
	lowPort  = 20000
	highPort = 32000
	attempts = 500
)

// Address returns "127.0.0.1:port" for a port that nothing listened on when it was asked
// for and that no other caller of Address on this machine holds. The reservation lasts
// until the process exits.
func Address() (string, error) {
	dir := filepath.Join(os.TempDir(), "gitops-reverser-ports")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("reserve a loopback port: %w", err)
	}
	for range attempts {
		port := lowPort + rand.IntN(highPort-lowPort)
		reserved, err := reserve(dir, port)
		if err != nil {
			return "", err
		}
		if !reserved {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if free(addr) {
			return addr, nil
		}
	}
	return "", fmt.Errorf("reserve a loopback port: no free port in %d-%d after %d attempts", lowPort, highPort, attempts)
}

// reserve takes an exclusive lock on the port's file. The descriptor is deliberately never
// closed (a raw descriptor, so no finalizer closes it either): the lock is released when the
// process exits, whichever way it exits. A second open in the same process conflicts too,
// because flock locks belong to the open file description.
func reserve(dir string, port int) (bool, error) {
	path := filepath.Join(dir, strconv.Itoa(port))
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return false, fmt.Errorf("reserve loopback port %d: %w", port, err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = syscall.Close(fd)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("reserve loopback port %d: %w", port, err)
	}
	return true, nil
}

// free reports whether addr can be bound now; a port some other program holds is skipped
// (its lock stays taken, which only narrows the range a little).
func free(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}
