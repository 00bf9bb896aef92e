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
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/go-logr/logr"
)

// profiledOperator is `gitops-reverser run` with a CPU profile around operator.Run: the
// same flags, logger and signal handling as cmd/gitops-reverser's run command, the same
// code. It is how the bench profiles the operator, which serves no pprof endpoint.
//
//	bench profiled-operator -cpuprofile cpu.pprof -- --kubeconfig ... --work-dir ...
func profiledOperator(args []string) int {
	top := flag.NewFlagSet("profiled-operator", flag.ContinueOnError)
	cpuProfile := top.String("cpuprofile", "", "write a CPU profile of the operator to this file")
	heapProfile := top.String("heapprofile", "", "write a heap profile of the operator to this file, taken when its heap was largest")
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
	if *heapProfile != "" {
		heapCtx, stopHeap := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			profileHeapPeak(heapCtx, *heapProfile, log)
		}()
		defer func() { stopHeap(); <-done }() // the last profile is written before the exit
	}
	log.Info("starting gitops-reverser (profiled by the bench)")
	if err := operator.Run(ctx, opts); err != nil {
		log.Error(err, "operator stopped")
		return 1
	}
	log.Info("stopped")
	return 0
}

// profileHeapPeak writes a heap profile to path each time the heap in use reaches a new
// high (looked at every 200 ms, by at least 5%), so that the file ends as the profile of the
// operator's largest heap. A heap profile shows what was live at the last GC. Every second
// it also writes the heap as it is to the .end.heap.pprof beside it: at the end of the run,
// what the operator held last (for an idle operator, what idling costs).
func profileHeapPeak(ctx context.Context, path string, log logr.Logger) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	last := strings.TrimSuffix(path, ".heap.pprof") + ".end.heap.pprof"
	for ticks := 1; ; ticks++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if ticks%5 == 0 {
			if err := writeHeapProfile(last); err != nil {
				log.Error(err, "heap profile")
				return
			}
		}
		metrics.Read(sample)
		if now := sample[0].Value.Uint64(); now > peak+peak/20 {
			peak = now
			if err := writeHeapProfile(path); err != nil {
				log.Error(err, "heap profile")
				return
			}
		}
	}
}

func writeHeapProfile(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// heapProfileOf is where the heap profile of a profiled run goes, beside its CPU profile.
func heapProfileOf(cpuProfile string) string {
	return strings.TrimSuffix(cpuProfile, ".pprof") + ".heap.pprof"
}

// profileRun is a CPU profile the bench collected (and the heap profile beside it).
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

// heapSummary renders the heap profile beside p's CPU profile: the top functions by the
// memory in use they allocated (flat), at the operator's largest heap.
func heapSummary(p profileRun, n int) (string, error) {
	path := heapProfileOf(p.path)
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", fmt.Sprintf("-nodecount=%d", n), path).Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %s: %w", path, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#### %s: heap in use at its largest\n\n```\n", p.what)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") {
			continue
		}
		b.WriteString(strings.ReplaceAll(line, "github.com/gitops-reverser/gitops-reverser/", "") + "\n")
	}
	b.WriteString("```\n")
	return b.String(), nil
}
