//go:build e2e

package controller_test

import (
	"encoding/base64"
	"os/exec"

	sigsyaml "sigs.k8s.io/yaml"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func yamlUnmarshal(b []byte, v any) error { return sigsyaml.Unmarshal(b, v) }

func gitOutput(gitDir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...).Output()
	return string(out), err
}
