package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// The range ports are taken from by default: below Linux's default ephemeral range
// (32768–60999), so neither outgoing connections nor port-0 listeners are handed them.
const (
	lowPort  = 20000
	highPort = 32000
	attempts = 500
)

// Address returns "127.0.0.1:port" for a port that nothing listened on when it was asked
// for and that no other caller of Address on this machine holds. The reservation lasts
// until the process exits.
func Address() (string, error) {
	low, high := portRange(ephemeralRange())
	for range attempts {
		port := low + rand.IntN(high-low)
		reserved, err := reserve(port)
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
	return "", fmt.Errorf("reserve a loopback port: no free port in %d-%d after %d attempts", low, high, attempts)
}

// portRange is the range to draw from, given the kernel's ephemeral range (0, 0 when
// unknown): 20000–32000 unless that overlaps it, else what lies below or above it.
func portRange(ephemeralLow, ephemeralHigh int) (int, int) {
	switch {
	case ephemeralLow == 0 || ephemeralLow >= highPort || ephemeralHigh < lowPort:
		return lowPort, highPort
	case ephemeralLow-1024 >= 2000: // room below it, above the privileged ports
		return 1024, ephemeralLow
	case 65535-ephemeralHigh >= 2000:
		return ephemeralHigh + 1, 65536
	}
	return lowPort, highPort // the whole range is ephemeral: the bind check still holds
}

// ephemeralRange reads Linux's ip_local_port_range; 0, 0 when it cannot.
func ephemeralRange() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, 0
	}
	low, err1 := strconv.Atoi(fields[0])
	high, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil || low > high {
		return 0, 0
	}
	return low, high
}

// free reports whether addr can be bound now; a port some other program holds is skipped
// (its reservation stays taken, which only narrows the range a little).
func free(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}
