//go:build linux

package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lastPhase is the number of the last phase (BENCH.md lists them).
const lastPhase = 5

// config is what one run measures; full and quick differ only in sizes and durations.
type config struct {
	phases         map[int]bool
	repeats        int
	initialSizes   []int
	initialTimeout time.Duration
	windows        []time.Duration
	steadyRate     float64
	steadyFor      time.Duration
	warmup         time.Duration
	floorEdits     int
	burstEdits     int
	burstFor       time.Duration
	burstRepeats   int
	scaleSizes     []int
	scaleEdits     int
	tenants        int
	tenantObjects  int
	idleFor        time.Duration
	profile        bool
	// profileSize is phase 1's size whose extra run is profiled; 0 for the default
	// (profiledInitialSize).
	profileSize int
	profileFor  time.Duration
	// drainCap bounds the wait for phase 2's edits after the last one; burstCap a burst
	// round from its first edit. A figure beyond its cap is reported as "> cap".
	drainCap, burstCap time.Duration
	// burstRepeatIfUnder: a burst round is repeated only while rounds stay this short.
	burstRepeatIfUnder time.Duration
	// compareEnv adds phase 2 (window 0) and phase 3 runs with the kubeconfig as $KUBECONFIG.
	compareEnv bool
}

func fullConfig() config {
	return config{
		repeats:            3,
		initialSizes:       []int{1000, 10000, 100000},
		initialTimeout:     10 * time.Minute,
		windows:            []time.Duration{0, time.Second},
		steadyRate:         20,
		steadyFor:          60 * time.Second,
		warmup:             5 * time.Second,
		floorEdits:         10,
		burstEdits:         2000,
		burstFor:           10 * time.Second,
		burstRepeats:       3,
		scaleSizes:         []int{100, 50000},
		scaleEdits:         5,
		tenants:            200,
		tenantObjects:      20,
		idleFor:            5 * time.Second,
		profile:            true,
		profileFor:         20 * time.Second,
		drainCap:           2 * time.Minute,
		burstCap:           3 * time.Minute,
		burstRepeatIfUnder: 90 * time.Second,
		compareEnv:         false,
	}
}

func quickConfig() config {
	c := fullConfig()
	c.repeats = 1
	c.initialSizes = []int{200, 1000}
	c.initialTimeout = 3 * time.Minute // quick: 200 and 1,000 only
	c.steadyFor = 15 * time.Second
	c.warmup = 2 * time.Second
	c.floorEdits = 5
	c.burstEdits = 500
	c.burstFor = 2500 * time.Millisecond
	c.burstRepeats = 1
	c.scaleSizes = []int{100, 5000}
	c.scaleEdits = 3
	c.tenants = 40
	c.idleFor = 3 * time.Second
	c.profileFor = 10 * time.Second
	c.drainCap = time.Minute
	c.burstCap = 2 * time.Minute
	return c
}

// bench holds one run: the servers, the figures and where they go.
type bench struct {
	cfg      config
	env      *env
	res      results
	table    []tableRow
	edits    []editSample
	profiles []profileRun
	profDir  string
	idle     float64 // peak RSS of the idle operator, bytes
	burstSeq int     // the seq the last burst round wrote
	// floorSteps describes the last initial floor's steps, for the CSV.
	floorSteps string
	started    time.Time
}

func (b *bench) want(phase int) bool { return b.cfg.phases[phase] }

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench %6.1fs] %s\n", time.Since(b.started).Seconds(), fmt.Sprintf(format, args...))
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "profiled-operator" {
		os.Exit(profiledOperator(os.Args[2:]))
	}
	os.Exit(run())
}

