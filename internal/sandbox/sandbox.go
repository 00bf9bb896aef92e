package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/attribution"
	"github.com/gitops-reverser/gitops-reverser/internal/loopback"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
)

// RepoName is the repository the sandbox's Git server holds; the GitProvider points at it.
const RepoName = "sandbox.git"

// GitUsername is the user the Git server admits (with a random password per sandbox).
const GitUsername = "reverser"

// Options configure a sandbox.
type Options struct {
	// Dir is an existing, empty folder for the sandbox's files (kubeconfig, the Git server's
	// repositories, the operator's log). The caller creates and removes it.
	Dir string
	// OperatorBinary is the gitops-reverser binary the operator runs from, as
	// `gitops-reverser run --kubeconfig <Dir>/kubeconfig`. Defaults to this executable.
	OperatorBinary string
	// CRDDirectory holds the CRDs to install; defaults to config/crd of this module, found
	// from the working directory or the module's source.
	CRDDirectory string
	// Progress receives one line per step while the sandbox starts; nil discards them.
	Progress io.Writer
	// ReadyTimeout bounds how long the operator may take to answer /readyz. Defaults to
	// two minutes.
	ReadyTimeout time.Duration
}

// Sandbox is a running control plane, Git server and operator, all on loopback.
type Sandbox struct {
	// Dir holds the sandbox's files.
	Dir string
	// ControlPlane is the kube-apiserver and etcd; its Client acts as an administrator.
	ControlPlane *servers.ControlPlane
	// Kubeconfig is the path of an administrator kubeconfig for the control plane.
	Kubeconfig string
	// Assets is the folder of the control plane binaries, kubectl among them.
	Assets string
	// Git is the Git server; RepoDir is the bare repository RepoName on disk.
	Git     *servers.GitServer
	RepoDir string
	// HTTP serves the repositories; RepoURL is RepoName's clone URL without credentials.
	HTTP    *servers.HTTPFrontend
	RepoURL string
	// GitPassword is GitUsername's password on the Git server.
	GitPassword string
	// OperatorLog is the file the operator logs to; OperatorArgs is its command line.
	OperatorLog  string
	OperatorArgs []string
	// AuditAddress is where the operator's audit webhook listens (plain HTTP, loopback): the
	// control plane posts its audit events there, so commits carry their real authors.
	AuditAddress string

	operator     *exec.Cmd
	operatorDone chan struct{} // closed once the operator has exited and been reaped
	operatorErr  error         // how it exited; read after operatorDone
}

// Start starts the control plane, the Git server with an empty repository, and the operator,
// and waits for the operator to be ready. On error, whatever it started is stopped again.
func Start(ctx context.Context, opts Options) (_ *Sandbox, err error) {
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	if opts.Dir == "" {
		return nil, errors.New("sandbox: Options.Dir is required")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run 'make quickstart', or export " +
			"KUBEBUILDER_ASSETS=\"$(bash hack/tools/control-plane.sh)\" first")
	}
	binary := opts.OperatorBinary
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("locate the gitops-reverser binary: %w", err)
		}
	}
	crds := opts.CRDDirectory
	if crds == "" {
		if crds, err = FindCRDDirectory(); err != nil {
			return nil, err
		}
	}
	s := &Sandbox{Dir: opts.Dir, Assets: assets}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()

	step := startStep(progress, "Starting the control plane (kube-apiserver and etcd, no nodes), its audit events sent to the operator")
	if s.AuditAddress, err = loopback.Address(); err != nil {
		return nil, err
	}
	audit, err := servers.WithAuditWebhook(opts.Dir, servers.WebhookKubeconfig("http://"+s.AuditAddress+attribution.Path, "", "", ""))
	if err != nil {
		return nil, err
	}
	if s.ControlPlane, err = servers.StartControlPlane(append(audit, servers.WithCRDDirectory(crds))...); err != nil {
		return nil, err
	}
	if s.Kubeconfig, err = s.ControlPlane.WriteKubeconfig(opts.Dir); err != nil {
		return nil, err
	}
	step.done("")

	step = startStep(progress, "Starting the Git server (git http-backend over HTTP, basic auth)")
	gitRoot := filepath.Join(opts.Dir, "git")
	if err := os.Mkdir(gitRoot, 0o755); err != nil {
		return nil, fmt.Errorf("git server folder: %w", err)
	}
	s.Git = servers.NewGitServer(gitRoot)
	if err := s.Git.CreateRepo(RepoName); err != nil {
		return nil, err
	}
	if s.RepoDir, err = s.Git.RepoDir(RepoName); err != nil {
		return nil, err
	}
	if s.GitPassword, err = randomHex(12); err != nil {
		return nil, err
	}
	if s.HTTP, err = s.Git.StartHTTP(servers.HTTPAuth{Username: GitUsername, Password: s.GitPassword}); err != nil {
		return nil, err
	}
	s.RepoURL = s.HTTP.URL(RepoName)
	step.done(s.RepoURL)

	step = startStep(progress, "Starting the operator out of cluster")
	if err := s.startOperator(ctx, binary, opts.ReadyTimeout); err != nil {
		return nil, err
	}
	step.done(strings.Join(append([]string{"gitops-reverser"}, s.OperatorArgs[1:]...), " "))
	return s, nil
}

