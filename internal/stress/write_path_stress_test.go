//go:build stress

package stress

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"

	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// The load of the issue this test proves.
const (
	branchCount      = 2
	targetsPerBranch = 4
	// totalChanges are creates, updates and deletes of ConfigMaps, over every namespace.
	totalChanges = 5000
	// refuseEveryNth push fails at the Git server: 10%.
	refuseEveryNth = 10
	// goneAfter is how many changes are made before the one forced 410 Gone.
	goneAfter = 2000
	// goneAttempts bounds the cuts made to see a 410 Gone.
	goneAttempts = 3

	rotateEvery     = 3 * time.Second
	editTargetEvery = 2 * time.Second
	editRuleEvery   = 2 * time.Second
	sampleEvery     = 10 * time.Millisecond

	// stepDeadline bounds each wait on the way (targets watching, the 410 taken);
	// settleDeadline bounds the wait for Git to match the cluster once the load ended. Past
	// either the test fails with every goroutine's stack in its log: a deadlock shows there.
	stepDeadline   = 4 * time.Minute
	settleDeadline = 5 * time.Minute
	// callTimeout bounds one request of the test to the API server.
	callTimeout = 30 * time.Second

	gitUser  = "bot"
	repoName = "mirror.git"
)

var branchNames = [branchCount]string{"main", "second"}

// password is the n-th password of the rotation.
func password(n int) string { return fmt.Sprintf("rotated-pass-%d", n) }

// TestEightTargetsOnTwoBranchesLoseNoChangeUnderChurnAndKeepOneWorkerPerBranch is the write
// path under stress: 8 GitTargets on 2 branches, 5,000 changes of ConfigMaps made by 8
// goroutines while GitTargets and WatchRules are edited and the credentials rotated every
// few seconds, a Git server that refuses every 10th push, and one forced 410 Gone on the
// watch streams. At the end every object's last state is in Git, every delete is applied
// (prune OnEvent and Always), nothing deadlocked, and the registry never ran two workers of
// one branch.
func TestEightTargetsOnTwoBranchesLoseNoChangeUnderChurnAndKeepOneWorkerPerBranch(t *testing.T) {
	logs := io.Discard
	if os.Getenv("GITOPS_REVERSER_TEST_LOGS") != "" {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRESS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("STRESS_SEED: %v", err)
		}
	}
	t.Logf("seed %d (STRESS_SEED=%d repeats the choices of the load generators)", seed, seed)
	began := time.Now()

	// Without the watch cache etcd answers every watch, and compacting every second it answers
	// a watch resumed from before a gap with 410 Gone (the technique of
	// internal/controller/stream_gone_e2e_test.go).
	cp := testenv.NewControlPlane(t, testenv.WithAPIServerFlag("watch-cache", "false"),
		testenv.WithAPIServerFlag("etcd-compaction-interval", "1s"))
	repo := newFlakyRepo(t)
	proxy, proxied := testenv.StartAPIServerProxy(t, cp.Config)
	op := startOperator(t, proxied, t.TempDir())
	w := newWorld(cp.Client, repo)
	w.create(t, cp)
	w.waitTargetsWatching(t, op.pipeline)
	t.Logf("setup took %s", time.Since(began).Round(time.Second))

	run := &stressRun{t: t, world: w, repo: repo, pipeline: op.pipeline, proxy: proxy, seed: seed, began: began}
	stopSampling := run.sampleRegistry()
	defer stopSampling()
	run.churnUntilLoaded()
	t.Logf("%d credential rotations, %d target edits, %d rule edits meanwhile; %d pushes refused so far",
		run.rotations.Load(), run.targetEdits.Load(), run.ruleEdits.Load(), repo.http.RefusedPushes())
	if t.Failed() {
		return
	}

	settleBegan := time.Now()
	run.waitGitMatchesCluster()
	t.Logf("Git matched the cluster %s after the load ended; commits: %s; pushes refused: %d",
		time.Since(settleBegan).Round(time.Second), repo.commitCounts(), repo.http.RefusedPushes())
	stopSampling()

	if n := op.pipeline.Workers.Overlaps(); n != 0 {
		t.Errorf("the registry started a worker %d times while another worker of its branch still ran", n)
	}
	if n := run.overRunning.Load(); n != 0 {
		t.Errorf("%d samples saw more worker loops running than there are branches (at most %d, %d branches)",
			n, run.maxRunning.Load(), branchCount)
	}
	if run.samples.Load() < 100 {
		t.Errorf("the registry was sampled only %d times", run.samples.Load())
	}
	if repo.http.RefusedPushes() == 0 {
		t.Error("the Git server refused no push: the failure path was not taken")
	}
	if n := run.rotations.Load(); n < 3 {
		t.Errorf("only %d credential rotations during the load, want a few", n)
	}

	run.checkLedger()

	op.stop(t)
	if n := op.pipeline.Workers.Running(); n != 0 {
		t.Errorf("%d worker loops still run after the operator stopped", n)
	}
	t.Logf("the whole run took %s (%d samples of the registry, at most %d workers running)",
		time.Since(began).Round(time.Second), run.samples.Load(), run.maxRunning.Load())
}

