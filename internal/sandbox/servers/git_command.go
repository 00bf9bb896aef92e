package servers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// GitCommand returns a git command isolated from the machine's and the user's Git
// configuration, with env added (an identity for its commits, options).
func GitCommand(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
	), env...)
	return cmd
}

// GitOutput runs cmd and returns its standard output; an error carries git's stderr.
func GitOutput(cmd *exec.Cmd) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(cmd.Args[1:], " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
