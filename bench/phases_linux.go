//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	return nil
}

func windowName(w time.Duration) string {
	if w == 0 {
		return "0"
	}
	return strings.ReplaceAll(w.String(), ".", "-")
}

// ---- baseline of the operator's memory -------------------------------------------------

// idleRSS runs the operator with nothing to mirror for a few seconds: the baseline of the
// peak RSS figures.
func (b *bench) idleRSS(ctx context.Context) error {
	b.logf("idle operator (nothing to mirror), %s", b.cfg.idleFor)
	p, err := b.env.runOperator("idle", "", false)
	if err != nil {
		return err
	}
	select {
	case <-time.After(b.cfg.idleFor):
	case <-ctx.Done():
	case <-p.done:
	}
	if err := p.exited(); err != nil {
		return err
	}
	if err := b.env.stopOperator(p); err != nil {
		return err
	}
	b.idle = float64(p.peakRSS())
	b.res.add("0", "idle operator", "peak_rss", 1, b.idle, "B", "")
	return ctx.Err()
}

// ---- phase 1: initial mirror --------------------------------------------------------------

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
		for run := 1; run <= b.cfg.repeats; run++ {
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
		if n == 10000 {
			goalT, goalM = "≤ 1.5× floor", "≤ 150 MiB"
		}
		b.table = append(b.table,
			tableRow{phase: "1", scenario: scen, figure: "time to pushed (median)", value: median(times), unit: "s", base: median(floors), baseName: "git CLI floor", goal: goalT, n: len(times)},
			tableRow{phase: "1", scenario: scen, figure: "peak RSS (median)", value: median(rss), unit: "B", base: b.idle, baseName: "idle operator", goal: goalM, n: len(rss)})
		if b.cfg.profile && n == b.cfg.initialSizes[len(b.cfg.initialSizes)-1] {
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

// ---- phase 2: steady state --------------------------------------------------------------

// edit is one API update: which object, the seq it set, and when the call returned.
type edit struct {
	obj int
	seq int
	at  time.Time
}

// driveEdits issues edit k at start + k/rate, for count edits, with conc concurrent
// callers; objOf and seqOf map k to the object and the value written.
func (b *bench) driveEdits(ctx context.Context, ns string, names []string, count int, rate float64, conc int, objOf, seqFor func(k int) int) ([]edit, error) {
	type job struct{ k int }
	jobs := make(chan job, conc)
	out := make([]edit, count)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				o, s := objOf(j.k), seqFor(j.k)
				at, err := b.env.setSeq(ctx, ns, names[o], s)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					continue
				}
				out[j.k] = edit{obj: o, seq: s, at: at}
			}
		}()
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for k := 0; k < count; k++ {
		if wait := time.Until(start.Add(time.Duration(k) * interval)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		jobs <- job{k}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, ctx.Err()
}

// valuesAt reads the seq of every object at each tip: values[i][o].
func valuesAt(r *repo, ns string, names []string, tips []tipEvent) ([][]int, error) {
	var specs []string
	for _, t := range tips {
		for _, n := range names {
			specs = append(specs, t.sha+":"+docPath(ns, n))
		}
	}
	blobs, err := catFiles(r.dir, specs)
	if err != nil {
		return nil, err
	}
	values := make([][]int, len(tips))
	for i, t := range tips {
		values[i] = make([]int, len(names))
		for o, n := range names {
			values[i][o] = -1
			if doc := blobs[t.sha+":"+docPath(ns, n)]; doc != nil {
				values[i][o] = seqOf(doc)
			}
		}
	}
	return values, nil
}

// latencies maps each edit to the first tip (seen after it) whose document holds its seq
// or a later one; a missing arrival is NaN.
func latencies(edits []edit, tips []tipEvent, values [][]int) []float64 {
	out := make([]float64, len(edits))
	for i, e := range edits {
		out[i] = math.NaN()
		for j, t := range tips {
			if values[j][e.obj] >= e.seq {
				out[i] = t.at.Sub(e.at).Seconds()
				break
			}
		}
	}
	return out
}

// waitAllSeq waits for a tip at which every object holds at least want[o].
func (b *bench) waitAllSeq(ctx context.Context, r *repo, ns string, names []string, from int, want []int, timeout time.Duration, abort <-chan struct{}) (tipEvent, int, error) {
	return r.watch.waitFor(ctx, from, timeout, abort, func(t tipEvent) (bool, error) {
		vals, err := valuesAt(r, ns, names, []tipEvent{t})
		if err != nil {
			return false, err
		}
		for o, v := range vals[0] {
			if v < want[o] {
				return false, nil
			}
		}
		return true, nil
	})
}

// variant is how the operator is given its kubeconfig: --kubeconfig (as instructed and as
// the quickstart runs it) or $KUBECONFIG (controller-runtime's GetConfig, as in a cluster).
type variant struct {
	env   bool
	label string
}

var (
	viaFlag = variant{false, ""}
	viaEnv  = variant{true, " [$KUBECONFIG]"}
)

func (b *bench) phaseSteady(ctx context.Context) error {
	floor, err := b.floorEdits(ctx, steadyNS(windowName(b.cfg.windows[0])), "edit-00000", "p2-floor", 0, b.cfg.floorEdits)
	if err != nil {
		return err
	}
	base := median(floor)
	for k, f := range floor {
		b.res.add("2", "git CLI edit floor", "floor_edit", k+1, f, "s", "get, write, add, commit, push")
	}
	type run struct {
		w time.Duration
		v variant
	}
	runs := []run{}
	for _, w := range b.cfg.windows {
		runs = append(runs, run{w, viaFlag})
	}
	if b.cfg.compareEnv && !b.env.kubeconfigEnv {
		for _, w := range b.cfg.windows {
			runs = append(runs, run{w, viaEnv})
		}
	}
	for _, rn := range runs {
		wn := windowName(rn.w)
		scen := fmt.Sprintf("steady %g edits/s for %s, commitWindow %s%s", b.cfg.steadyRate, b.cfg.steadyFor, wn, rn.v.label)
		name := "p2-w" + wn
		if rn.v.env {
			name += "-env"
		}
		lats, peak, err := b.steadyRun(ctx, rn.w, rn.v, name, b.cfg.steadyFor, "")
		if err != nil {
			return err
		}
		got := make([]float64, len(lats)) // an edit never pushed within the cap counts as +Inf
		missing := 0
		for i, l := range lats {
			b.edits = append(b.edits, editSample{phase: "2", scenario: scen, k: i, latency: l})
			got[i] = l
			if math.IsNaN(l) {
				missing++
				got[i] = math.Inf(1)
			}
		}
		goal := ""
		if rn.w == 0 {
			goal = "p99 ≤ 300 ms"
		}
		censor := b.cfg.drainCap.Seconds() // an edit not pushed waited at least this long
		b.res.add("2", scen, "edits", 1, float64(len(lats)), "count", "")
		b.res.add("2", scen, "not_pushed_within_cap", 1, float64(missing), "count", "cap: "+b.cfg.drainCap.String()+" after the last edit")
		b.res.add("2", scen, "latency_p50", 1, percentile(got, 50), "s", "update returned → remote tip holds it")
		b.res.add("2", scen, "latency_p99", 1, percentile(got, 99), "s", "")
		b.res.add("2", scen, "latency_max", 1, percentile(got, 100), "s", "")
		b.res.add("2", scen, "operator_peak_rss", 1, float64(peak), "B", "")
		fig := ""
		if missing > 0 {
			fig = fmt.Sprintf(" (%d of %d edits not pushed within %s of the last edit)", missing, len(lats), b.cfg.drainCap)
		}
		b.table = append(b.table,
			tableRow{phase: "2", scenario: scen, figure: "event→pushed p50" + fig, value: percentile(got, 50), unit: "s", base: base, baseName: "git CLI edit floor", n: len(lats), censor: censor},
			tableRow{phase: "2", scenario: scen, figure: "event→pushed p99", value: percentile(got, 99), unit: "s", base: base, baseName: "git CLI edit floor", goal: goal, n: len(lats), censor: censor},
			tableRow{phase: "2", scenario: scen, figure: "peak RSS", value: float64(peak), unit: "B", base: b.idle, baseName: "idle operator", n: 1})
		b.logf("  %s: %d edits, p50 %s, p99 %s, max %s, not pushed within the cap %d", name, len(lats),
			fmtValue(percentile(got, 50), "s"), fmtValue(percentile(got, 99), "s"), fmtValue(percentile(got, 100), "s"), missing)
	}
	if b.cfg.profile {
		path := filepath.Join(b.profDir, "cpu-steady-w0.pprof")
		b.logf("phase 2: one more run, commitWindow 0 for %s, with a CPU profile (not counted) → %s", b.cfg.profileFor, path)
		if _, _, err := b.steadyRun(ctx, 0, viaFlag, "p2-profiled", b.cfg.profileFor, path); err != nil {
			b.logf("  profiled run failed: %v", err)
		} else {
			b.profiles = append(b.profiles, profileRun{fmt.Sprintf("phase 2, %g edits/s for %s with commitWindow 0", b.cfg.steadyRate, b.cfg.profileFor), path})
		}
	}
	return nil
}

// steadyRun mirrors the steady namespace of window w, warms up, then edits at the steady
// rate for dur and returns each edit's latency (NaN: not pushed within the drain cap) and
// the operator's peak RSS.
func (b *bench) steadyRun(ctx context.Context, w time.Duration, v variant, name string, dur time.Duration, cpuProfile string) ([]float64, int64, error) {
	ns := steadyNS(windowName(w))
	names := make([]string, steadyObjects)
	for i := range names {
		names[i] = cmName("edit", i)
	}
	r, err := b.env.newRepo(name + ".git")
	if err != nil {
		return nil, 0, err
	}
	defer b.env.dropRepo(r)
	if err := b.env.configure(ctx, ns, r, &w); err != nil {
		return nil, 0, err
	}
	defer func() { _ = b.env.unconfigure(context.WithoutCancel(ctx), ns) }()
	// Objects keep their seq across runs: start above what they hold.
	want, seq0, err := b.seqs(ctx, ns, names)
	if err != nil {
		return nil, 0, err
	}
	p, err := b.env.runOperator(name, cpuProfile, v.env)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = b.env.stopOperator(p) }()
	_, from, err := b.waitAllSeq(ctx, r, ns, names, 0, want, 2*time.Minute, p.done)
	if err != nil {
		return nil, 0, b.operatorErr(p, "initial mirror", err)
	}
	// Warm-up edits, not counted, then wait for them to be pushed.
	count := int(b.cfg.steadyRate * b.cfg.warmup.Seconds())
	warm, err := b.driveEdits(ctx, ns, names, count, b.cfg.steadyRate, 1,
		func(k int) int { return k % len(names) }, func(k int) int { return seq0 + 1 + k })
	if err != nil {
		return nil, 0, err
	}
	for _, e := range warm {
		want[e.obj] = max(want[e.obj], e.seq)
	}
	if _, from, err = b.waitAllSeq(ctx, r, ns, names, from, want, 3*time.Minute, p.done); err != nil {
		return nil, 0, b.operatorErr(p, "warm-up edits", err)
	}
	seq1 := seq0 + 1 + count
	count = int(b.cfg.steadyRate * dur.Seconds())
	b.logf("phase 2: %s: commitWindow %s: %d edits at %g/s over %d objects", name, windowName(w), count, b.cfg.steadyRate, len(names))
	edits, err := b.driveEdits(ctx, ns, names, count, b.cfg.steadyRate, 1,
		func(k int) int { return k % len(names) }, func(k int) int { return seq1 + k })
	if err != nil {
		return nil, 0, err
	}
	for _, e := range edits {
		want[e.obj] = max(want[e.obj], e.seq)
	}
	// A window closes on its maximum age (30s for small windows) at the latest; a
	// throttled operator may need longer, so the wait is capped.
	if _, _, err := b.waitAllSeq(ctx, r, ns, names, from, want, b.cfg.drainCap, p.done); err != nil {
		if !errors.Is(err, errTimeout) {
			return nil, 0, b.operatorErr(p, "steady edits", err)
		}
		b.logf("  not every edit reached the remote within %s of the last edit", b.cfg.drainCap)
	}
	// Only the tips seen so far count: stopping the operator closes its open window and
	// pushes it, which would otherwise count as an arrival.
	tips, _ := r.watch.snapshot(from)
	if err := b.env.stopOperator(p); err != nil {
		return nil, 0, err
	}
	values, err := valuesAt(r, ns, names, tips)
	if err != nil {
		return nil, 0, err
	}
	return latencies(edits, tips, values), p.peakRSS(), nil
}

