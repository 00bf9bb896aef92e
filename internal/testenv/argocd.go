package testenv

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
)

// ArgoCDNamespace is where the test's Argo CD runs (its control-plane namespace).
const ArgoCDNamespace = "argocd"

// ArgoCDBin returns the folder holding the argocd binary of hack/tools/argocd.sh (and the
// git-verify-wrapper.sh its repo-server runs): $ARGOCD_BIN when set, else what
// hack/tools/argocd.sh builds or finds in its cache (a cold build takes minutes and prints
// its progress).
func ArgoCDBin(t testing.TB) string {
	t.Helper()
	dir, err := FindArgoCDBin()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// FindArgoCDBin is ArgoCDBin for a TestMain.
func FindArgoCDBin() (string, error) { return findTool("ARGOCD_BIN", "argocd.sh") }

// WithArgoCDCRDs installs Argo CD's CRDs (Application and AppProject, from ArgoCDBin's
// ../crds) beside the project's. It combines with WithFluxCRDs, in either order: the
// control plane then has all three sets.
func WithArgoCDCRDs(t testing.TB) ControlPlaneOption {
	t.Helper()
	opt, err := ArgoCDCRDs()
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// ArgoCDCRDs is WithArgoCDCRDs for a TestMain.
func ArgoCDCRDs() (ControlPlaneOption, error) { return toolCRDs(FindArgoCDBin()) }

// ArgoCD is a running redis-server, argocd-repo-server and argocd-application-controller,
// out of cluster, against a test control plane whose CRDs include Argo CD's
// (WithArgoCDCRDs). The controller takes `https://kubernetes.default.svc` to mean that
// control plane. Its resync period is an hour: it acts on an Application when one is
// created or changed (an operation, a refresh annotation), not by itself.
type ArgoCD struct {
	// Redis, RepoServer and ControllerMetrics are the loopback addresses (host:port) the
	// three processes listen on; ControllerMetrics serves /metrics and /healthz.
	Redis, RepoServer, ControllerMetrics string

	cp    *ControlPlane
	procs []*fluxProcess
}

// StartArgoCD creates the objects Argo CD's controller needs in ArgoCDNamespace (argocd-cm,
// argocd-rbac-cm, argocd-cmd-params-cm, argocd-secret and the AppProject default), then
// starts redis-server, the repo-server and the application controller against cp and waits
// until each answers. They stop when the test ends, and their last log lines are shown when
// it failed.
func StartArgoCD(t testing.TB, cp *ControlPlane) *ArgoCD {
	t.Helper()
	bin := ArgoCDBin(t)
	for _, tool := range []string{"redis-server", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("Argo CD's repo-server needs %s on PATH (bash hack/tools/argocd.sh installs redis-server): %v", tool, err)
		}
	}
	createArgoCDObjects(t, cp)

	dir := t.TempDir()
	kubeconfig, err := servers.WriteKubeconfigFor(cp.Config, dir)
	if err != nil {
		t.Fatal(err)
	}
	// The repo-server's askpass socket defaults to /tmp/reposerver-ask-pass.sock, which two
	// Argo CDs at once (tests of several packages) would share; a socket path must also stay
	// under 108 bytes, which a test's TempDir need not.
	sockDir, err := os.MkdirTemp("", "argocd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })

	// Every listener on its own reserved loopback port: the defaults (8081, 8082, 8084, 6379)
	// collide with each other's and other tests'.
	a := &ArgoCD{Redis: LoopbackAddress(t), RepoServer: LoopbackAddress(t), ControllerMetrics: LoopbackAddress(t), cp: cp}
	repoMetrics := LoopbackAddress(t)

	redisDir := processDir(t, dir, "redis")
	redis := a.start(t, "redis-server", exec.Command("redis-server", "--port", portOf(t, a.Redis), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", redisDir))
	redis.waitFor(t, func() error { return redisPing(a.Redis) })

	// Both components: the kubeconfig (they run out of cluster, and ARGOCD_FAKE_IN_CLUSTER
	// makes kubernetes.default.svc mean that cluster), no GnuPG, and a HOME and TMPDIR of
	// their own (the repo-server clones into $TMPDIR/_argocd-repo). The bin folder leads
	// PATH: Git asks `argocd` for credentials (GIT_ASKPASS=argocd) and the repo-server runs
	// git-verify-wrapper.sh from PATH.
	env := func(component string) []string {
		d := processDir(t, dir, component)
		return append(os.Environ(),
			"ARGOCD_BINARY_NAME="+component,
			"KUBECONFIG="+kubeconfig,
			"ARGOCD_FAKE_IN_CLUSTER=true",
			"ARGOCD_GPG_ENABLED=false",
			"ARGOCD_ASK_PASS_SOCK="+filepath.Join(sockDir, "askpass.sock"),
			"HOME="+d, "TMPDIR="+d,
			"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}

	repo := exec.Command(filepath.Join(bin, "argocd"),
		"--address", "127.0.0.1", "--port", portOf(t, a.RepoServer),
		"--metrics-address", "127.0.0.1", "--metrics-port", portOf(t, repoMetrics),
		// --disable-tls conflicts with the default --client-ca-path, a file in the pod.
		"--disable-tls", "--client-ca-path=",
		"--redis", a.Redis, "--logformat", "text")
	repo.Env = env("argocd-repo-server")
	repoServer := a.start(t, "argocd-repo-server", repo)
	// full=true: the health handler calls the gRPC server's own health service.
	repoServer.waitFor(t, func() error { return httpOK("http://" + repoMetrics + "/healthz?full=true") })

	ctrl := exec.Command(filepath.Join(bin, "argocd"),
		"--namespace", ArgoCDNamespace,
		"--repo-server", a.RepoServer, "--repo-server-plaintext",
		"--redis", a.Redis,
		// Binds 0.0.0.0 (there is no address flag) on the reserved port.
		"--metrics-port", portOf(t, a.ControllerMetrics),
		"--app-resync", "3600", "--app-resync-jitter", "0", "--app-hard-resync", "0",
		"--logformat", "text")
	ctrl.Env = env("argocd-application-controller")
	controller := a.start(t, "argocd-application-controller", ctrl)
	// The metrics server (and its /healthz) starts once the controller's informers and its
	// cache of the cluster have synced, so it answers when Applications are processed.
	controller.waitFor(t, func() error { return httpOK("http://" + a.ControllerMetrics + "/healthz") })
	return a
}

// createArgoCDObjects creates what argocd-server and the install manifests would: without
// argocd-cm the controller exits at start, and an Application names a project.
func createArgoCDObjects(t testing.TB, cp *ControlPlane) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ArgoCDNamespace}}
	if err := cp.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ArgoCDNamespace,
			Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}}
	}
	project := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "AppProject",
		"metadata":   map[string]any{"name": "default", "namespace": ArgoCDNamespace},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}}
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta("argocd-cm")},
		&corev1.ConfigMap{ObjectMeta: meta("argocd-rbac-cm")},
		&corev1.ConfigMap{ObjectMeta: meta("argocd-cmd-params-cm")},
		&corev1.Secret{ObjectMeta: meta("argocd-secret"), StringData: map[string]string{"server.secretkey": "test-server-secret-key"}},
		project,
	} {
		if err := cp.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// AddRepository creates the repository Secret through which Argo CD reaches url with basic
// auth (or updates it, when url was added before).
func (a *ArgoCD) AddRepository(t testing.TB, url, username, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sum := sha256.Sum256([]byte(url))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      "repo-" + hex.EncodeToString(sum[:])[:12],
			Namespace: ArgoCDNamespace,
			Labels:    map[string]string{"argocd.argoproj.io/secret-type": "repository"},
		},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{"type": "git", "url": url, "username": username, "password": password},
	}
	err := a.cp.Client.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		err = a.cp.Client.Update(ctx, secret)
	}
	if err != nil {
		t.Fatalf("repository secret for %s: %v", url, err)
	}
}

