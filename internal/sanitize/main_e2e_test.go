//go:build e2e

package sanitize

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// One control plane serves every e2e test of the package.
var (
	sharedCP      *testenv.ControlPlane
	sharedDynamic dynamic.Interface
)

func TestMain(m *testing.M) {
	cp, err := testenv.StartControlPlane()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedCP = cp
	sharedDynamic, err = dynamic.NewForConfig(cp.Config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dynamic client:", err)
		_ = cp.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop control plane:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
