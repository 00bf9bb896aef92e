// Command gitops-reverser mirrors live Kubernetes objects into a Git branch.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gitops-reverser/gitops-reverser/internal/operator"
)

// version is set at build time (make build).
var version = "dev"

const usage = `gitops-reverser mirrors live Kubernetes objects into a Git branch.

Usage:
  gitops-reverser run [flags]   run the operator
  gitops-reverser quickstart    run the operator on a local sandbox and show what it commits
  gitops-reverser version       print the version

Run 'gitops-reverser run -h' for the operator's flags.
`

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs one subcommand and returns the process exit code.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], stderr)
	case "quickstart":
		return quickstartCommand(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func runCommand(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts operator.Options
	opts.BindFlags(fs)
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "run takes no arguments, got %q\n", fs.Args())
		return 2
	}
	logger := zap.New(zap.UseFlagOptions(&zapOpts), zap.WriteTo(stderr))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go (leader election, reflectors) logs through klog

	// The command's own lines go through its logger, not the process-wide one:
	// controller-runtime fixes its global logger to a null sink when nothing set it within
	// 30 s of first use, and a refusal of the flags must always be seen.
	log := logger.WithName("run")
	if err := opts.Validate(); err != nil {
		log.Error(err, "invalid flags")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log.Info("starting gitops-reverser", "version", version)
	if err := operator.Run(ctx, opts); err != nil {
		log.Error(err, "operator stopped")
		return 1
	}
	log.Info("stopped")
	return 0
}
