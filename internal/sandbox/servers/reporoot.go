package servers

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// RepoRoot returns the root of this Go module (the folder holding go.mod), found from the
// location of this source file so that tests in any package resolve it the same way.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("locate repository root: no caller information")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("locate repository root: no go.mod above %s", filepath.Dir(file))
		}
		dir = parent
	}
}