// checkLedger asserts the ledger (docs/branch-worker.md#the-ledger) over every worker the
// run had, replaced ones included: every change received ended exactly once (written,
// superseded, unchanged, released) or is open, and nothing is open once Git matches the
// cluster.
func (r *stressRun) checkLedger() {
	r.t.Helper()
	outcomes := map[string]float64{}
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "gitops_reverser_changes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					outcomes[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	open := 0
	for _, b := range branchNames {
		key, err := ownership.KeyFor(r.repo.url(), b)
		if err != nil {
			r.t.Fatal(err)
		}
		w, ok := r.pipeline.Workers.Lookup(key)
		if !ok {
			r.t.Errorf("branch %s has no worker at the end", b)
			continue
		}
		ctx, cancel := r.ctx()
		st, err := w.Status(ctx)
		cancel()
		if err != nil {
			r.t.Fatal(err)
		}
		if !st.Ledger.Balanced() {
			r.t.Errorf("branch %s: the worker's ledger does not add up: %+v", b, st.Ledger)
		}
		open += st.Ledger.Open
	}
	ended := outcomes["written"] + outcomes["superseded"] + outcomes["unchanged"] + outcomes["released"]
	r.t.Logf("ledger of every worker of the run: %v, open %d", outcomes, open)
	if open != 0 {
		r.t.Errorf("%d changes still open although Git matches the cluster", open)
	}
	if outcomes["received"] == 0 || outcomes["written"] == 0 {
		r.t.Errorf("the ledger counted nothing: %v", outcomes)
	}
	if outcomes["received"] != ended+float64(open) {
		r.t.Errorf("the ledger does not add up: %v received, %v ended, %d open", outcomes["received"], ended, open)
	}
}

// ---- the world: providers, targets, rules and the ConfigMaps the load leaves ----

// world is what the test creates: a home namespace with one GitProvider per branch, each
// with its own Secret, and one namespace per GitTarget with its WatchRule and ConfigMaps.
type world struct {
	c       client.Client
	repo    *flakyRepo
	home    string
	targets []*targetWorld
}

// targetWorld is one GitTarget and the ConfigMaps of its namespace as its load generator
// last left them. Only that generator touches live and deleted until the load ended.
type targetWorld struct {
	ns, folder, branch, provider string
	prune                        v1.PruneMode
	live                         map[string]*corev1.ConfigMap // as the API server last returned it
	names                        []string                     // the keys of live, to pick from
	changed                      map[string]moment            // when each live one was last created or updated
	deleted                      map[string]moment            // when each was deleted; names are never used again
	created                      int
}

func (tw *targetWorld) name() string { return tw.ns + "/mirror" }
func (tw *targetWorld) key() client.ObjectKey {
	return client.ObjectKey{Namespace: tw.ns, Name: "mirror"}
}

// documentPath is where the target writes a ConfigMap of its namespace (no placement for
// ConfigMaps: the canonical path).
func (tw *targetWorld) documentPath(name string) string {
	return tw.folder + "/" + tw.ns + "/core/configmaps/" + name + ".yaml"
}

func newWorld(c client.Client, repo *flakyRepo) *world {
	w := &world{c: c, repo: repo, home: "stress-home"}
	for b := range branchCount {
		for i := range targetsPerBranch {
			n := b*targetsPerBranch + i
			prune := v1.PruneOnEvent
			if i == targetsPerBranch-1 {
				prune = v1.PruneAlways // one target per branch sweeps; the others delete on events only
			}
			w.targets = append(w.targets, &targetWorld{
				ns: fmt.Sprintf("stress-%d", n), folder: fmt.Sprintf("t%d", n), branch: branchNames[b],
				provider: "origin-" + branchNames[b], prune: prune,
				live: map[string]*corev1.ConfigMap{}, changed: map[string]moment{}, deleted: map[string]moment{},
			})
		}
	}
	return w
}

// create makes the namespaces, the providers with their Secrets, the targets and their rules.
func (w *world) create(t *testing.T, cp *testenv.ControlPlane) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepDeadline)
	defer cancel()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cp.CreateNamespace(ctx, w.home, nil))
	for _, tw := range w.targets {
		must(cp.CreateNamespace(ctx, tw.ns, nil))
	}
	for b, branch := range branchNames {
		var guests []string
		for _, tw := range w.targets[b*targetsPerBranch : (b+1)*targetsPerBranch] {
			guests = append(guests, tw.ns)
		}
		must(w.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.home, Name: secretOf(branch)},
			StringData: map[string]string{"username": gitUser, "password": password(0)}}))
		must(w.c.Create(ctx, &v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: w.home, Name: "origin-" + branch},
			Spec: v1.GitProviderSpec{
				URL: w.repo.url(), SecretRef: &v1.LocalObjectReference{Name: secretOf(branch)}, AllowedBranches: []string{branch},
				Push:       v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 300 * time.Millisecond}},
				AccessFrom: &v1.NamespaceMatcher{Namespaces: guests},
			}}))
	}
	for _, tw := range w.targets {
		must(w.c.Create(ctx, &v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: tw.ns, Name: "mirror"}, Spec: v1.GitTargetSpec{
			GitProviderRef: v1.GitProviderReference{Name: tw.provider, Namespace: w.home},
			Branch:         tw.branch, Path: tw.folder, Prune: v1.PruneSpec{Mode: tw.prune},
		}}))
		must(w.c.Create(ctx, &v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: tw.ns, Name: "cms"}, Spec: v1.WatchRuleSpec{
			TargetRef: v1.LocalObjectReference{Name: "mirror"}, Rules: rulesOf(false),
		}}))
	}
}