// startOperator runs `gitops-reverser run --kubeconfig ...` as a child process logging to
// OperatorLog, and waits until its /readyz answers.
func (s *Sandbox) startOperator(ctx context.Context, binary string, timeout time.Duration) error {
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	probe, err := loopback.Address()
	if err != nil {
		return err
	}
	s.OperatorLog = filepath.Join(s.Dir, "operator.log")
	logFile, err := os.Create(s.OperatorLog)
	if err != nil {
		return fmt.Errorf("operator log: %w", err)
	}
	defer logFile.Close() // the child holds its own descriptor
	s.OperatorArgs = []string{binary, "run",
		"--kubeconfig", s.Kubeconfig,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", probe,
		"--work-dir", filepath.Join(s.Dir, "operator"),
		// Plain HTTP is allowed on loopback only: kube-apiserver runs on this machine.
		"--audit-bind-address", s.AuditAddress, "--audit-insecure",
	}
	cmd := exec.Command(binary, s.OperatorArgs[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group keeps a Ctrl-C in the terminal for the quickstart, which then
	// stops the operator in order; the parent-death signal stops it should the quickstart
	// itself be killed.
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the operator: %w", err)
	}
	s.operator = cmd
	s.operatorDone = make(chan struct{})
	go func() {
		s.operatorErr = cmd.Wait()
		close(s.operatorDone)
	}()

	deadline := time.Now().Add(timeout)
	url := "http://" + probe + "/readyz"
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if resp, err := client.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.operatorDone:
			return fmt.Errorf("the operator exited before it was ready (%v); its log %s ends with:\n%s",
				s.operatorErr, s.OperatorLog, LogTail(s.OperatorLog, 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for the operator's %s to answer 200; its log %s ends with:\n%s",
				timeout, url, s.OperatorLog, LogTail(s.OperatorLog, 20))
		}
	}
}

// OperatorExited is closed when the operator process has exited.
func (s *Sandbox) OperatorExited() <-chan struct{} { return s.operatorDone }

// OperatorError is how the operator exited; valid once OperatorExited is closed.
func (s *Sandbox) OperatorError() error {
	select {
	case <-s.operatorDone:
		return s.operatorErr
	default:
		return nil
	}
}

// Close stops the operator (SIGTERM, then SIGKILL after 30 seconds), the Git server and the
// control plane, in that order, and waits for each. It does not remove Dir. It is safe on a
// partly started sandbox and reports every failure.
func (s *Sandbox) Close() error {
	var errs []error
	if s.operator != nil {
		select {
		case <-s.operatorDone:
		default:
			_ = s.operator.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.operatorDone:
			case <-time.After(30 * time.Second):
				_ = s.operator.Process.Kill()
				<-s.operatorDone
				errs = append(errs, errors.New("the operator did not stop within 30s of SIGTERM and was killed"))
			}
		}
		s.operator = nil
	}
	if s.HTTP != nil {
		if err := s.HTTP.Close(); err != nil {
			errs = append(errs, err)
		}
		s.HTTP = nil
	}
	if s.ControlPlane != nil {
		// The operator's audit webhook is gone: a sink takes its address so that
		// kube-apiserver can deliver its last audit events and stop.
		if sink, err := servers.StartAuditSink(s.AuditAddress, nil); err == nil {
			defer sink.Close()
		}
		if err := s.ControlPlane.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop the control plane: %w", err))
		}
		s.ControlPlane = nil
	}
	return errors.Join(errs...)
}

// FindCRDDirectory returns config/crd of this module: from the working directory or a
// folder above it, else from the location of the module's source at build time.
func FindCRDDirectory() (string, error) {
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if isModuleRoot(dir) {
				return filepath.Join(dir, "config", "crd"), nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if root, err := servers.RepoRoot(); err == nil && isModuleRoot(root) {
		return filepath.Join(root, "config", "crd"), nil
	}
	return "", errors.New("cannot find the CRDs (config/crd): run the quickstart from the gitops-reverser source folder")
}

func isModuleRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "module github.com/gitops-reverser/gitops-reverser" {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "config", "crd"))
	return err == nil && st.IsDir()
}

// LogTail returns the last n lines of a file, for error messages.
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// step prints "<what> ..." and then "done in 1.2s" with an optional detail.
type step struct {
	w     io.Writer
	start time.Time
}

func startStep(w io.Writer, what string) step {
	fmt.Fprintf(w, "• %s ...\n", what)
	return step{w: w, start: time.Now()}
}

func (s step) done(detail string) {
	if detail != "" {
		fmt.Fprintf(s.w, "  done in %s: %s\n", roundDuration(time.Since(s.start)), detail)
		return
	}
	fmt.Fprintf(s.w, "  done in %s\n", roundDuration(time.Since(s.start)))
}

func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
