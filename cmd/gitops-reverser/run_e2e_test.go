//go:build e2e

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gitops-reverser")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, deadline time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		if cond() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", deadline, what)
}

func TestRunServesProbesLogsJSONAndStopsOnSIGTERM(t *testing.T) {
	cp := testenv.NewControlPlane(t)
	kubeconfig, err := cp.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	probe := testenv.LoopbackAddress(t)
	cmd := exec.Command(buildBinary(t), "run", "--kubeconfig", kubeconfig,
		"--health-probe-bind-address", probe, "--metrics-bind-address", "127.0.0.1:0", "--leader-elect",
		"--leader-election-namespace", "default")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	waitFor(t, 2*time.Minute, "/readyz to answer 200", func() bool {
		resp, err := http.Get(fmt.Sprintf("http://%s/readyz", probe))
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var logLines []string
	collect := func() {
		for l := range lines {
			logLines = append(logLines, l)
		}
	}
	select {
	case err := <-exited:
		collect()
		if err != nil {
			t.Fatalf("run exited with %v after SIGTERM; log:\n%v", err, logLines)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop within 30s of SIGTERM")
	}
	if len(logLines) == 0 {
		t.Fatal("run logged nothing")
	}
	for _, l := range logLines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(l), &entry); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
	}
}