func secretOf(branch string) string { return "auth-" + branch }

// rulesOf gives the two forms a WatchRule takes turns in: ConfigMaps alone, or ConfigMaps
// with every operation spelled out and LimitRanges (of which there are none). Both mirror
// the same ConfigMaps; each change re-subscribes the target (a fresh snapshot from the
// stream's cache) and starts or stops a stream.
func rulesOf(alternate bool) []v1.ResourceRule {
	if !alternate {
		return []v1.ResourceRule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}
	}
	return []v1.ResourceRule{
		{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{"configmaps"},
			Operations: []v1.Operation{"CREATE", "UPDATE", "DELETE"}},
		{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"limitranges"}},
	}
}

// waitTargetsWatching waits until every target is Ready and its ConfigMap stream is synced:
// Ready alone comes before the rule is compiled.
func (w *world) waitTargetsWatching(t *testing.T, p *pipeline.Pipeline) {
	t.Helper()
	ok, last := poll(stepDeadline, 200*time.Millisecond, func() (bool, string) {
		for _, tw := range w.targets {
			var gt v1.GitTarget
			if err := w.c.Get(context.Background(), tw.key(), &gt); err != nil {
				return false, err.Error()
			}
			if c := meta.FindStatusCondition(gt.Status.Conditions, v1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
				return false, fmt.Sprintf("GitTarget %s not ready: %+v", tw.name(), c)
			}
			if st, ok := configMapStream(p, tw); !ok || !st.Synced {
				return false, fmt.Sprintf("GitTarget %s does not watch its ConfigMaps yet: %+v", tw.name(), st)
			}
		}
		return true, ""
	})
	if !ok {
		dumpGoroutines(t)
		t.Fatalf("timed out after %s waiting for every GitTarget to watch its ConfigMaps; last: %s", stepDeadline, last)
	}
}

// configMapStream is the status of the stream of the target's ConfigMaps.
func configMapStream(p *pipeline.Pipeline, tw *targetWorld) (watch.StreamStatus, bool) {
	for _, ks := range p.Hub.Status(tw.name()) {
		if ks.Key.GVR.Resource == "configmaps" && ks.Key.Namespace == tw.ns {
			return ks.StreamStatus, true
		}
	}
	return watch.StreamStatus{}, false
}

// ---- the run: load, churn, the forced 410, and the checks ----

// stressRun is one run of the load with everything that churns beside it.
type stressRun struct {
	t        *testing.T
	world    *world
	repo     *flakyRepo
	pipeline *pipeline.Pipeline
	proxy    *testenv.TCPProxy
	seed     uint64
	began    time.Time

	// tickets hands out the totalChanges; done counts the changes the API server made.
	tickets, done atomic.Int64
	// gap is set from just before the forced 410 until every stream has taken its new
	// snapshot. Meanwhile the namespaces of OnEvent targets see no deletes: a delete inside
	// a gap reaches Git only through a snapshot's sweep, which OnEvent never does
	// (docs/branch-worker.md#snapshots-and-prune-modes). Generators hold ops (read) across
	// one change, so that setting gap and taking ops once waits out the changes begun before.
	gap atomic.Bool
	ops sync.RWMutex

	timelineMu sync.Mutex
	timeline   []string

	rotations, targetEdits, ruleEdits atomic.Int64
	samples, overRunning, maxRunning  atomic.Int64
	overlapSeen                       atomic.Bool
}

func (r *stressRun) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), callTimeout)
}

// churnUntilLoaded makes the totalChanges, one generator per namespace, while credentials
// rotate and targets and rules are edited, and forces one 410 on the way. It returns when
// the load and the 410 are done and the churn stopped.
func (r *stressRun) churnUntilLoaded() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var churn sync.WaitGroup
	churn.Go(func() { every(ctx, rotateEvery, r.rotateCredential) })
	churn.Go(func() { every(ctx, editTargetEvery, r.editTarget) })
	churn.Go(func() { every(ctx, editRuleEvery, r.editRule) })

	var load sync.WaitGroup
	loadBegan := time.Now()
	for i, tw := range r.world.targets {
		load.Go(func() { r.generate(tw, rand.New(rand.NewPCG(r.seed, uint64(i)))) })
	}
	loaded := make(chan struct{})
	var gone sync.WaitGroup
	gone.Go(func() { r.forceGoneOnce(loaded) })
	load.Wait()
	r.note("the load ended")
	r.t.Logf("%d changes made in %s", r.done.Load(), time.Since(loadBegan).Round(time.Second))
	close(loaded)
	gone.Wait()
	stop()
	churn.Wait()
}