// seqs returns data.seq of each named ConfigMap of ns, and the largest of them.
func (b *bench) seqs(ctx context.Context, ns string, names []string) ([]int, int, error) {
	var list corev1.ConfigMapList
	if err := b.env.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, 0, err
	}
	byName := map[string]int{}
	m := 0
	for _, cm := range list.Items {
		if v, err := strconv.Atoi(cm.Data["seq"]); err == nil {
			byName[cm.Name] = v
			m = max(m, v)
		}
	}
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out, m, nil
}

func (b *bench) operatorErr(p *operatorProc, what string, err error) error {
	if errors.Is(err, errAborted) {
		return fmt.Errorf("%s: %w", what, p.exited())
	}
	return fmt.Errorf("%s: %w; the operator's log %s ends with:\n%s", what, err, p.log, logTail(p.log, 10))
}

// floorEdits measures the floor of one edit reaching a remote: read the object through the
// API, write it as YAML into a clone, commit and push with the git command line. The
// clone is of repository seedFrom when set (phase 4), else of a fresh one; the first edit
// is a warm-up and not counted.
func (b *bench) floorEdits(ctx context.Context, ns, objName, repoName string, seedFiles, count int) ([]float64, error) {
	r, err := b.env.newRepo(repoName + ".git")
	if err != nil {
		return nil, err
	}
	defer b.env.dropRepo(r)
	if seedFiles > 0 {
		if err := b.seed(r, seedFiles); err != nil {
			return nil, err
		}
	}
	return b.floorEditsOn(ctx, r, ns, objName, count)
}

