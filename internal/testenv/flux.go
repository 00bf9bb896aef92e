package testenv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
)

// FluxNamespace is where the test's Flux controllers think they run (RUNTIME_NAMESPACE).
const FluxNamespace = "flux-system"

// FluxBin returns the folder holding Flux's source-controller and kustomize-controller:
// $FLUX_BIN when set (make test sets it), else what hack/tools/flux.sh builds or finds in
// its cache (a cold build takes minutes and prints its progress).
func FluxBin(t testing.TB) string {
	t.Helper()
	dir, err := FindFluxBin()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// FindFluxBin is FluxBin for a TestMain.
func FindFluxBin() (string, error) { return findTool("FLUX_BIN", "flux.sh") }

// findTool returns the folder of a test tool: $env when set, else what hack/tools/<script>
// prints (building the tool first when its cache lacks it; progress goes to stderr).
func findTool(env, script string) (string, error) {
	if dir := os.Getenv(env); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", filepath.Join(root, "hack", "tools", script))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools/%s: %w", script, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// WithFluxCRDs installs Flux's CRDs (from FluxBin's ../crds) beside the project's.
func WithFluxCRDs(t testing.TB) ControlPlaneOption {
	t.Helper()
	opt, err := FluxCRDs()
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// FluxCRDs is WithFluxCRDs for a TestMain.
func FluxCRDs() (ControlPlaneOption, error) { return toolCRDs(FindFluxBin()) }

// toolCRDs installs the project's CRDs and those a test tool keeps in <bin>/../crds.
func toolCRDs(bin string, err error) (ControlPlaneOption, error) {
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	return servers.WithCRDDirectories(filepath.Join(root, "config", "crd"), filepath.Join(bin, "..", "crds")), nil
}

// Flux is a running source-controller and kustomize-controller, out of cluster, against a
// test control plane whose CRDs include Flux's (WithFluxCRDs).
type Flux struct {
	procs []*fluxProcess
}

type fluxProcess struct {
	name   string
	health string // host:port of /readyz
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	tail   []string
}

// StartFlux starts both controllers against cp; they stop when the test ends, and their
// last log lines are shown when it failed.
func StartFlux(t testing.TB, cp *ControlPlane) *Flux {
	t.Helper()
	bin := FluxBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FluxNamespace}}
	if err := cp.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig, err := servers.WriteKubeconfigFor(cp.Config, dir)
	if err != nil {
		t.Fatal(err)
	}
	storageDir := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storageDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Every listener on its own loopback port: the controllers' defaults collide.
	storage := LoopbackAddress(t)
	f := &Flux{}
	f.start(t, bin, "source-controller", kubeconfig, LoopbackAddress(t), "--storage-path="+storageDir,
		"--storage-addr="+storage, "--storage-adv-addr="+storage,
		"--metrics-addr="+LoopbackAddress(t), "--enable-leader-election=false", "--log-encoding=console")
	f.start(t, bin, "kustomize-controller", kubeconfig, LoopbackAddress(t),
		"--metrics-addr="+LoopbackAddress(t), "--enable-leader-election=false", "--log-encoding=console")
	for _, p := range f.procs {
		p.waitHealthy(t)
	}
	return f
}

// waitHealthy waits until the controller answers on its health address, failing the test
// when it exits first or takes more than two minutes.
func (p *fluxProcess) waitHealthy(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-p.exited:
			t.Fatalf("%s exited at start:\n%s", p.name, strings.Join(p.lines(), "\n"))
		default:
		}
		if resp, err := http.Get("http://" + p.health + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer on %s within two minutes:\n%s", p.name, p.health, strings.Join(p.lines(), "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (f *Flux) start(t testing.TB, bin, name, kubeconfig, health string, args ...string) {
	t.Helper()
	p := &fluxProcess{name: name, health: health, exited: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(bin, name), append(args, "--health-addr="+health)...)
	// Neither controller has a --kubeconfig flag.
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE="+FluxNamespace)
	out, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = p.cmd.Stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go p.read(out)
	f.procs = append(f.procs, p)
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", name, strings.Join(p.lines(), "\n"))
		}
	})
}

// read keeps the last 40 lines of the process's output until it exits.
func (p *fluxProcess) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		p.tail = append(p.tail, sc.Text())
		if len(p.tail) > 40 {
			p.tail = p.tail[1:]
		}
		p.mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
	_ = p.cmd.Wait()
	close(p.exited)
}

func (p *fluxProcess) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.tail...)
}

// Running reports an error naming a controller that exited.
func (f *Flux) Running() error {
	for _, p := range f.procs {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited: %s", p.name, strings.Join(p.lines(), "\n"))
		default:
		}
	}
	return nil
}