// generate makes this namespace's share of the changes: creates, updates and deletes of
// ConfigMaps, each name used once.
func (r *stressRun) generate(tw *targetWorld, rng *rand.Rand) {
	for r.tickets.Add(1) <= totalChanges {
		r.ops.RLock()
		err := r.change(tw, rng)
		r.ops.RUnlock()
		if err != nil {
			r.t.Errorf("load of %s: %v", tw.ns, err)
			return
		}
		r.done.Add(1)
	}
}

func (r *stressRun) change(tw *targetWorld, rng *rand.Rand) error {
	ctx, cancel := r.ctx()
	defer cancel()
	c := r.world.c
	roll := rng.IntN(100)
	switch {
	case len(tw.names) < 8 || roll < 35:
		name := fmt.Sprintf("cm-%05d", tw.created)
		tw.created++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tw.ns, Name: name},
			Data: map[string]string{"rev": "1", "pad": pad(rng)}}
		if err := c.Create(ctx, cm); err != nil {
			return r.learn(tw, name, err)
		}
		tw.live[name], tw.changed[name] = cm, r.now()
		tw.names = append(tw.names, name)
	case roll < 80 || (tw.prune == v1.PruneOnEvent && r.gap.Load()):
		name := tw.names[rng.IntN(len(tw.names))]
		cm := tw.live[name].DeepCopy()
		cm.Data["rev"] = strconv.Itoa(rev(cm) + 1)
		if rng.IntN(4) == 0 {
			cm.Data["pad"] = pad(rng) // an edit in place of another value
		}
		if err := c.Update(ctx, cm); err != nil {
			return r.learn(tw, name, err)
		}
		tw.live[name], tw.changed[name] = cm, r.now()
	default:
		i := rng.IntN(len(tw.names))
		name := tw.names[i]
		if err := c.Delete(ctx, tw.live[name]); err != nil {
			return r.learn(tw, name, err)
		}
		tw.forget(i, r.now())
	}
	return nil
}

// learn asks the API server what became of a change that returned an error (a timeout may
// still have been applied) and records that.
func (r *stressRun) learn(tw *targetWorld, name string, cause error) error {
	ctx, cancel := r.ctx()
	defer cancel()
	var got corev1.ConfigMap
	err := r.world.c.Get(ctx, client.ObjectKey{Namespace: tw.ns, Name: name}, &got)
	switch {
	case apierrors.IsNotFound(err):
		if _, ok := tw.live[name]; ok {
			tw.forget(slicesIndex(tw.names, name), r.now())
		}
		return nil
	case err != nil:
		return fmt.Errorf("%w; and reading %s back: %v", cause, name, err)
	}
	if _, ok := tw.live[name]; !ok {
		tw.names = append(tw.names, name)
	}
	tw.live[name], tw.changed[name] = &got, r.now()
	return nil
}

func (tw *targetWorld) forget(i int, at moment) {
	name := tw.names[i]
	tw.names[i] = tw.names[len(tw.names)-1]
	tw.names = tw.names[:len(tw.names)-1]
	delete(tw.live, name)
	delete(tw.changed, name)
	tw.deleted[name] = at
}

// moment places something in the run, to tell what a lost change coincided with.
type moment struct {
	at                time.Duration // since the test began
	changes, rotation int64
	gap               bool
}

func (m moment) String() string {
	return fmt.Sprintf("at %s (after %d changes, rotation %d, gap %t)", m.at.Round(time.Millisecond), m.changes, m.rotation, m.gap)
}

func (r *stressRun) now() moment {
	return moment{at: time.Since(r.began), changes: r.done.Load(), rotation: r.rotations.Load(), gap: r.gap.Load()}
}

// note adds a line to the run's timeline, logged when the test fails.
func (r *stressRun) note(format string, args ...any) {
	line := r.now().String() + ": " + fmt.Sprintf(format, args...)
	r.timelineMu.Lock()
	defer r.timelineMu.Unlock()
	r.timeline = append(r.timeline, line)
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// pad is a ConfigMap value: a run of one letter, and now and then a string that YAML 1.1
// readers (kubectl, Flux) take for something else, which Git must hold quoted
// (docs/sanitize.md#the-byte-format).
func pad(rng *rand.Rand) string {
	if rng.IntN(40) == 0 {
		return yaml11Words[rng.IntN(len(yaml11Words))]
	}
	return strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(300))
}

var yaml11Words = []string{"y", "n", "yes", "no", "on", "off", "1:20"}

func rev(cm *corev1.ConfigMap) int {
	n, _ := strconv.Atoi(cm.Data["rev"])
	return n
}

// rotateCredential moves the Git server's accepted passwords one step (the newest and the
// two before it, so that the other branch's Secret and a worker not yet replaced still
// push) and gives the Secret of one branch, in turn, the newest. It pauses during the gap:
// the operator cannot read the Secret then.
func (r *stressRun) rotateCredential() {
	if r.gap.Load() {
		return
	}
	n := int(r.rotations.Add(1))
	var accepted []string
	for k := n; k >= 0 && k >= n-2; k-- {
		accepted = append(accepted, password(k))
	}
	r.repo.http.SetPasswords(accepted...)
	branch := branchNames[n%branchCount]
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ctx, cancel := r.ctx()
		defer cancel()
		var s corev1.Secret
		if err := r.world.c.Get(ctx, client.ObjectKey{Namespace: r.world.home, Name: secretOf(branch)}, &s); err != nil {
			return err
		}
		s.Data["password"] = []byte(password(n))
		return r.world.c.Update(ctx, &s)
	})
	if err != nil {
		r.t.Errorf("rotate the credential of %s: %v", branch, err)
	}
	r.note("rotation %d: the Secret of %s holds password %d", n, branch, n)
}

