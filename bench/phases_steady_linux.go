//go:build linux

package main

// Phase 2 of the end-to-end benchmark: edits at a steady rate, per commit window (BENCH.md).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

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
	return valuesAtPaths(r, docPaths(ns, names), tips)
}

// docPaths are the paths of the named ConfigMaps of ns in the bench's target folder.
func docPaths(ns string, names []string) []string {
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = docPath(ns, n)
	}
	return paths
}

// valuesAtPaths is data.seq of the document at each path, at each tip (-1: no document).
func valuesAtPaths(r *repo, paths []string, tips []tipEvent) ([][]int, error) {
	var specs []string
	for _, t := range tips {
		for _, p := range paths {
			specs = append(specs, t.sha+":"+p)
		}
	}
	blobs, err := catFiles(r.dir, specs)
	if err != nil {
		return nil, err
	}
	values := make([][]int, len(tips))
	for i, t := range tips {
		values[i] = make([]int, len(paths))
		for o, p := range paths {
			values[i][o] = -1
			if doc := blobs[t.sha+":"+p]; doc != nil {
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
	return b.waitAllPaths(ctx, r, docPaths(ns, names), from, want, timeout, abort)
}

// waitAllPaths waits for a tip at which the document at every path holds at least want[o].
func (b *bench) waitAllPaths(ctx context.Context, r *repo, paths []string, from int, want []int, timeout time.Duration, abort <-chan struct{}) (tipEvent, int, error) {
	return r.watch.waitFor(ctx, from, timeout, abort, func(t tipEvent) (bool, error) {
		vals, err := valuesAtPaths(r, paths, []tipEvent{t})
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
		goal := "p99 ≤ 5 s"
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
	// A window closes on its maximum age (three windows, at least 2s) at the latest; a
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
