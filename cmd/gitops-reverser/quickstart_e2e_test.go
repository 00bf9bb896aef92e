//go:build e2e && linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// prSetChildSubreaper makes this process adopt the orphaned descendants of its children, so
// that a process the quickstart leaves behind shows up as a child of the test.
const prSetChildSubreaper = 36

func becomeSubreaper(t *testing.T) {
	t.Helper()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
	}
}

// children lists the processes whose parent is this test process, as "pid state command".
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		end := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == me {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			found = append(found, fmt.Sprintf("%d %s %s", pid, fields[0], strings.ReplaceAll(string(cmdline), "\x00", " ")))
			_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind for the next test
		}
	}
	return found
}

// assertNothingLeft checks that no process and no file of the quickstart remains.
func assertNothingLeft(t *testing.T, tmp string) {
	t.Helper()
	if left := children(t); len(left) > 0 {
		t.Errorf("processes left behind by the quickstart:\n%s", strings.Join(left, "\n"))
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("file left behind in TMPDIR: %s", e.Name())
	}
}

// quickstartCmd prepares the binary's quickstart with its own TMPDIR, so that every file it
// and the control plane create can be checked for removal.
func quickstartCmd(t *testing.T, bin, tmp string, extraEnv ...string) *exec.Cmd {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run 'make test'")
	}
	cmd := exec.Command(bin, "quickstart")
	cmd.Env = append(os.Environ(), append([]string{"TMPDIR=" + tmp}, extraEnv...)...)
	return cmd
}

// historyKinds classifies the commits of the `git log --stat --summary` section of the
// output: a commit creates when it has a "create mode" line, deletes when it has a
// "delete mode" line, and updates when it changed more files than it created and deleted.
func historyKinds(t *testing.T, out string) (create, update, del int) {
	t.Helper()
	_, section, ok := strings.Cut(out, "log --stat --summary main\n")
	if !ok {
		t.Fatalf("no `git log --stat --summary main` in the output:\n%s", out)
	}
	section, _, _ = strings.Cut(section, "\n$ git ")
	for _, block := range strings.Split(section, "\ncommit ")[0:] {
		var files, created, deleted int
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, " create mode "):
				created++
			case strings.HasPrefix(line, " delete mode "):
				deleted++
			case strings.HasPrefix(line, " ") && strings.Contains(line, " | "):
				files++
			}
		}
		if created > 0 {
			create++
		}
		if deleted > 0 {
			del++
		}
		if files > created+deleted {
			update++
		}
	}
	return create, update, del
}

// The quickstart ends with a history of create, update and delete commits, each by the user
// who made the change (alice or bob, from the sandbox's audit events), with its Audit-ID.
func TestQuickstartExitsAfterAHistoryOfTwoAuthorsWithCreateUpdateAndDeleteCommits(t *testing.T) {
	becomeSubreaper(t)
	bin := buildBinary(t)
	tmp := t.TempDir()
	cmd := quickstartCmd(t, bin, tmp, "QUICKSTART_EXIT=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("quickstart: %v after %s\nstdout:\n%s\nstderr:\n%s", err, time.Since(start), &stdout, &stderr)
		}
	case <-time.After(12 * time.Minute):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		t.Fatalf("quickstart did not finish within 12 minutes\nstdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	}
	t.Logf("QUICKSTART_EXIT=1 quickstart took %s", time.Since(start).Round(time.Millisecond))
	out := stdout.String()

	create, update, del := historyKinds(t, out)
	if create < 1 || update < 1 || del < 1 {
		t.Errorf("the history has %d create, %d update and %d delete commits; want at least one of each:\n%s", create, update, del, out)
	}
	_, brief, _ := strings.Cut(out, "# The commits on main, oldest first\n")
	brief, _, _ = strings.Cut(brief, "\n$ git ")
	for _, user := range []string{"alice", "bob"} {
		if !strings.Contains(brief, " "+user+" ") || !strings.Contains(out, "Author: "+user+" <") {
			t.Errorf("no commit of the history is authored by %s:\n%s", user, out)
		}
	}
	if !strings.Contains(out, "Audit-ID: ") {
		t.Errorf("no commit of the history carries an Audit-ID trailer:\n%s", out)
	}
	_, tree, _ := strings.Cut(out, "ls-tree -r --name-only main\n")
	for _, want := range []string{"clusters/sandbox/demo/core/configmaps/app-config.yaml", "clusters/sandbox/demo/apps/deployments/web.yaml"} {
		if !strings.Contains(tree, want+"\n") {
			t.Errorf("the tree does not list %s:\n%s", want, tree)
		}
	}
	if strings.Contains(tree, "feature-flags.yaml") {
		t.Errorf("the tree still lists the deleted feature-flags.yaml:\n%s", tree)
	}
	for _, want := range []string{"$ kubectl create configmap app-config", "$ kubectl delete configmap feature-flags", "$ kubectl set image deployment/web"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not show %q", want)
		}
	}
	if strings.Contains(out, "export KUBECONFIG=") {
		t.Errorf("with QUICKSTART_EXIT=1 the sandbox is not offered for own edits")
	}
	assertNothingLeft(t, tmp)
}

func TestQuickstartKeepsTheSandboxUntilInterrupted(t *testing.T) {
	becomeSubreaper(t)
	bin := buildBinary(t)
	tmp := t.TempDir()
	cmd := quickstartCmd(t, bin, tmp)
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var outMu sync.Mutex
	var out strings.Builder
	prompt := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdoutPipe)
		once := sync.Once{}
		for sc.Scan() {
			outMu.Lock()
			out.WriteString(sc.Text() + "\n")
			outMu.Unlock()
			if strings.HasPrefix(sc.Text(), "Press Ctrl-C") {
				once.Do(func() { close(prompt) })
			}
		}
		_, _ = io.Copy(io.Discard, stdoutPipe)
		exited <- cmd.Wait()
	}()
	output := func() string {
		outMu.Lock()
		defer outMu.Unlock()
		return out.String()
	}
	select {
	case <-prompt:
	case err := <-exited:
		t.Fatalf("quickstart exited (%v) before offering the sandbox\nstdout:\n%s\nstderr:\n%s", err, output(), &stderr)
	case <-time.After(12 * time.Minute):
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		t.Fatalf("no Ctrl-C prompt within 12 minutes\nstdout:\n%s\nstderr:\n%s", output(), &stderr)
	}

	// The sandbox is usable with the printed KUBECONFIG.
	var kubeconfig string
	for _, line := range strings.Split(output(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "export KUBECONFIG="); ok {
			kubeconfig = v
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("the printed KUBECONFIG %q: %v", kubeconfig, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cm corev1.ConfigMap
	if err := c.Get(ctx, types.NamespacedName{Namespace: "demo", Name: "app-config"}, &cm); err != nil {
		t.Errorf("the sandbox does not answer through the printed KUBECONFIG: %v", err)
	}

	// Ctrl-C.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("quickstart exited with %v after Ctrl-C\nstdout:\n%s\nstderr:\n%s", err, output(), &stderr)
		}
	case <-time.After(time.Minute):
		t.Fatalf("quickstart did not stop within a minute of Ctrl-C\nstdout:\n%s", output())
	}
	assertNothingLeft(t, tmp)
}
