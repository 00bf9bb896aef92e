//go:build e2e

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
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// The lines client-go's leader election and the branch worker log (JSON "msg" values).
const (
	logAcquired      = `"msg":"Successfully acquired lease"`
	logWorkerStarted = `"msg":"branch worker started"`
	// controller-runtime starts the reconcilers on the leader only.
	logControllerStarted = `"msg":"Starting Controller"`
)

// operatorProcess is one `gitops-reverser run` child process in a process group of its own.
type operatorProcess struct {
	name    string
	cmd     *exec.Cmd
	workDir string
	exited  chan struct{}

	mu    sync.Mutex
	lines []string
}

// startOperatorProcess runs the binary with leader election against kubeconfig; it is
// killed (with its whole process group) when the test ends.
func startOperatorProcess(t *testing.T, bin, name, kubeconfig, leaseNS, leaseID string) *operatorProcess {
	t.Helper()
	p := &operatorProcess{name: name, workDir: t.TempDir(), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "run", "--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", leaseNS, "--leader-election-id", leaseID,
		"--work-dir", p.workDir, "--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:0")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			t.Logf("log of operator %s (pid %d), last lines:\n%s", p.name, p.cmd.Process.Pid, strings.Join(p.tail(60), "\n"))
		}
	})
	return p
}

// kill sends SIGKILL to the process group and waits for the process to be gone.
func (p *operatorProcess) kill(t *testing.T) {
	t.Helper()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Errorf("operator %s (pid %d) still runs a minute after SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

func (p *operatorProcess) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// count returns how many log lines contain s.
func (p *operatorProcess) count(s string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

func (p *operatorProcess) tail(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lines) <= n {
		return append([]string(nil), p.lines...)
	}
	return append([]string(nil), p.lines[len(p.lines)-n:]...)
}

// localCopies lists the branch workers' local copies under the work dir.
func (p *operatorProcess) localCopies() []string {
	entries, err := os.ReadDir(filepath.Join(p.workDir, "branches"))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// gitFiles returns every file under prefix on branch of the bare repository dir, with its
// content, read by two git processes whatever the number of files.
func gitFiles(dir, branch, prefix string) (map[string]string, error) {
	git := func(stdin io.Reader, args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"--git-dir", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		cmd.Stdin = stdin
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w: %s", args[0], err, stderr.String())
		}
		return out, nil
	}
	names, err := git(nil, "ls-tree", "-r", "--name-only", branch, "--", prefix)
	if err != nil {
		return nil, err
	}
	paths := strings.Fields(string(names))
	files := map[string]string{}
	if len(paths) == 0 {
		return files, nil
	}
	var req bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&req, "%s:%s\n", branch, p)
	}
	out, err := git(&req, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, p := range paths {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("cat-file output of %s: %w", p, err)
		}
		fields := strings.Fields(header)
		if len(fields) != 3 {
			return nil, fmt.Errorf("cat-file answered %q for %s", header, p)
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("cat-file answered %q for %s", header, p)
		}
		content := make([]byte, size+1) // and the newline after it
		if _, err := io.ReadFull(r, content); err != nil {
			return nil, fmt.Errorf("cat-file content of %s: %w", p, err)
		}
		files[p] = string(content[:size])
	}
	return files, nil
}

// mirrorDiff compares the ConfigMaps of ns with their documents under folder on main and
// describes every difference ("" when Git holds exactly the cluster's ConfigMaps).
func mirrorDiff(ctx context.Context, c client.Client, repoDir, folder, ns string) (string, error) {
	var live corev1.ConfigMapList
	if err := c.List(ctx, &live, client.InNamespace(ns)); err != nil {
		return "", err
	}
	prefix := folder + "/" + ns + "/core/configmaps/"
	files, err := gitFiles(repoDir, "main", prefix)
	if err != nil {
		return "", err
	}
	var diffs []string
	for _, cm := range live.Items {
		path := prefix + cm.Name + ".yaml"
		doc, ok := files[path]
		delete(files, path)
		if !ok {
			diffs = append(diffs, "missing "+cm.Name)
			continue
		}
		var got corev1.ConfigMap
		if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: unreadable document: %v", cm.Name, err))
			continue
		}
		if fmt.Sprint(got.Data) != fmt.Sprint(cm.Data) {
			diffs = append(diffs, fmt.Sprintf("%s: Git has %v, the cluster %v", cm.Name, got.Data, cm.Data))
		}
	}
	for path := range files {
		diffs = append(diffs, "deleted but still in Git: "+strings.TrimPrefix(path, prefix))
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; "), nil
}

