//go:build linux

package main

// Phases 3 and 4 of the end-to-end benchmark: a burst of edits, and the scale run
// (BENCH.md).

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
	"time"
)

// ---- phase 3: burst -----------------------------------------------------------------------

func (b *bench) phaseBurst(ctx context.Context) error {
	if err := b.burst(ctx, viaFlag, "p3-burst", ""); err != nil {
		return err
	}
	if b.cfg.compareEnv && !b.env.kubeconfigEnv {
		if err := b.burst(ctx, viaEnv, "p3-burst-env", ""); err != nil {
			return err
		}
	}
	if b.cfg.profile {
		path := filepath.Join(b.profDir, "cpu-burst.pprof")
		b.logf("phase 3: one more burst with a CPU profile (not counted) → %s", path)
		if err := b.burst(ctx, viaFlag, "p3-profiled", path); err != nil {
			b.logf("  profiled run failed: %v", err)
		} else {
			b.profiles = append(b.profiles, profileRun{fmt.Sprintf("phase 3, burst of %s edits", thousands(b.cfg.burstEdits)), path})
		}
	}
	return nil
}

// burst mirrors the burst namespace, then edits every object once, as fast as the rate
// allows, and measures commits and the time until the remote holds all of them; repeated
// while a round stays short. With cpuProfile set, the operator runs profiled and one round
// is made whose figures are only logged.
func (b *bench) burst(ctx context.Context, v variant, name, cpuProfile string) error {
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
	p, err := b.env.runOperator(name, cpuProfile, v.env)
	if err != nil {
		return err
	}
	defer func() { _ = b.env.stopOperator(p) }()
	_, from, err := b.waitAllSeq(ctx, r, burstNS, names, 0, want, 3*time.Minute, p.done)
	if err != nil {
		return b.operatorErr(p, "burst: initial mirror", err)
	}
	var commits, totals, tooks, afterLast, present []float64
	censored := false
	rounds, record := b.cfg.burstRepeats, cpuProfile == ""
	if !record {
		rounds = 1
	}
	for round := 1; round <= rounds; round++ {
		time.Sleep(1500 * time.Millisecond) // a pause between rounds, so that none joins the previous one
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
		c, err := commitsBetween(r, pre, tip.sha)
		if err != nil {
			return err
		}
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
		afterLast = append(afterLast, totalS-seconds(took))
		present = append(present, float64(ok))
		b.logf("  %s round %d: edits took %s, all pushed after %s, %d commit(s), %d/%d present",
			name, round, took.Round(time.Millisecond), fmtValue(totalS, "s"), c, ok, n)
		if !record {
			continue
		}
		b.res.add("3", scen, "commits", round, float64(c), "count", "")
		b.res.add("3", scen, "pushes", round, float64(b.env.git.Pushes(r.name)-pushes0), "count", "receive-pack sessions")
		b.res.add("3", scen, "edits_took", round, seconds(took), "s", "first edit sent → last edit returned")
		b.res.add("3", scen, "time_to_all_pushed", round, totalS, "s", "first edit sent → remote tip holds all (Inf: not within "+b.cfg.burstCap.String()+")")
		b.res.add("3", scen, "present", round, float64(ok), "count", "")
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
	if !record {
		return nil
	}
	b.res.add("3", scen, "operator_peak_rss", 1, float64(p.peakRSS()), "B", "")
	within := ""
	if censored {
		within = fmt.Sprintf(" within %s", b.cfg.burstCap)
	}
	b.table = append(b.table,
		tableRow{phase: "3", scenario: scen, figure: "commits" + within + " (median)", value: median(commits), unit: "count", base: 1, baseName: "one commit", goal: "≤ 3", n: len(commits)},
		tableRow{phase: "3", scenario: scen, figure: "time until all pushed (median)", value: median(totals), unit: "s", base: median(tooks), baseName: "time the edits took", n: len(totals), censor: b.cfg.burstCap.Seconds()},
		tableRow{phase: "3", scenario: scen, figure: "last edit → all pushed (median)", value: median(afterLast), unit: "s", base: 5, baseName: "commitWindow", goal: "≤ window + 2 s", n: len(afterLast), censor: b.cfg.burstCap.Seconds()},
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
		lats, startup, peak, err := b.scaleRun(ctx, r, ns, name, "")
		if err == nil && b.cfg.profile && i == len(b.cfg.scaleSizes)-1 {
			path := filepath.Join(b.profDir, fmt.Sprintf("cpu-scale-%d.pprof", n))
			b.logf("  %d files: one more run with a CPU profile (not counted) → %s", n, path)
			if _, _, _, perr := b.scaleRun(ctx, r, ns, name+"-profiled", path); perr != nil {
				b.logf("  profiled run failed: %v", perr)
			} else {
				b.profiles = append(b.profiles, profileRun{fmt.Sprintf("phase 4, start-up and one edit at a time, %s files", thousands(n)), path})
			}
		}
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
			tableRow{phase: "4", scenario: scen, figure: "start → first push (fetch, index, resync)", value: seconds(startup), unit: "s", base: math.NaN(), goal: startGoal(i), n: 1},
			tableRow{phase: "4", scenario: scen, figure: "peak RSS", value: float64(peak), unit: "B", base: b.idle, baseName: "idle operator", n: 1})
	}
	return nil
}

func (b *bench) scaleRun(ctx context.Context, r *repo, ns, name, cpuProfile string) ([]float64, time.Duration, int64, error) {
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
	// The probe is edited before the operator starts, so that its start-up has one change
	// to push also when an earlier run on this repository wrote the probe already.
	seq0++
	if _, err := b.env.setSeq(ctx, ns, names[0], seq0); err != nil {
		return nil, 0, 0, err
	}
	p, err := b.env.runOperator(name, cpuProfile, false)
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
		time.Sleep(1500 * time.Millisecond) // edits one at a time, each measured alone
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

// startGoal is the goal of the start-up figure of phase 4's size i: the largest folder
// starts within 3 s.
func startGoal(i int) string {
	if i > 0 {
		return "≤ 3 s"
	}
	return ""
}

// commitsBetween counts the commits of r reachable from to and not from from.
func commitsBetween(r *repo, from, to string) (int, error) {
	out, err := git(r.dir, "rev-list", "--count", from+".."+to)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("git rev-list --count answered %q: %w", out, err)
	}
	return n, nil
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
