package testenv

import (
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/loopback"
)

// LoopbackAddress returns a loopback address reserved for this test process (see package
// loopback): a server started with it later does not collide with another's.
func LoopbackAddress(t testing.TB) string {
	t.Helper()
	addr, err := loopback.Address()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