func leaseHolder(ctx context.Context, c client.Client, ns, name string) string {
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &lease); err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// TestLeaderElectionOneWriterAndTakeoverAfterKill9LosesNoEdit runs two operator processes
// with --leader-elect against one API server (issue 7): only the lease holder writes; the
// leader is killed with SIGKILL in the middle of a burst of edits; the other process takes
// the lease over when it expires, and its first snapshot brings every edit — made before
// the kill but not pushed, made while nobody led, made after the takeover — into Git.
func TestLeaderElectionOneWriterAndTakeoverAfterKill9LosesNoEdit(t *testing.T) {
	const (
		wait   = 5 * time.Minute // a loaded machine: start-up, lease expiry, snapshot, push
		ns     = "leader"
		folder = "live"
		burst  = 60
		killAt = 30 // the leader dies after this many creates of the burst
	)
	start := time.Now()
	cp := testenv.NewControlPlane(t)
	kubeconfig, err := cp.WriteKubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := cp.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	git := testenv.NewGitServer(t)
	if err := git.CreateRepo("x.git"); err != nil {
		t.Fatal(err)
	}
	front := git.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "s3cret-pass"})
	repoDir, err := git.RepoDir("x.git")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	leaseID := fmt.Sprintf("gitops-reverser-leader-e2e-%d", time.Now().UnixNano())
	t.Logf("control plane, Git server and binary ready after %s", time.Since(start).Round(time.Millisecond))

	procs := []*operatorProcess{
		startOperatorProcess(t, bin, "a", kubeconfig, ns, leaseID),
		startOperatorProcess(t, bin, "b", kubeconfig, ns, leaseID),
	}

	// Exactly one process leads, and it is the Lease's holder.
	waitFor(t, wait, "one process to acquire the lease", func() bool {
		return procs[0].count(logAcquired)+procs[1].count(logAcquired) > 0
	})
	leader, follower := procs[0], procs[1]
	if follower.count(logAcquired) > 0 {
		leader, follower = follower, leader
	}
	if follower.count(logAcquired) > 0 {
		t.Fatal("both processes logged that they acquired the lease")
	}
	var holder string
	waitFor(t, time.Minute, "the Lease's holder", func() bool {
		holder = leaseHolder(ctx, cp.Client, ns, leaseID)
		return holder != ""
	})
	t.Logf("operator %s leads (lease holder %s) after %s", leader.name, holder, time.Since(start).Round(time.Millisecond))

	create := func(obj client.Object) {
		t.Helper()
		if err := cp.Client.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "origin-auth"},
		StringData: map[string]string{"username": "bot", "password": "s3cret-pass"}})
	create(&v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "origin"}, Spec: v1.GitProviderSpec{
		URL: front.URL("x.git"), SecretRef: &v1.LocalObjectReference{Name: "origin-auth"}, AllowedBranches: []string{"main"},
		Push: v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 200 * time.Millisecond}},
	}})
	gt := &v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "live"}, Spec: v1.GitTargetSpec{
		GitProviderRef: v1.GitProviderReference{Name: "origin"}, Branch: "main", Path: folder,
		// Always: the follower's first snapshot also sweeps what was deleted while nobody led.
		Prune: v1.PruneSpec{Mode: v1.PruneAlways},
	}}
	create(gt)
	create(&v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cms"}, Spec: v1.WatchRuleSpec{
		TargetRef: v1.LocalObjectReference{Name: "live"},
		Rules:     []v1.ResourceRule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}},
	}})
	waitFor(t, wait, "the GitTarget to be Ready", func() bool {
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(gt), gt); err != nil {
			return false
		}
		return meta.IsStatusConditionTrue(gt.Status.Conditions, v1.ConditionReady)
	})

	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
	}
	// edit sets key v of a ConfigMap, retrying on a conflict.
	edit := func(name, v string) {
		t.Helper()
		for {
			var obj corev1.ConfigMap
			if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &obj); err != nil {
				t.Fatalf("get ConfigMap %s: %v", name, err)
			}
			obj.Data["v"] = v
			err := cp.Client.Update(ctx, &obj)
			if err == nil {
				return
			}
			if !apierrors.IsConflict(err) {
				t.Fatalf("update ConfigMap %s: %v", name, err)
			}
		}
	}
	remove := func(name string) {
		t.Helper()
		if err := cp.Client.Delete(ctx, cm(name, nil)); err != nil {
			t.Fatalf("delete ConfigMap %s: %v", name, err)
		}
	}
	// inSync waits until Git holds exactly the ConfigMaps of ns with their data.
	inSync := func(what string) {
		t.Helper()
		end := time.Now().Add(wait)
		var last string
		for {
			diff, err := mirrorDiff(ctx, cp.Client, repoDir, folder, ns)
			if err == nil && diff == "" {
				return
			}
			if err != nil {
				diff = err.Error()
			}
			last = diff
			if time.Now().After(end) {
				t.Fatalf("timed out after %s waiting for %s; Git differs from the cluster: %s", wait, what, last)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	// A first wave, mirrored by the leader alone.
	for i := range 10 {
		create(cm(fmt.Sprintf("pre-%02d", i), map[string]string{"v": "1"}))
	}
	inSync("the first wave in Git")
	if got := leader.localCopies(); len(got) == 0 {
		t.Fatalf("the leader %s has no local copy under %s/branches", leader.name, leader.workDir)
	}
	if got := follower.localCopies(); len(got) != 0 {
		t.Fatalf("the follower %s keeps local copies %v: it runs a branch worker while not leading", follower.name, got)
	}
	if n := follower.count(logWorkerStarted); n != 0 {
		t.Fatalf("the follower %s started %d branch workers while not leading", follower.name, n)
	}
	if n := follower.count(logAcquired); n != 0 {
		t.Fatalf("the follower %s logged that it acquired the lease", follower.name)
	}
	if n := follower.count(logControllerStarted); n != 0 || leader.count(logControllerStarted) == 0 {
		t.Fatalf("the follower %s started %d controllers while not leading (the leader %d)", follower.name, n, leader.count(logControllerStarted))
	}
	if got := leaseHolder(ctx, cp.Client, ns, leaseID); got != holder {
		t.Fatalf("the lease moved from %s to %s without a failure", holder, got)
	}
	t.Logf("first wave mirrored by %s alone after %s; %d pushes so far", leader.name, time.Since(start).Round(time.Millisecond), git.Pushes("x.git"))

	// The burst: creates, with edits of earlier ones; SIGKILL to the leader in its middle.
	var killed time.Time
	var pushedAtKill map[string]string
	for i := range burst {
		create(cm(fmt.Sprintf("cm-%02d", i), map[string]string{"v": "1", "i": strconv.Itoa(i)}))
		if i >= 3 && i%3 == 0 {
			edit(fmt.Sprintf("cm-%02d", i-3), "2")
		}
		if i == killAt/2 {
			// The leader is writing the burst when it dies: some of it is pushed, some not.
			waitFor(t, wait, "the leader to push part of the burst", func() bool {
				files, _ := gitFiles(repoDir, "main", folder+"/"+ns+"/core/configmaps/")
				_, ok := files[fmt.Sprintf("%s/%s/core/configmaps/cm-00.yaml", folder, ns)]
				return ok
			})
		}
		if i == killAt {
			leader.kill(t)
			killed = time.Now()
			pushedAtKill, _ = gitFiles(repoDir, "main", folder+"/"+ns+"/core/configmaps/")
		}
	}
	// Edits while nobody leads (the lease has not expired yet): updates and deletes of
	// documents pushed before the kill and of objects created around it.
	for i := 0; i < burst; i += 5 {
		edit(fmt.Sprintf("cm-%02d", i), "3")
	}
	edit("pre-00", "gap")
	remove("pre-01")
	remove("cm-01")
	remove(fmt.Sprintf("cm-%02d", killAt+1))
	var missingAtKill []string
	for i := 0; i <= killAt; i++ {
		if _, ok := pushedAtKill[fmt.Sprintf("%s/%s/core/configmaps/cm-%02d.yaml", folder, ns, i)]; !ok {
			missingAtKill = append(missingAtKill, fmt.Sprintf("cm-%02d", i))
		}
	}
	t.Logf("killed %s after %d creates; %d of them were not in Git yet: %v; gap edits done %s after the kill",
		leader.name, killAt+1, len(missingAtKill), missingAtKill, time.Since(killed).Round(time.Millisecond))

	// The follower takes the lease over once it expires.
	var newHolder string
	waitFor(t, wait, "the follower to acquire the lease", func() bool {
		newHolder = leaseHolder(ctx, cp.Client, ns, leaseID)
		return newHolder != holder && newHolder != "" && follower.count(logAcquired) > 0
	})
	takeover := time.Since(killed)
	t.Logf("operator %s took the lease over (holder %s) %s after the kill", follower.name, newHolder, takeover.Round(time.Millisecond))
	if !follower.alive() {
		t.Fatalf("the follower %s exited", follower.name)
	}

	// Edits after the takeover travel as events.
	edit("pre-02", "after")
	create(cm("after-00", map[string]string{"v": "1"}))
	remove("cm-02")

	inSync("every edit in Git after the takeover")
	t.Logf("Git holds every ConfigMap with its final data %s after the kill (%s after the takeover); %d pushes in all",
		time.Since(killed).Round(time.Millisecond), (time.Since(killed) - takeover).Round(time.Millisecond), git.Pushes("x.git"))
	if got := follower.localCopies(); len(got) == 0 {
		t.Errorf("the new leader %s has no local copy under %s/branches", follower.name, follower.workDir)
	}
	if got := leaseHolder(ctx, cp.Client, ns, leaseID); got != newHolder {
		t.Errorf("the lease moved again, from %s to %s", newHolder, got)
	}
}
