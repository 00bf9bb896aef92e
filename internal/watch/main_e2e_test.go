//go:build e2e

package watch

import (
	"fmt"
	"os"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// sharedCP is the default control plane shared by the e2e tests of this package. Tests that
// need special kube-apiserver flags start their own with testenv.NewControlPlane.
var sharedCP *testenv.ControlPlane

func TestMain(m *testing.M) {
	cp, err := testenv.StartControlPlane()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedCP = cp
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop control plane:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