// Running reports an error naming a process that exited.
func (a *ArgoCD) Running() error {
	for _, p := range a.procs {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited: %s", p.name, strings.Join(p.lines(), "\n"))
		default:
		}
	}
	return nil
}

// start runs cmd, keeping its last lines, and kills it when the test ends. The processes
// stop in the reverse order of their start (t.Cleanup), so the controller goes first.
func (a *ArgoCD) start(t testing.TB, name string, cmd *exec.Cmd) *fluxProcess {
	t.Helper()
	p := &fluxProcess{name: name, cmd: cmd, exited: make(chan struct{})}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go p.read(out)
	a.procs = append(a.procs, p)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", name, strings.Join(p.lines(), "\n"))
		}
	})
	return p
}

// waitFor polls ready until it succeeds, failing the test when the process exits first or
// two minutes pass.
func (p *fluxProcess) waitFor(t testing.TB, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-p.exited:
			t.Fatalf("%s exited at start:\n%s", p.name, strings.Join(p.lines(), "\n"))
		default:
		}
		err := ready()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not ready within two minutes (%v):\n%s", p.name, err, strings.Join(p.lines(), "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func httpOK(url string) error {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// redisPing sends PING in Redis's inline protocol and expects +PONG.
func redisPing(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("redis answered %q to PING", line)
	}
	return nil
}

// portOf returns the port of a host:port address.
func portOf(t testing.TB, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// processDir makes a folder of its own for one process under dir.
func processDir(t testing.TB, dir, name string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}
