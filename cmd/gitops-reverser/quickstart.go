package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox"
)

// quickstartExitEnv, when true, makes the quickstart stop after printing the history
// instead of keeping the sandbox running until Ctrl-C.
const quickstartExitEnv = "QUICKSTART_EXIT"

const quickstartUsage = `Usage: gitops-reverser quickstart

Starts a local control plane (kube-apiserver and etcd from $KUBEBUILDER_ASSETS), a local Git
server and the operator; mirrors the namespace "demo" into a repository; creates, edits and
deletes a few objects; prints the resulting Git history; then keeps the sandbox running
for your own edits until Ctrl-C. With QUICKSTART_EXIT=1 it stops after the history.

'make quickstart' sets KUBEBUILDER_ASSETS (building the control plane on first use).
`

// exitCodeInterrupted is the conventional exit code after SIGINT.
const exitCodeInterrupted = 130

func quickstartCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), quickstartUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quickstart takes no arguments, got %q\n\n%s", fs.Args(), quickstartUsage)
		return 2
	}
	exitAfterHistory, err := parseQuickstartExit(os.Getenv(quickstartExitEnv))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	// The operator runs as a child process with its own log; this process only drives the
	// API and errors come back as values, so the libraries' own logging is not wanted here.
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	q := &quickstart{stdout: stdout, stderr: stderr, exitAfterHistory: exitAfterHistory}
	return q.run()
}

// parseQuickstartExit reads QUICKSTART_EXIT: empty is false, otherwise a boolean (1, true, 0...).
func parseQuickstartExit(v string) (bool, error) {
	if strings.TrimSpace(v) == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("%s=%q: want 1 (stop after the history) or 0 (keep the sandbox running)", quickstartExitEnv, v)
	}
	return b, nil
}

type quickstart struct {
	stdout, stderr   io.Writer
	exitAfterHistory bool
}

func (q *quickstart) run() (code int) {
	ctx, interrupted, stopSignals := q.handleSignals()
	defer stopSignals()

	dir, err := os.MkdirTemp("", "gitops-reverser-quickstart-")
	if err != nil {
		fmt.Fprintf(q.stderr, "quickstart: %v\n", err)
		return 1
	}
	var sb *sandbox.Sandbox
	defer func() {
		fmt.Fprintf(q.stdout, "\n• Stopping the operator, the Git server and the control plane ...\n")
		start := time.Now()
		if sb != nil {
			if err := sb.Close(); err != nil {
				fmt.Fprintf(q.stderr, "quickstart: %v\n", err)
				code = max(code, 1)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(q.stderr, "quickstart: remove %s: %v\n", dir, err)
			code = max(code, 1)
		}
		fmt.Fprintf(q.stdout, "  stopped in %s; removed %s\n", time.Since(start).Round(100*time.Millisecond), dir)
	}()
	fail := func(err error) int {
		if interrupted() {
			fmt.Fprintf(q.stderr, "\nquickstart: interrupted\n")
			return exitCodeInterrupted
		}
		fmt.Fprintf(q.stderr, "\nquickstart failed: %v\n", err)
		return 1
	}

	fmt.Fprintf(q.stdout, `GitOps Reverser quickstart
  A local control plane, a local Git server and the operator, all on 127.0.0.1;
  then a few changes through the Kubernetes API, and the Git history they produce.
  Files: %s (removed on exit)

`, dir)
	sb, err = sandbox.Start(ctx, sandbox.Options{Dir: dir, Progress: q.stdout})
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(q.stdout, "  operator log: %s\n", sb.OperatorLog)
	tour := &sandbox.Tour{Sandbox: sb, Out: q.stdout}
	if err := tour.Run(ctx); err != nil {
		return fail(err)
	}
	if err := sb.PrintHistory(q.stdout); err != nil {
		return fail(err)
	}
	if q.exitAfterHistory {
		fmt.Fprintf(q.stdout, "\n%s=1: not keeping the sandbox running.\n", quickstartExitEnv)
		return 0
	}
	q.printTryIt(sb, dir)
	select {
	case <-ctx.Done():
		return 0
	case <-sb.OperatorExited():
		return fail(fmt.Errorf("the operator exited (%v); its log %s ends with:\n%s",
			sb.OperatorError(), sb.OperatorLog, sandbox.LogTail(sb.OperatorLog, 20)))
	}
}

func (q *quickstart) printTryIt(sb *sandbox.Sandbox, dir string) {
	cloneURL := strings.Replace(sb.RepoURL, "http://", "http://"+sandbox.GitUsername+":"+sb.GitPassword+"@", 1)
	fmt.Fprintf(q.stdout, `
# The sandbox keeps running: try your own edits in another terminal
  export KUBECONFIG=%[1]s
  export PATH=%[2]s:$PATH   # kubectl from the control plane build
  kubectl -n %[3]s create configmap my-settings --from-literal=color=blue
  kubectl -n %[3]s get gitops-reverser   # the GitProvider, GitTarget and WatchRule

  The repository (bare): %[4]s
  git -C %[4]s log --stat %[5]s
  git clone %[6]s   # over HTTP, as the operator pushes
  The operator's log: %[7]s

Press Ctrl-C to stop the operator, the Git server and the control plane; %[8]s is then removed.
`, sb.Kubeconfig, sb.Assets, sandbox.Namespace, sb.RepoDir, sandbox.Branch, cloneURL, sb.OperatorLog, dir)
}

// handleSignals cancels the returned context on the first SIGINT or SIGTERM and keeps
// catching them until stop is called, so that a second Ctrl-C cannot cut the clean-up short
// and leave the control plane running.
func (q *quickstart) handleSignals() (ctx context.Context, interrupted func() bool, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case s := <-sigs:
				if n == 0 {
					fmt.Fprintf(q.stderr, "\nquickstart: %v: stopping the sandbox\n", s)
					cancel()
				} else {
					fmt.Fprintf(q.stderr, "quickstart: still stopping the sandbox, please wait\n")
				}
			}
		}
	}()
	interrupted = func() bool { return ctx.Err() != nil }
	stop = func() {
		close(done)
		wg.Wait()
		signal.Stop(sigs)
		cancel()
	}
	return ctx, interrupted, stop
}