// editTarget toggles one target's placement in turn: a template for LimitRanges, of which
// there are none. The spec changes, so the target is reconciled and handed to its worker
// again; where ConfigMaps go does not.
func (r *stressRun) editTarget() {
	k := r.targetEdits.Add(1) - 1
	tw := r.world.targets[k%int64(len(r.world.targets))]
	patch := `{"spec":{"placement":null}}`
	if (k/int64(len(r.world.targets)))%2 == 0 {
		patch = `{"spec":{"placement":{"byType":{"v1/limitranges":"limitranges/{name}.yaml"}}}}`
	}
	ctx, cancel := r.ctx()
	defer cancel()
	if err := r.world.c.Patch(ctx, &v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: tw.ns, Name: "mirror"}},
		client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		r.t.Errorf("edit GitTarget %s: %v", tw.name(), err)
	}
	r.note("GitTarget %s edited: %s", tw.name(), patch)
}

// editRule switches one WatchRule in turn between its two forms (rulesOf).
func (r *stressRun) editRule() {
	k := r.ruleEdits.Add(1) - 1
	tw := r.world.targets[k%int64(len(r.world.targets))]
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"rules": rulesOf((k/int64(len(r.world.targets)))%2 == 0)}})
	if err != nil {
		r.t.Errorf("rule patch: %v", err)
		return
	}
	ctx, cancel := r.ctx()
	defer cancel()
	if err := r.world.c.Patch(ctx, &v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: tw.ns, Name: "cms"}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		r.t.Errorf("edit WatchRule %s/cms: %v", tw.ns, err)
	}
	r.note("WatchRule %s/cms edited (alternate form: %t)", tw.ns, (k/int64(len(r.world.targets)))%2 == 0)
}

// every calls f every d until ctx ends (pacing a load generator, not waiting for a
// condition).
func every(ctx context.Context, d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}

// sampleOnce reads the registry once: how many worker loops run, and whether two of one
// branch ever did.
func (r *stressRun) sampleOnce() {
	r.samples.Add(1)
	n := int64(r.pipeline.Workers.Running())
	for {
		m := r.maxRunning.Load()
		if n <= m || r.maxRunning.CompareAndSwap(m, n) {
			break
		}
	}
	if n > branchCount {
		r.overRunning.Add(1)
	}
	if r.pipeline.Workers.Overlaps() > 0 && r.overlapSeen.CompareAndSwap(false, true) {
		r.t.Errorf("two workers of one branch ran at once, first seen %s into the run",
			time.Since(r.began).Round(time.Millisecond))
	}
}

// sampleRegistry reads the registry every sampleEvery until the returned function is called:
// never more loops running than branches, never a start beside a running worker of its
// branch.
func (r *stressRun) sampleRegistry() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { every(ctx, sampleEvery, r.sampleOnce) })
	var once sync.Once
	return func() { once.Do(func() { cancel(); wg.Wait() }) }
}

// forceGoneOnce waits for goneAfter changes, then cuts the operator off the API server until
// etcd has compacted past every stream's position, so that each stream's resumed watch is
// answered 410 Gone and it takes a new snapshot. loaded is closed when the load ended.
func (r *stressRun) forceGoneOnce(loaded <-chan struct{}) {
	tick := time.NewTicker(50 * time.Millisecond)
	for r.done.Load() < goneAfter {
		select {
		case <-loaded:
			tick.Stop()
			r.t.Errorf("the load ended after %d changes, before the 410 was forced", r.done.Load())
			return
		case <-tick.C:
		}
	}
	tick.Stop()
	began := time.Now()
	targets := r.world.targets

	// No delete of an OnEvent namespace from here until every stream re-snapshotted; the
	// deletes made before must have reached the streams as events.
	r.gap.Store(true)
	r.note("gap begins: no more deletes in the namespaces of OnEvent targets")
	r.ops.Lock()
	r.ops.Unlock() // only to wait out the changes begun before gap was set
	// A stream that sees the cut as an error event, not as a closed channel, takes a new
	// snapshot without asking for its old position (docs/watch-streams.md#resume-or-re-snapshot),
	// so no 410 comes when every stream happens to see it so: then the cut is made again.
	gone := 0
	for attempt := 1; gone == 0; attempt++ {
		if attempt > goneAttempts {
			r.t.Errorf("no stream was answered 410 Gone after %d cuts", goneAttempts)
			return
		}
		var ok bool
		if gone, ok = r.cutUntilCompacted(targets); !ok {
			return
		}
	}
	r.gap.Store(false)
	r.note("gap ends: every stream took a new snapshot, %d of %d after 410 Gone", gone, len(targets))
	r.t.Logf("410 Gone forced after %d changes: every stream re-snapshotted within %s, %d of %d after 410 Gone",
		r.done.Load(), time.Since(began).Round(time.Millisecond), gone, len(targets))
}