func (b *bench) floorEditsOn(ctx context.Context, r *repo, ns, objName string, count int) ([]float64, error) {
	work, err := os.MkdirTemp(b.env.dir, "floor-edit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	if _, err := git("", "clone", "--quiet", b.env.authURL(r), work); err != nil {
		return nil, err
	}
	if _, err := git(work, "checkout", "--quiet", "-B", branch); err != nil {
		return nil, err
	}
	path := filepath.Join(work, "floor", ns, objName+".yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	var out []float64
	for i := 0; i <= count; i++ {
		start := time.Now()
		var cm corev1.ConfigMap
		if err := b.env.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: objName}, &cm); err != nil {
			return nil, err
		}
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		cm.ManagedFields = nil
		cm.Data = map[string]string{"seq": strconv.Itoa(i)}
		data, err := yaml.Marshal(&cm)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
		for _, args := range [][]string{
			{"add", "-A"},
			{"commit", "--quiet", "-m", fmt.Sprintf("floor edit %d", i)},
			{"push", "--quiet", "origin", "HEAD:refs/heads/" + branch},
		} {
			if _, err := git(work, args...); err != nil {
				return nil, err
			}
		}
		if i > 0 {
			out = append(out, time.Since(start).Seconds())
		}
	}
	return out, nil
}

