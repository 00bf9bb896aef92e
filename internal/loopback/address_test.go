package loopback

import (
	"net"
	"os"
	"testing"
)

// Many addresses asked for in one process are all different and all bindable, which a
// port-0 probe does not promise.
func TestAddressesAreDistinctAndBindable(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		addr, err := Address()
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("address %s handed out twice", addr)
		}
		seen[addr] = true
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("cannot bind the address handed out: %v", err)
		}
		_ = ln.Close()
	}
}

// A port reserved once cannot be reserved again while the reservation lives, even from the
// same process, and the reservation leaves no file in TMPDIR.
func TestAReservedPortIsNotReservedAgain(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	first, err := reserve(25001)
	if err != nil || !first {
		t.Fatalf("first reservation: %v %v", first, err)
	}
	second, err := reserve(25001)
	if err != nil {
		t.Fatal(err)
	}
	if second {
		t.Fatal("the same port was reserved twice")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Fatalf("the reservation left %s in TMPDIR", entries[0].Name())
	}
}

// A port some other program listens on is skipped.
func TestAPortInUseIsSkipped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if free(ln.Addr().String()) {
		t.Fatal("a port with a listener was reported free")
	}
}

// The range stays clear of the kernel's ephemeral ports, whatever they are set to.
func TestTheRangeAvoidsTheEphemeralPorts(t *testing.T) {
	for _, c := range []struct{ ephLow, ephHigh, low, high int }{
		{0, 0, lowPort, highPort},
		{32768, 60999, lowPort, highPort},
		{10000, 65535, 1024, 10000},
		{1024, 40000, 40001, 65536},
		{1024, 65535, lowPort, highPort},
	} {
		low, high := portRange(c.ephLow, c.ephHigh)
		if low != c.low || high != c.high {
			t.Errorf("ephemeral %d-%d: range %d-%d, want %d-%d", c.ephLow, c.ephHigh, low, high, c.low, c.high)
		}
	}
}
