//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Namespaces and object names of each phase.
const (
	steadyObjects = 20
	payloadBytes  = 1024
)

func initialNS(n int) string   { return fmt.Sprintf("bench-initial-%d", n) }
func steadyNS(w string) string { return "bench-steady-" + w }
func scaleNS(n int) string     { return fmt.Sprintf("bench-scale-%d", n) }

const burstNS = "bench-burst"

// setup creates every object the phases use, before any operator runs.
func (b *bench) setup(ctx context.Context) error {
	if b.want(1) {
		for _, n := range b.cfg.initialSizes {
			if n >= onceFrom {
				continue // created just before it is measured, deleted right after
			}
			b.logf("creating %d ConfigMaps of %d bytes in %s", n, payloadBytes, initialNS(n))
			if err := b.env.createConfigMaps(ctx, initialNS(n), "cm", n, payloadBytes); err != nil {
				return err
			}
		}
	}
	if b.want(2) {
		for _, w := range b.cfg.windows {
			if err := b.env.createConfigMaps(ctx, steadyNS(windowName(w)), "edit", steadyObjects, 0); err != nil {
				return err
			}
		}
	}
	if b.want(3) {
		b.logf("creating %d ConfigMaps in %s", b.cfg.burstEdits, burstNS)
		if err := b.env.createConfigMaps(ctx, burstNS, "burst", b.cfg.burstEdits, 0); err != nil {
			return err
		}
	}
	if b.want(4) {
		for _, n := range b.cfg.scaleSizes {
			if err := b.env.createConfigMaps(ctx, scaleNS(n), "probe", 1, 0); err != nil {
				return err
			}
		}
	}
	if b.want(5) {
		return b.setupTenants(ctx)
	}
	return nil
}

func windowName(w time.Duration) string {
	if w == 0 {
		return "0"
	}
	return strings.ReplaceAll(w.String(), ".", "-")
}

// ---- baseline of the operator's memory -------------------------------------------------

// idleRSS runs the operator with nothing to mirror for a few seconds, as often as phase 1
// repeats: the baseline of the peak RSS figures is the median run, which smooths the noise
// between runs made one after the other. Most of an idle operator's RSS is the binary's
// pages, which the kernel maps 64 KB at a time from what the page cache holds: that drifts
// with the machine over hours, which no median removes (BENCH.md, tenth round).
func (b *bench) idleRSS(ctx context.Context) error {
	b.logf("idle operator (nothing to mirror), %s, %d run(s)", b.cfg.idleFor, b.cfg.repeats)
	var peaks []float64
	for run := 1; run <= b.cfg.repeats; run++ {
		peak, err := b.idleRun(ctx, run)
		if err != nil {
			return err
		}
		peaks = append(peaks, peak)
		b.res.add("0", "idle operator", "peak_rss", run, peak, "B", "VmHWM / ru_maxrss")
	}
	b.idle = median(peaks)
	if b.cfg.profile {
		b.profileIdle(ctx)
	}
	b.table = append(b.table, tableRow{phase: "0", scenario: fmt.Sprintf("idle operator (nothing to mirror) for %s", b.cfg.idleFor),
		figure: "peak RSS (median)", value: b.idle, unit: "B", base: math.NaN(), goal: "≤ 60 MiB", n: len(peaks)})
	return ctx.Err()
}

// idleRun is one run of the idle operator; it returns its peak RSS.
func (b *bench) idleRun(ctx context.Context, run int) (float64, error) {
	p, err := b.env.runOperator(fmt.Sprintf("idle-%d", run), "", false)
	if err != nil {
		return 0, err
	}
	defer func() { _ = b.env.stopOperator(p) }() // also when it exited early
	b.waitIdle(ctx, p)
	if err := p.exited(); err != nil {
		return 0, err
	}
	if err := b.env.stopOperator(p); err != nil {
		return 0, err
	}
	peak := float64(p.peakRSS())
	b.logf("  idle operator run %d: peak RSS %.1f MiB (VmHWM %.1f MiB, ru_maxrss %.1f MiB); at the end %.1f MiB anonymous (heap, stacks), %.1f MiB of mapped files (the binary)",
		run, peak/(1<<20), float64(p.peak)/(1<<20), float64(p.maxRSS)/(1<<20), float64(p.anon)/(1<<20), float64(p.file)/(1<<20))
	return peak, ctx.Err()
}

// waitIdle waits for idleFor while p idles, or until it exits or ctx is done.
func (b *bench) waitIdle(ctx context.Context, p *operatorProc) {
	select {
	case <-time.After(b.cfg.idleFor):
	case <-ctx.Done():
	case <-p.done:
	}
}