// ---- phase 3: burst -----------------------------------------------------------------------

func (b *bench) phaseBurst(ctx context.Context) error {
	if err := b.burst(ctx, viaFlag, "p3-burst"); err != nil {
		return err
	}
	if b.cfg.compareEnv && !b.env.kubeconfigEnv {
		return b.burst(ctx, viaEnv, "p3-burst-env")
	}
	return nil
}

// burst mirrors the burst namespace, then edits every object once, as fast as the rate
// allows, and measures commits and the time until the remote holds all of them; repeated
// while a round stays short.
func (b *bench) burst(ctx context.Context, v variant, name string) error {
	n := b.cfg.burstEdits
	names := make([]string, n)
	for i := range names {
		names[i] = cmName("burst", i)
	}
	scen := fmt.Sprintf("burst, %s edits of one author in ~%s, default commitWindow (5s)%s", thousands(n), b.cfg.burstFor, v.label)
	r, err := b.env.newRepo(name + ".git")
	if err != nil {
		return err
	}
	defer b.env.dropRepo(r)
	if err := b.env.configure(ctx, burstNS, r, nil); err != nil {
		return err
	}
	defer func() { _ = b.env.unconfigure(context.WithoutCancel(ctx), burstNS) }()
	want, _, err := b.seqs(ctx, burstNS, names)
	if err != nil {
		return err
	}
	p, err := b.env.runOperator(name, "", v.env)
	if err != nil {
		return err
	}
	defer func() { _ = b.env.stopOperator(p) }()
	_, from, err := b.waitAllSeq(ctx, r, burstNS, names, 0, want, 3*time.Minute, p.done)
	if err != nil {
		return b.operatorErr(p, "burst: initial mirror", err)
	}
	var commits, totals, tooks, present []float64
	censored := false
	for round := 1; round <= b.cfg.burstRepeats; round++ {
		time.Sleep(1500 * time.Millisecond) // past the push cooldown of the previous round
		b.burstSeq++
		seq := b.burstSeq
		pre := r.watch.last().sha
		pushes0 := b.env.git.Pushes(r.name)
		start := time.Now()
		edits, err := b.driveEdits(ctx, burstNS, names, n, float64(n)/b.cfg.burstFor.Seconds(), 8,
			func(k int) int { return k }, func(int) int { return seq })
		if err != nil {
			return err
		}
		var last time.Time
		for _, e := range edits {
			if e.at.After(last) {
				last = e.at
			}
		}
		for i := range want {
			want[i] = seq
		}
		tip, next, err := b.waitAllSeq(ctx, r, burstNS, names, from, want, b.cfg.burstCap-time.Since(start), p.done)
		total := tip.at.Sub(start)
		if err != nil {
			if !errors.Is(err, errTimeout) {
				return b.operatorErr(p, fmt.Sprintf("burst round %d", round), err)
			}
			tip, total, censored = r.watch.last(), time.Duration(math.MaxInt64), true
			b.logf("  burst round %d: not all edits pushed within %s", round, b.cfg.burstCap)
		}
		from = next
		out, err := git(r.dir, "rev-list", "--count", pre+".."+tip.sha)
		if err != nil {
			return err
		}
		c, _ := strconv.Atoi(strings.TrimSpace(out))
		vals, err := valuesAt(r, burstNS, names, []tipEvent{tip})
		if err != nil {
			return err
		}
		ok := 0
		for _, v := range vals[0] {
			if v == seq {
				ok++
			}
		}
		took := last.Sub(start)
		totalS := seconds(total)
		if censored {
			totalS = math.Inf(1)
		}
		commits = append(commits, float64(c))
		totals = append(totals, totalS)
		tooks = append(tooks, seconds(took))
		present = append(present, float64(ok))
		b.res.add("3", scen, "commits", round, float64(c), "count", "")
		b.res.add("3", scen, "pushes", round, float64(b.env.git.Pushes(r.name)-pushes0), "count", "receive-pack sessions")
		b.res.add("3", scen, "edits_took", round, seconds(took), "s", "first edit sent → last edit returned")
		b.res.add("3", scen, "time_to_all_pushed", round, totalS, "s", "first edit sent → remote tip holds all (Inf: not within "+b.cfg.burstCap.String()+")")
		b.res.add("3", scen, "present", round, float64(ok), "count", "")
		b.logf("  %s round %d: edits took %s, all pushed after %s, %d commit(s), %d/%d present",
			name, round, took.Round(time.Millisecond), fmtValue(totalS, "s"), c, ok, n)
		if censored || totalS > b.cfg.burstRepeatIfUnder.Seconds() {
			if round < b.cfg.burstRepeats {
				b.logf("  no more rounds: a round took over %s", b.cfg.burstRepeatIfUnder)
			}
			break
		}
	}
	if err := b.env.stopOperator(p); err != nil {
		return err
	}
	b.res.add("3", scen, "operator_peak_rss", 1, float64(p.peakRSS()), "B", "")
	within := ""
	if censored {
		within = fmt.Sprintf(" within %s", b.cfg.burstCap)
	}
	b.table = append(b.table,
		tableRow{phase: "3", scenario: scen, figure: "commits" + within + " (median)", value: median(commits), unit: "count", base: 1, baseName: "one commit", goal: "≤ 3", n: len(commits)},
		tableRow{phase: "3", scenario: scen, figure: "time until all pushed (median)", value: median(totals), unit: "s", base: median(tooks), baseName: "time the edits took", n: len(totals), censor: b.cfg.burstCap.Seconds()},
		tableRow{phase: "3", scenario: scen, figure: fmt.Sprintf("edits present%s (of %s, min)", within, thousands(n)), value: percentile(present, 0), unit: "count", base: float64(n), baseName: "all edits", goal: "all", n: len(present)},
		tableRow{phase: "3", scenario: scen, figure: "peak RSS", value: float64(p.peakRSS()), unit: "B", base: b.idle, baseName: "idle operator", n: 1})
	return nil
}