// cutUntilCompacted waits for every stream to be past the last change, cuts the operator off
// the API server until etcd compacted past the cut, and waits for every stream to take a new
// snapshot. It returns how many streams were ever answered 410 Gone; false when a step
// failed the test.
func (r *stressRun) cutUntilCompacted(targets []*targetWorld) (int, bool) {
	before, err := r.currentRV()
	if err != nil {
		r.t.Errorf("410: %v", err)
		return 0, false
	}
	if !r.step("every stream past the last change before the gap", func() (bool, string) {
		for _, tw := range targets {
			st, ok := configMapStream(r.pipeline, tw)
			if !ok || !rvAfter(st.ResourceVersion, before) {
				return false, fmt.Sprintf("stream of %s at %q, want past %s", tw.ns, st.ResourceVersion, before)
			}
		}
		return true, ""
	}) {
		return 0, false
	}
	snapshots := map[string]int{}
	for _, tw := range targets {
		st, _ := configMapStream(r.pipeline, tw)
		snapshots[tw.ns] = st.Snapshots
	}

	r.proxy.SetDown(true)
	r.proxy.Cut()
	r.note("the operator is cut off the API server")
	cut, err := r.currentRV()
	if err != nil {
		r.t.Errorf("410: %v", err)
		r.proxy.SetDown(false)
		return 0, false
	}
	// A watch resumed from the cut reads from the revision after it, so that one must be
	// compacted too: a compaction to exactly it expires a LIST at the cut, not the watch.
	afterCut, err := nextRV(cut)
	if err != nil {
		r.t.Errorf("410: %v", err)
		r.proxy.SetDown(false)
		return 0, false
	}
	compacted := r.step("etcd to compact past the cut", func() (bool, string) {
		ctx, cancel := r.ctx()
		defer cancel()
		var list corev1.ConfigMapList
		err := r.world.c.List(ctx, &list, client.InNamespace(targets[0].ns), &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: afterCut, ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 1}})
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), fmt.Sprintf("list at %s: %v", afterCut, err)
	})
	r.proxy.SetDown(false)
	r.note("the operator reaches the API server again (etcd compacted past %s: %t)", cut, compacted)
	if !compacted {
		return 0, false
	}
	gone := 0
	ok := r.step("every stream to take a new snapshot after the gap", func() (bool, string) {
		gone = 0
		for _, tw := range targets {
			st, ok := configMapStream(r.pipeline, tw)
			if !ok || st.Snapshots <= snapshots[tw.ns] || !st.Synced {
				return false, fmt.Sprintf("stream of %s: %+v (snapshots before the gap: %d)", tw.ns, st, snapshots[tw.ns])
			}
			if st.Expired > 0 {
				gone++
			}
		}
		return true, ""
	})
	return gone, ok
}

// step waits for cond within stepDeadline; past it, it fails the test with every
// goroutine's stack and returns false.
func (r *stressRun) step(what string, cond func() (bool, string)) bool {
	ok, last := poll(stepDeadline, 100*time.Millisecond, cond)
	if !ok {
		dumpGoroutines(r.t)
		r.t.Errorf("timed out after %s waiting for %s; last: %s", stepDeadline, what, last)
	}
	return ok
}

// currentRV is etcd's revision now: a consistent list (the watch cache is off).
func (r *stressRun) currentRV() (string, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	var list corev1.ConfigMapList
	if err := r.world.c.List(ctx, &list, client.InNamespace(r.world.targets[0].ns), client.Limit(1)); err != nil {
		return "", fmt.Errorf("read the current resourceVersion: %w", err)
	}
	return list.ResourceVersion, nil
}

// rvAfter compares resourceVersions as etcd's revisions (opaque to clients, but this test
// knows its server).
func rvAfter(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	return errA == nil && errB == nil && x > y
}

// nextRV is the revision after rv (etcd's revisions, as rvAfter reads them).
func nextRV(rv string) (string, error) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return "", fmt.Errorf("resourceVersion %q is not an etcd revision: %w", rv, err)
	}
	return strconv.FormatInt(n+1, 10), nil
}

// waitGitMatchesCluster waits until both branches hold every live ConfigMap at its last
// revision and no document of a deleted one; past settleDeadline it fails the test with
// what differs and every goroutine's stack.
func (r *stressRun) waitGitMatchesCluster() {
	var last []difference
	began, logged := time.Now(), time.Now()
	ok, _ := poll(settleDeadline, time.Second, func() (bool, string) {
		last = r.differences()
		if len(last) > 0 && time.Since(logged) >= 30*time.Second {
			r.t.Logf("%s after the load: %d differences left", time.Since(began).Round(time.Second), len(last))
			logged = time.Now()
		}
		return len(last) == 0, ""
	})
	if ok {
		return
	}
	r.t.Logf("registry: %d workers running, %d overlaps", r.pipeline.Workers.Running(), r.pipeline.Workers.Overlaps())
	for _, b := range branchNames {
		r.t.Logf("worker of %s: %s", b, r.workerStatus(b))
	}
	for _, tw := range r.world.targets {
		var gt v1.GitTarget
		if err := r.world.c.Get(context.Background(), tw.key(), &gt); err == nil {
			r.t.Logf("GitTarget %s (%s): %+v", tw.name(), tw.prune, gt.Status.Conditions)
		}
		st, _ := configMapStream(r.pipeline, tw)
		r.t.Logf("stream of %s: %+v", tw.ns, st)
	}
	r.timelineMu.Lock()
	r.t.Logf("timeline of the run:\n%s", strings.Join(r.timeline, "\n"))
	r.timelineMu.Unlock()
	r.t.Logf("history of the first differing documents:\n%s", r.historyOfDifferences(last, 4))
	dumpGoroutines(r.t)
	r.t.Logf("differences by kind: %s", summarize(last))
	var shown []string
	for i, d := range last {
		if i == 40 {
			break
		}
		shown = append(shown, d.what)
	}
	r.t.Fatalf("timed out after %s waiting for Git to match the cluster: %d differences, first:\n%s",
		settleDeadline, len(last), strings.Join(shown, "\n"))
}