func run() (code int) {
	quick := flag.Bool("quick", false, "smaller sizes and shorter durations, for development (results under bench/results/quick/)")
	operatorBin := flag.String("operator", "", "the gitops-reverser binary to measure; empty builds ./cmd/gitops-reverser into the run's folder")
	phases := flag.String("phases", "1,2,3,4,5", "phases to run, comma-separated")
	resultsDir := flag.String("results", "", "folder for the CSV files (default bench/results, or bench/results/quick with -quick)")
	mdPath := flag.String("md", "", "update the generated part of this BENCH.md (default BENCH.md for a full run with all phases, else none; \"none\" for none)")
	profile := flag.Bool("profile", true, "collect CPU profiles of the operator (extra runs, not counted)")
	profileSize := flag.Int("profile-size", 0, "phase 1's size whose extra run is profiled (default the largest measured more than once)")
	repeats := flag.Int("repeats", 0, "runs of the idle operator (phase 0) and repeats of phase 1 and phase 3 (default 3, 1 with -quick)")
	sizes := flag.String("sizes", "", "phase 1's numbers of ConfigMaps, comma-separated (default 1000,10000,100000; 200,1000 with -quick)")
	compareEnv := flag.Bool("compare-env", false, "also run phase 2 and phase 3 with the kubeconfig as $KUBECONFIG, rows marked [$KUBECONFIG]")
	kubeconfigEnv := flag.Bool("kubeconfig-env", false, "pass the kubeconfig to the operator as $KUBECONFIG instead of --kubeconfig (controller-runtime's GetConfig path, as in a cluster)")
	keep := flag.Bool("keep", false, "keep the run's folder (logs, repositories)")
	flag.Parse()

	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	if *repeats > 0 {
		cfg.repeats, cfg.burstRepeats = *repeats, *repeats
	}
	if *sizes != "" {
		cfg.initialSizes = nil
		for _, f := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "bench: bad -sizes %q\n", *sizes)
				os.Exit(2)
			}
			cfg.initialSizes = append(cfg.initialSizes, n)
		}
	}
	cfg.profile = *profile
	cfg.profileSize = *profileSize
	cfg.compareEnv = *compareEnv
	cfg.phases = map[int]bool{}
	for _, p := range strings.Split(*phases, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > lastPhase {
			fmt.Fprintf(os.Stderr, "bench: bad -phases %q\n", *phases)
			return 2
		}
		cfg.phases[n] = true
	}
	if _, err := os.Stat("go.mod"); err != nil {
		fmt.Fprintln(os.Stderr, "bench: run from the module root (make bench, or go run ./bench)")
		return 2
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, `bench: KUBEBUILDER_ASSETS is not set: run 'make bench', or export KUBEBUILDER_ASSETS="$(bash hack/tools/control-plane.sh)"`)
		return 2
	}
	if *resultsDir == "" {
		*resultsDir = filepath.Join("bench", "results")
		if *quick {
			*resultsDir = filepath.Join(*resultsDir, "quick")
		}
	}
	switch {
	case *mdPath == "none":
		*mdPath = "" // no BENCH.md, whatever the phases
	case *mdPath == "" && !*quick && len(cfg.phases) == lastPhase:
		*mdPath = "BENCH.md"
	}

	b := &bench{cfg: cfg, started: time.Now()}
	becomeSubreaper()
	// Ctrl-C, SIGTERM or SIGHUP end the run; the clean-up below still runs, and further
	// signals are swallowed until it is done.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	dir, err := os.MkdirTemp("", "gitops-reverser-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "bench: panic: %v\n", r)
			code = 1
		}
		if b.env != nil {
			if err := b.env.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: clean-up:", err)
			}
		}
		if left := killOrphans(5 * time.Second); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "bench: stopped %d leftover process(es): %v\n", len(left), left)
		}
		if *keep {
			fmt.Fprintln(os.Stderr, "bench: kept", dir)
		} else {
			_ = os.RemoveAll(dir)
		}
	}()
	b.profDir = filepath.Join("bench", "results", "profiles")
	if err := os.MkdirAll(b.profDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}

	if err := b.run(ctx, dir, *operatorBin, *keep, *kubeconfigEnv); err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "bench: interrupted; cleaning up")
			return 130
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if err := b.report(*resultsDir, *mdPath, *quick); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