// ---- phase 4: scale with repository size ---------------------------------------------------

// seed pushes n ConfigMap documents under the target folder (100 namespaces) as another
// user would: built with git fast-import in a scratch repository, then a plain git push.
func (b *bench) seed(r *repo, n int) error {
	scratch, err := os.MkdirTemp(b.env.dir, "seed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if _, err := git("", "init", "--quiet", "--bare", scratch); err != nil {
		return err
	}
	var stream bytes.Buffer
	stream.WriteString("commit refs/heads/main\ncommitter Foreign User <foreign@example.com> 1700000000 +0000\ndata 13\nseed the repo\n")
	for i := range n {
		ns := fmt.Sprintf("seed-%03d", i%100)
		name := cmName("seed", i)
		doc := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  payload: %s\n",
			name, ns, payload(uint64(i)+7, 256))
		fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", docPath(ns, name), len(doc), doc)
	}
	if _, err := gitStdin(scratch, &stream, "fast-import", "--quiet"); err != nil {
		return err
	}
	_, err = git(scratch, "push", "--quiet", b.env.authURL(r), "main:refs/heads/"+branch)
	return err
}

func (b *bench) phaseScale(ctx context.Context) error {
	var small float64
	for i, n := range b.cfg.scaleSizes {
		ns := scaleNS(n)
		scen := fmt.Sprintf("one edit, %s files in the folder (commitWindow 0)", thousands(n))
		name := fmt.Sprintf("p4-files%d", n)
		r, err := b.env.newRepo(name + ".git")
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := b.seed(r, n); err != nil {
			b.env.dropRepo(r)
			return err
		}
		b.logf("phase 4: seeded %d files with a foreign push in %s", n, time.Since(t0).Round(time.Millisecond))
		floor, err := b.floorEditsOn(ctx, r, ns, "probe-00000", b.cfg.scaleEdits)
		if err != nil {
			b.env.dropRepo(r)
			return err
		}
		for k, f := range floor {
			b.res.add("4", scen, "floor_edit", k+1, f, "s", "git CLI: get, write, add, commit, push")
		}
		lats, startup, peak, err := b.scaleRun(ctx, r, ns, name)
		b.env.dropRepo(r)
		if err != nil {
			return err
		}
		for k, l := range lats {
			b.res.add("4", scen, "operator_edit", k+1, l, "s", "update returned → remote tip holds it")
		}
		b.res.add("4", scen, "operator_start_to_first_push", 1, seconds(startup), "s", "fetch, index, resync commit")
		b.res.add("4", scen, "operator_peak_rss", 1, float64(peak), "B", "")
		b.logf("  %d files: edit→pushed median %s (floor %s), start→first push %s, peak RSS %s", n,
			fmtValue(median(lats), "s"), fmtValue(median(floor), "s"), startup.Round(time.Millisecond), fmtValue(float64(peak), "B"))
		b.table = append(b.table, tableRow{phase: "4", scenario: scen, figure: "edit→pushed (median)", value: median(lats), unit: "s", base: median(floor), baseName: "git CLI edit floor", n: len(lats)})
		if i == 0 {
			small = median(lats)
		} else {
			b.table = append(b.table,
				tableRow{phase: "4", scenario: scen, figure: fmt.Sprintf("edit→pushed vs %s files", thousands(b.cfg.scaleSizes[0])), value: median(lats), unit: "s", base: small,
					baseName: fmt.Sprintf("operator, %s files", thousands(b.cfg.scaleSizes[0])), goal: "≤ 1.5×", n: len(lats)})
		}
		b.table = append(b.table,
			tableRow{phase: "4", scenario: scen, figure: "start → first push (fetch, index, resync)", value: seconds(startup), unit: "s", base: math.NaN(), n: 1},
			tableRow{phase: "4", scenario: scen, figure: "peak RSS", value: float64(peak), unit: "B", base: b.idle, baseName: "idle operator", n: 1})
	}
	return nil
}

