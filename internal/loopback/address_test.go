package loopback

import (
	"net"
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
// same process.
func TestAReservedPortIsNotReservedAgain(t *testing.T) {
	dir := t.TempDir()
	first, err := reserve(dir, 25000)
	if err != nil || !first {
		t.Fatalf("first reservation: %v %v", first, err)
	}
	second, err := reserve(dir, 25000)
	if err != nil {
		t.Fatal(err)
	}
	if second {
		t.Fatal("the same port was reserved twice")
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