// profileIdle runs the idle operator once more with a CPU and heap profile (not counted).
func (b *bench) profileIdle(ctx context.Context) {
	path := filepath.Join(b.profDir, "cpu-idle.pprof")
	b.logf("idle operator: one more run with a CPU and heap profile (not counted) → %s", path)
	q, err := b.env.runOperator("idle-profiled", path, false)
	if err != nil {
		b.logf("  profiled run failed: %v", err)
		return
	}
	b.waitIdle(ctx, q)
	if err := b.env.stopOperator(q); err != nil {
		b.logf("  profiled run failed: %v", err)
		return
	}
	b.profiles = append(b.profiles, profileRun{"idle operator (nothing to mirror)", path})
}

// ---- phase 1: initial mirror --------------------------------------------------------------

// profiledInitialSize is the size of phase 1 whose extra run is profiled: the one -profile-size
// names, else the largest one measured more than once (10,000 in full mode).
func (b *bench) profiledInitialSize() int {
	if b.cfg.profileSize > 0 {
		return b.cfg.profileSize
	}
	size := b.cfg.initialSizes[0]
	for _, n := range b.cfg.initialSizes {
		if n < onceFrom && n > size {
			size = n
		}
	}
	return size
}

// onceFrom is the size of phase 1 from which a size is measured once, not cfg.repeats times.
const onceFrom = 50000

func (b *bench) phaseInitial(ctx context.Context) error {
	// Warm-up (not counted): one floor and one operator run on the smallest set, so that
	// page caches, the API server's watch cache and the binaries are warm for everyone.
	n0 := b.cfg.initialSizes[0]
	b.logf("phase 1 warm-up: floor and operator on %d ConfigMaps (not counted)", n0)
	if _, err := b.floorInitial(ctx, n0, "p1-warm-floor"); err != nil {
		return err
	}
	if _, _, err := b.operatorInitial(ctx, n0, "p1-warm-op", ""); err != nil {
		return err
	}
	for _, n := range b.cfg.initialSizes {
		scen := fmt.Sprintf("initial mirror, %s ConfigMaps", thousands(n))
		var floors, times, rss []float64
		repeats := b.cfg.repeats
		if n >= onceFrom {
			// Minutes per run: measured once. Its objects exist only meanwhile, so that they
			// weigh on no other figure (the API server's watch cache, etcd).
			repeats = 1
			b.logf("creating %d ConfigMaps of %d bytes in %s", n, payloadBytes, initialNS(n))
			if err := b.env.createConfigMaps(ctx, initialNS(n), "cm", n, payloadBytes); err != nil {
				return err
			}
			// Deleted when phase 1 ends (this size is its last: sizes go up).
			defer func() {
				if err := b.env.deleteConfigMaps(context.WithoutCancel(ctx), initialNS(n)); err != nil {
					b.logf("  %v", err)
				}
			}()
		}
		for run := 1; run <= repeats; run++ {
			fd, err := b.floorInitial(ctx, n, fmt.Sprintf("p1-n%d-floor-%d", n, run))
			if err != nil {
				return err
			}
			floors = append(floors, seconds(fd))
			b.res.add("1", scen, "floor_time", run, seconds(fd), "s", b.floorSteps)
			b.logf("  N=%d run %d: floor %s (%s)", n, run, fd.Round(time.Millisecond), b.floorSteps)
			od, peak, err := b.operatorInitial(ctx, n, fmt.Sprintf("p1-n%d-op-%d", n, run), "")
			if err != nil {
				if errors.Is(err, errTimeout) {
					b.res.add("1", scen, "operator_time", run, math.NaN(), "s", "timeout "+b.cfg.initialTimeout.String())
					b.logf("  N=%d run %d: operator timed out after %s; no more runs of this size", n, run, b.cfg.initialTimeout)
					break
				}
				return err
			}
			times = append(times, seconds(od))
			rss = append(rss, float64(peak))
			b.res.add("1", scen, "operator_time", run, seconds(od), "s", "operator start → pushed commit with all N")
			b.res.add("1", scen, "operator_peak_rss", run, float64(peak), "B", "VmHWM / ru_maxrss")
			b.logf("  N=%d run %d: operator %s, peak RSS %s", n, run, od.Round(time.Millisecond), fmtValue(float64(peak), "B"))
		}
		goalT, goalM := "", ""
		switch n {
		case 10000:
			goalT, goalM = "≤ 0.6× floor", "≤ 150 MiB"
		case 100000:
			goalT, goalM = "≤ 0.6× floor", "≤ 600 MiB"
		}
		b.table = append(b.table,
			tableRow{phase: "1", scenario: scen, figure: "time to pushed (median)", value: median(times), unit: "s", base: median(floors), baseName: "git CLI floor", goal: goalT, n: len(times)},
			tableRow{phase: "1", scenario: scen, figure: "peak RSS (median)", value: median(rss), unit: "B", base: b.idle, baseName: "idle operator", goal: goalM, n: len(rss)})
		if b.cfg.profile && n == b.profiledInitialSize() {
			path := filepath.Join(b.profDir, fmt.Sprintf("cpu-initial-%d.pprof", n))
			b.logf("  N=%d: one more operator run with a CPU profile (not counted) → %s", n, path)
			if _, _, err := b.operatorInitial(ctx, n, fmt.Sprintf("p1-n%d-profiled", n), path); err != nil {
				b.logf("  profiled run failed: %v", err)
			} else {
				b.profiles = append(b.profiles, profileRun{fmt.Sprintf("phase 1, initial mirror of %s ConfigMaps", thousands(n)), path})
			}
		}
	}
	return nil
}