func (b *bench) scaleRun(ctx context.Context, r *repo, ns, name string) ([]float64, time.Duration, int64, error) {
	zero := time.Duration(0)
	if err := b.env.configure(ctx, ns, r, &zero); err != nil {
		return nil, 0, 0, err
	}
	defer func() { _ = b.env.unconfigure(context.WithoutCancel(ctx), ns) }()
	names := []string{"probe-00000"}
	_, seq0, err := b.seqs(ctx, ns, names)
	if err != nil {
		return nil, 0, 0, err
	}
	p, err := b.env.runOperator(name, "", false)
	if err != nil {
		return nil, 0, 0, err
	}
	defer func() { _ = b.env.stopOperator(p) }()
	first, from, err := b.waitAllSeq(ctx, r, ns, names, r.watch.count(), []int{seq0}, 3*time.Minute, p.done)
	if err != nil {
		return nil, 0, 0, b.operatorErr(p, "scale: first push", err)
	}
	startup := first.at.Sub(p.started)
	var lats []float64
	for k := 1; k <= b.cfg.scaleEdits+1; k++ {
		time.Sleep(1500 * time.Millisecond) // past the push cooldown
		at, err := b.env.setSeq(ctx, ns, names[0], seq0+k)
		if err != nil {
			return nil, 0, 0, err
		}
		tip, next, err := b.waitAllSeq(ctx, r, ns, names, from, []int{seq0 + k}, time.Minute, p.done)
		if err != nil {
			return nil, 0, 0, b.operatorErr(p, fmt.Sprintf("scale: edit %d", k), err)
		}
		from = next
		if k > 1 { // the first edit warms up the dry-run cache and is not counted
			lats = append(lats, tip.at.Sub(at).Seconds())
		}
	}
	if err := b.env.stopOperator(p); err != nil {
		return nil, 0, 0, err
	}
	return lats, startup, p.peakRSS(), nil
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