func (b *bench) run(ctx context.Context, dir, operatorBin string, keep, kubeconfigEnv bool) error {
	if operatorBin == "" {
		operatorBin = filepath.Join(dir, "gitops-reverser")
		b.logf("building ./cmd/gitops-reverser")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", operatorBin, "./cmd/gitops-reverser")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build the operator: %w", err)
		}
	}
	abs, err := filepath.Abs(operatorBin)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b.logf("starting the control plane and the Git server")
	if b.env, err = startEnv(dir, []string{abs, "run"}, []string{self, "profiled-operator"}); err != nil {
		return err
	}
	b.env.keep, b.env.kubeconfigEnv = keep, kubeconfigEnv
	t := time.Now()
	if err := b.setup(ctx); err != nil {
		return err
	}
	b.logf("objects created in %s", time.Since(t).Round(time.Millisecond))
	if err := b.idleRSS(ctx); err != nil {
		return err
	}
	steps := []struct {
		n  int
		fn func(context.Context) error
	}{{1, b.phaseInitial}, {2, b.phaseSteady}, {3, b.phaseBurst}, {4, b.phaseScale}, {5, b.phaseTenants}}
	for _, s := range steps {
		if !b.want(s.n) {
			continue
		}
		b.logf("phase %d", s.n)
		if err := s.fn(ctx); err != nil {
			return fmt.Errorf("phase %d: %w", s.n, err)
		}
	}
	return nil
}

// ---- results -----------------------------------------------------------------------------

// sample is one raw figure of one run.
type sample struct {
	phase, scenario, metric string
	run                     int
	value                   float64
	unit, note              string
}

type results struct{ samples []sample }

func (r *results) add(phase, scenario, metric string, run int, value float64, unit, note string) {
	r.samples = append(r.samples, sample{phase, scenario, metric, run, value, unit, note})
}

// editSample is one edit's latency in phase 2 (NaN: never pushed).
type editSample struct {
	phase, scenario string
	k               int
	latency         float64
}

// tableRow is one line of the printed table: a figure, its baseline and the goal.
type tableRow struct {
	phase, scenario, figure string
	value                   float64
	unit                    string
	base                    float64
	baseName                string
	goal                    string
	n                       int
	// censor: a value of +Inf means "more than censor" (not reached within a cap).
	censor float64
}