// floorInitial lists the ConfigMaps through the API, writes them as YAML files, and adds,
// commits and pushes them with the git command line into a fresh repository.
func (b *bench) floorInitial(ctx context.Context, n int, name string) (time.Duration, error) {
	r, err := b.env.newRepo(name + ".git")
	if err != nil {
		return 0, err
	}
	defer b.env.dropRepo(r)
	work, err := os.MkdirTemp(b.env.dir, "floor-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	ns := initialNS(n)

	start := time.Now()
	cont := ""
	written := 0
	dirs := map[string]bool{}
	for {
		var list corev1.ConfigMapList
		if err := b.env.c.List(ctx, &list, client.InNamespace(ns), client.Limit(500), client.Continue(cont)); err != nil {
			return 0, err
		}
		for i := range list.Items {
			cm := &list.Items[i]
			cm.APIVersion, cm.Kind = "v1", "ConfigMap"
			cm.ManagedFields, cm.ResourceVersion, cm.UID, cm.CreationTimestamp = nil, "", "", metav1.Time{}
			data, err := yaml.Marshal(cm)
			if err != nil {
				return 0, err
			}
			path := filepath.Join(work, docPath(ns, cm.Name))
			if dir := filepath.Dir(path); !dirs[dir] {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return 0, err
				}
				dirs[dir] = true
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return 0, err
			}
			written++
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	steps := []time.Duration{time.Since(start)}
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=" + branch},
		{"add", "-A"},
		{"commit", "--quiet", "-m", "floor: " + ns},
		{"push", "--quiet", b.env.authURL(r), "HEAD:refs/heads/" + branch},
	} {
		t := time.Now()
		if _, err := git(work, args...); err != nil {
			return 0, err
		}
		steps = append(steps, time.Since(t))
	}
	d := time.Since(start)
	b.floorSteps = fmt.Sprintf("list+write %s, init %s, add %s, commit %s, push %s", steps[0].Round(time.Millisecond),
		steps[1].Round(time.Millisecond), steps[2].Round(time.Millisecond), steps[3].Round(time.Millisecond), steps[4].Round(time.Millisecond))
	if written < n {
		return 0, fmt.Errorf("floor listed %d ConfigMaps in %s, want %d", written, ns, n)
	}
	if got, err := countFiles(r.dir, branch, targetPath+"/"+ns+"/core/configmaps/"); err != nil || got < n {
		return 0, fmt.Errorf("floor pushed %d files, want %d (%v)", got, n, err)
	}
	return d, nil
}

// operatorInitial configures a fresh repository, starts the operator and measures from its
// start to the first pushed commit holding every ConfigMap of the namespace.
func (b *bench) operatorInitial(ctx context.Context, n int, name, cpuProfile string) (time.Duration, int64, error) {
	ns := initialNS(n)
	r, err := b.env.newRepo(name + ".git")
	if err != nil {
		return 0, 0, err
	}
	defer b.env.dropRepo(r)
	if err := b.env.configure(ctx, ns, r, nil); err != nil {
		return 0, 0, err
	}
	defer func() { _ = b.env.unconfigure(context.WithoutCancel(ctx), ns) }()
	p, err := b.env.runOperator(name, cpuProfile, false)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = b.env.stopOperator(p) }()
	prefix := targetPath + "/" + ns + "/core/configmaps/"
	tip, _, err := r.watch.waitFor(ctx, 0, b.cfg.initialTimeout, p.done, func(t tipEvent) (bool, error) {
		got, err := countFiles(r.dir, t.sha, prefix)
		return got >= n, err
	})
	if err != nil {
		if errors.Is(err, errAborted) {
			return 0, 0, p.exited()
		}
		if errors.Is(err, errTimeout) {
			b.logf("  operator log %s ends with:\n%s", p.log, logTail(p.log, 10))
		}
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	d := tip.at.Sub(p.started)
	if err := b.env.stopOperator(p); err != nil {
		return 0, 0, err
	}
	return d, p.peakRSS(), nil
}
