//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gitops-reverser/gitops-reverser/internal/operator"
)

// profiledOperator is `gitops-reverser run` with a CPU profile around operator.Run: the
// same flags, logger and signal handling as cmd/gitops-reverser's run command, the same
// code. It is how the bench profiles the operator, which serves no pprof endpoint.
//
//	bench profiled-operator -cpuprofile cpu.pprof -- --kubeconfig ... --work-dir ...
func profiledOperator(args []string) int {
	top := flag.NewFlagSet("profiled-operator", flag.ContinueOnError)
	cpuProfile := top.String("cpuprofile", "", "write a CPU profile of the operator to this file")
	if err := top.Parse(args); err != nil {
		return 2
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var opts operator.Options
	opts.BindFlags(fs)
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(top.Args()); err != nil {
		return 2
	}
	logger := zap.New(zap.UseFlagOptions(&zapOpts), zap.WriteTo(os.Stderr))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	log := ctrl.Log.WithName("run")

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Error(err, "cpu profile")
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Error(err, "cpu profile")
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	log.Info("starting gitops-reverser (profiled by the bench)")
	if err := operator.Run(ctx, opts); err != nil {
		log.Error(err, "operator stopped")
		return 1
	}
	log.Info("stopped")
	return 0
}

// profileRun is a CPU profile the bench collected.
type profileRun struct {
	what, path string
}

// profileSummary renders a profile with `go tool pprof`: its header, the functions of this
// module by cumulative time, and the top functions overall by flat time.
func profileSummary(p profileRun, ours, flat int) (string, error) {
	cum, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=2000", p.path).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w", p.path, err)
	}
	flatOut, err := exec.Command("go", "tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", flat), p.path).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w", p.path, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#### %s\n\n```\n", p.what)
	sc := bufio.NewScanner(bytes.NewReader(cum))
	inRows, n := false, 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Duration:") || strings.HasPrefix(line, "Showing"):
			if strings.HasPrefix(line, "Duration:") {
				b.WriteString(line + "\n")
			}
		case strings.Contains(line, "flat%"):
			inRows = true
			b.WriteString("functions of this module by cumulative CPU:\n" + line + "\n")
		case inRows && strings.Contains(line, "gitops-reverser/gitops-reverser/") && n < ours:
			b.WriteString(strings.ReplaceAll(line, "github.com/gitops-reverser/gitops-reverser/", "") + "\n")
			n++
		}
	}
	b.WriteString("\ntop functions overall by flat CPU:\n")
	sc = bufio.NewScanner(bytes.NewReader(flatOut))
	inRows = false
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "flat%") {
			inRows = true
		}
		if inRows {
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("```\n")
	return b.String(), nil
}