// difference is one way Git differs from the cluster.
type difference struct {
	branch, path, what string
}

// workerStatus is the status the worker of branch reports, as text.
func (r *stressRun) workerStatus(branch string) string {
	key, err := ownership.KeyFor(r.repo.url(), branch)
	if err != nil {
		return err.Error()
	}
	w, ok := r.pipeline.Workers.Lookup(key)
	if !ok {
		return "no worker"
	}
	ctx, cancel := r.ctx()
	defer cancel()
	st, err := w.Status(ctx)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%+v", st)
}

// differences lists where Git differs from the cluster, sorted. Documents are read as
// kubectl reads them (sigs.k8s.io/yaml, YAML 1.1: a plain y is true).
func (r *stressRun) differences() []difference {
	trees := map[string]map[string][]byte{}
	for _, b := range branchNames {
		tree, err := r.repo.tree(b)
		if err != nil {
			return []difference{{branch: b, what: err.Error()}}
		}
		trees[b] = tree
	}
	var out []difference
	for _, tw := range r.world.targets {
		tree := trees[tw.branch]
		for name, cm := range tw.live {
			doc, ok := tree[tw.documentPath(name)]
			if !ok {
				out = append(out, difference{tw.branch, tw.documentPath(name), fmt.Sprintf("%s: %s/%s (rev %d, made %s) has no document", tw.name(), tw.ns, name, rev(cm), tw.changed[name])})
				continue
			}
			var inGit corev1.ConfigMap
			if err := yaml.Unmarshal(doc, &inGit); err != nil {
				out = append(out, difference{tw.branch, tw.documentPath(name), fmt.Sprintf("%s: %s: %v", tw.name(), tw.documentPath(name), err)})
				continue
			}
			switch {
			case inGit.Data["rev"] != cm.Data["rev"]:
				out = append(out, difference{tw.branch, tw.documentPath(name), fmt.Sprintf("%s: %s/%s is at rev %s in Git, %s live (made %s)", tw.name(), tw.ns, name, inGit.Data["rev"], cm.Data["rev"], tw.changed[name])})
			case inGit.Data["pad"] != cm.Data["pad"]:
				out = append(out, difference{tw.branch, tw.documentPath(name), fmt.Sprintf("%s: %s/%s (rev %s) has pad %.40q in Git, %.40q live; the document:\n%s",
					tw.name(), tw.ns, name, cm.Data["rev"], inGit.Data["pad"], cm.Data["pad"], doc)})
			}
		}
		prefix := tw.documentPath("")
		prefix = prefix[:len(prefix)-len(".yaml")]
		for path := range tree {
			name, ok := strings.CutPrefix(path, prefix)
			if !ok {
				continue
			}
			name = strings.TrimSuffix(name, ".yaml")
			if at, ok := tw.deleted[name]; ok {
				out = append(out, difference{tw.branch, path, fmt.Sprintf("%s (prune %s): %s/%s was deleted %s, its document stays", tw.name(), tw.prune, tw.ns, name, at)})
				continue
			}
			if tw.live[name] == nil {
				out = append(out, difference{tw.branch, path, fmt.Sprintf("%s: %s holds no object the test made", tw.name(), path)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].what < out[j].what })
	return out
}

// kind names what sort of difference d is.
func (d difference) kind() string {
	switch {
	case strings.Contains(d.what, "its document stays"):
		return "deleted, document stays"
	case strings.Contains(d.what, "has no document"):
		return "no document"
	case strings.Contains(d.what, "has pad"):
		return "data read differently"
	case strings.Contains(d.what, " in Git, "):
		return "older revision in Git"
	}
	return "other"
}

// summarize counts differences by target and kind.
func summarize(diffs []difference) string {
	counts := map[string]int{}
	for _, d := range diffs {
		target, _, _ := strings.Cut(d.what, " ")
		counts[strings.TrimSuffix(target, ":")+" "+d.kind()]++
	}
	var parts []string
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// historyOfDifferences gives, for the first n differences of each kind, the commits of the
// branch that touched the document, each with the lines of its message that name the object.
func (r *stressRun) historyOfDifferences(diffs []difference, n int) string {
	var b strings.Builder
	shown := map[string]int{}
	for _, d := range diffs {
		if d.path == "" || shown[d.kind()] == n {
			continue
		}
		shown[d.kind()]++
		fmt.Fprintf(&b, "%s of %s:\n%s", d.path, d.branch, r.repo.history(d.branch, d.path))
	}
	return b.String()
}

// ---- the Git server that refuses pushes ----

// flakyRepo is one repository on a Git server over smart HTTP that refuses every
// refuseEveryNth push and accepts the passwords of the rotation.
type flakyRepo struct {
	server *testenv.GitServer
	http   *testenv.HTTPFrontend
}

func newFlakyRepo(t *testing.T) *flakyRepo {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{Username: gitUser, Password: password(0)})
	front.RefusePushes(refuseEveryNth)
	return &flakyRepo{server: g, http: front}
}

func (f *flakyRepo) url() string { return f.http.URL(repoName) }

// tree returns every file of a branch by path.
func (f *flakyRepo) tree(branch string) (map[string][]byte, error) {
	dir, err := f.server.RepoDir(repoName)
	if err != nil {
		return nil, err
	}
	out, err := servers.GitOutput(servers.GitCommand(dir, nil, "archive", "--format=tar", "refs/heads/"+branch))
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	tr := tar.NewReader(strings.NewReader(out))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the archive of %s: %w", branch, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read %s of %s: %w", h.Name, branch, err)
		}
		files[h.Name] = b
	}
}