func (b *bench) renderTable() string {
	var s strings.Builder
	s.WriteString("| # | scenario | figure | GitOps Reverser | baseline | ratio | goal | n |\n")
	s.WriteString("|---|---|---|---:|---|---:|---|---:|\n")
	for _, r := range b.table {
		base := "—"
		if !math.IsNaN(r.base) && r.baseName != "" {
			base = fmt.Sprintf("%s (%s)", fmtValue(r.base, r.unit), r.baseName)
		}
		value, ratio := fmtValue(r.value, r.unit), fmtRatio(r.value, r.base)
		if math.IsInf(r.value, 1) {
			value, ratio = "> "+fmtValue(r.censor, r.unit), "> "+fmtRatio(r.censor, r.base)
		}
		fmt.Fprintf(&s, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", r.phase, r.scenario, r.figure,
			value, base, ratio, orDash(r.goal), r.n)
	}
	return s.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func (b *bench) machine() string {
	var s strings.Builder
	model := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseFloat(strings.Fields(v)[0], 64); err == nil {
					mem = fmt.Sprintf("%.1f GiB", kb/(1<<20))
				}
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	gitVersion, _ := git("", "--version")
	fmt.Fprintf(&s, "- CPUs (nproc): %d (%s)\n", runtime.NumCPU(), model)
	fmt.Fprintf(&s, "- memory: %s\n", mem)
	fmt.Fprintf(&s, "- Go: %s; %s\n", runtime.Version(), strings.TrimSpace(gitVersion))
	fmt.Fprintf(&s, "- load average at the end: %s (the machine is shared: other engineers' tests ran meanwhile)\n",
		strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&s, "- run took %s; finished %s\n", time.Since(b.started).Round(time.Second), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	return s.String()
}

// report prints the table, writes the CSV files and the profile summary, and updates the
// generated part of BENCH.md.
func (b *bench) report(dir, md string, quick bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stamp := b.started.UTC().Format("20060102-150405")
	table := b.renderTable()
	machine := b.machine()
	fmt.Println()
	fmt.Print(table)
	fmt.Println()
	fmt.Print(machine)

	runsCSV := filepath.Join(dir, stamp+"-runs.csv")
	if err := writeCSV(runsCSV, []string{"phase", "scenario", "metric", "run", "value", "unit", "note"}, len(b.res.samples), func(i int) []string {
		s := b.res.samples[i]
		return []string{s.phase, s.scenario, s.metric, strconv.Itoa(s.run), fmtFloat(s.value), s.unit, s.note}
	}); err != nil {
		return err
	}
	editsCSV := filepath.Join(dir, stamp+"-edits.csv")
	if err := writeCSV(editsCSV, []string{"phase", "scenario", "edit", "latency_s"}, len(b.edits), func(i int) []string {
		e := b.edits[i]
		return []string{e.phase, e.scenario, strconv.Itoa(e.k), fmtFloat(e.latency)}
	}); err != nil {
		return err
	}
	tableCSV := filepath.Join(dir, stamp+"-table.csv")
	if err := writeCSV(tableCSV, []string{"phase", "scenario", "figure", "value", "unit", "baseline", "baseline_name", "ratio", "goal", "n"}, len(b.table), func(i int) []string {
		r := b.table[i]
		ratio := math.NaN()
		if r.base != 0 {
			ratio = r.value / r.base
		}
		return []string{r.phase, r.scenario, r.figure, fmtFloat(r.value), r.unit, fmtFloat(r.base), r.baseName, fmtFloat(ratio), r.goal, strconv.Itoa(r.n)}
	}); err != nil {
		return err
	}
	var prof strings.Builder
	for _, p := range b.profiles {
		text, err := profileSummary(p, 25, 15)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			continue
		}
		prof.WriteString(text + "\n")
		if heap, err := heapSummary(p, 25); err == nil {
			prof.WriteString(heap + "\n")
		} else {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	}
	if prof.Len() > 0 {
		path := filepath.Join(dir, stamp+"-profile.txt")
		if err := os.WriteFile(path, []byte(prof.String()), 0o644); err != nil {
			return err
		}
		fmt.Println()
		fmt.Print(prof.String())
	}
	fmt.Printf("\nraw figures: %s, %s, %s\n", runsCSV, editsCSV, tableCSV)
	if md == "" {
		return nil
	}
	mode := "full"
	if quick {
		mode = "quick"
	}
	generated := fmt.Sprintf("Run `%s` of %s (%s mode); raw figures: `%s`, `%s`, `%s`.\n\n%s\n%s",
		stamp, b.started.UTC().Format("2006-01-02"), mode, runsCSV, editsCSV, tableCSV, table, machine)
	if err := replaceBetween(md, "<!-- bench:table -->", "<!-- /bench:table -->", generated); err != nil {
		return err
	}
	if prof.Len() > 0 {
		if err := replaceBetween(md, "<!-- bench:profile -->", "<!-- /bench:profile -->", prof.String()); err != nil {
			return err
		}
	}
	fmt.Printf("updated %s\n", md)
	return nil
}

func fmtFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func writeCSV(path string, header []string, n int, row func(int) []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(header)
	for i := range n {
		_ = w.Write(row(i))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replaceBetween replaces what lies between two marker lines of a file; it adds both
// markers at the end when the file lacks them.
func replaceBetween(path, start, end, content string) error {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(data)
	i, j := strings.Index(s, start), strings.Index(s, end)
	block := start + "\n" + content + end
	if i < 0 || j < i {
		s = strings.TrimRight(s, "\n") + "\n\n" + block + "\n"
	} else {
		s = s[:i] + block + s[j+len(end):]
	}
	return os.WriteFile(path, []byte(s), 0o644)
}