// history lists the commits of branch that touched path, newest first, each with the lines
// of its message that name the document's object.
func (f *flakyRepo) history(branch, path string) string {
	dir, err := f.server.RepoDir(repoName)
	if err != nil {
		return err.Error() + "\n"
	}
	out, err := servers.GitOutput(servers.GitCommand(dir, nil, "log", "--format=@@%h %cI %s%n%b", "refs/heads/"+branch, "--", path))
	if err != nil {
		return err.Error() + "\n"
	}
	name := strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".yaml")
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if head, ok := strings.CutPrefix(line, "@@"); ok {
			b.WriteString("  " + head + "\n")
		} else if strings.Contains(line, name) {
			b.WriteString("      " + strings.TrimSpace(line) + "\n")
		}
	}
	return b.String()
}

// commitCounts says how many commits each branch holds.
func (f *flakyRepo) commitCounts() string {
	dir, err := f.server.RepoDir(repoName)
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, b := range branchNames {
		out, err := servers.GitOutput(servers.GitCommand(dir, nil, "rev-list", "--count", "refs/heads/"+b))
		if err != nil {
			out = err.Error()
		}
		parts = append(parts, b+" "+strings.TrimSpace(out))
	}
	return strings.Join(parts, ", ")
}

// ---- waiting and the goroutine dump ----

// poll calls cond every interval until it holds or deadline passed; it returns whether it
// held and what cond said last.
func poll(deadline, interval time.Duration, cond func() (bool, string)) (bool, string) {
	end := time.Now().Add(deadline)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return true, ""
		}
		if time.Now().After(end) {
			return false, last
		}
		<-tick.C
	}
}

// dumpGoroutines writes every goroutine's stack into the test's log.
func dumpGoroutines(t *testing.T) {
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Logf("goroutine dump: %v", err)
		return
	}
	t.Logf("every goroutine at the deadline:\n%s", b.String())
}

// ---- the operator, in process ----

// runningOperator is the operator started by the test, with its pipeline.
type runningOperator struct {
	pipeline *pipeline.Pipeline
	cancel   context.CancelFunc
	done     chan error
	once     sync.Once
}

// startOperator runs the operator (operator.Run, with the e2e harness's worker timings)
// against cfg until the test ends (or stop), and returns it with its pipeline, so that the
// test can read the registry of branch workers.
func startOperator(t *testing.T, cfg *rest.Config, workDir string) *runningOperator {
	t.Helper()
	kubeconfig, err := servers.WriteKubeconfigFor(cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	built := make(chan *pipeline.Pipeline, 1)
	ctx, cancel := context.WithCancel(context.Background())
	op := &runningOperator{cancel: cancel, done: make(chan error, 1)}
	opts := operator.Options{
		Kubeconfig: kubeconfig, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		LeaderElectionID: "stress", WorkDir: workDir, StateNamespace: "default",
		// As the e2e harness tunes its workers.
		Tune: func(c *worker.Config) {
			c.PushCooldown = 50 * time.Millisecond
			c.RetryMin, c.RetryMax = 100*time.Millisecond, 2*time.Second
		},
		OnPipeline: func(p *pipeline.Pipeline) { built <- p },
	}
	go func() { op.done <- operator.Run(ctx, opts) }()
	t.Cleanup(func() { op.stop(t) })
	select {
	case op.pipeline = <-built:
	case err := <-op.done:
		t.Fatalf("the operator stopped before its pipeline was built: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the operator built no pipeline within two minutes")
	}
	return op
}

// stop ends the operator and waits for it (idempotent); a stop that hangs fails the test
// with every goroutine's stack.
func (o *runningOperator) stop(t *testing.T) {
	t.Helper()
	o.once.Do(func() {
		o.cancel()
		select {
		case err := <-o.done:
			if err != nil {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(2 * time.Minute):
			dumpGoroutines(t)
			t.Error("the operator did not stop within two minutes")
		}
	})
}
