package worker

import (
	"math"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
)

// branchState is everything the worker knows about its branch. Only the loop goroutine
// touches it; other goroutines send messages. Any future per-branch state (such as the
// bookkeeping of triggered Flux or Argo CD applies) belongs here too.
type branchState struct {
	cfg      Config
	repo     *gitrepo.Repo
	messages *messages
	signer   *gitrepo.CommitSigner // nil when commits are not signed
	// worker is the worker's number in the journal's inbox marks.
	worker uint64

	// ready is set once the remote branch has been fetched: nothing is planned before.
	ready bool
	// remoteTip is the remote branch as last seen ("" when it does not exist yet).
	remoteTip string
	// localTip is remoteTip plus the commits of the pending writes.
	localTip string

	targets map[string]*targetState
	// reported is each target's state as last told to cfg.Changes (reportedState).
	reported map[string]reportedState
	// seq counts decides, to order pending writes and kept refused changes.
	seq uint64

	// window is the one open commit window, or nil.
	window *window
	// closed holds closed windows and snapshots waiting to be planned, oldest first.
	closed []*batch
	// pending holds decided writes committed locally, oldest first.
	pending []*pendingWrite
	// awaiting holds batches of targets not (yet) set on this worker, oldest first: a
	// replaced worker receives events before every target has been handed to it again.
	// They are planned when their target is set, and dropped beyond maxAwaiting.
	awaiting []*batch

	// lastPush is when the last push succeeded (for the cooldown).
	lastPush time.Time
	// retryAt is when a failed fetch or push may be tried again; failures counts them.
	retryAt  time.Time
	failures int
	failWait wait.Backoff // the waits between failures, from the first
	lastErr  error
	pushes   int
	// recheckAt is when a refused folder is looked at again (parked batches, unapplied
	// writes); rechecks counts the looks. A refused folder is not a failure of the branch:
	// it delays nothing but its own target's writes.
	recheckAt   time.Time
	rechecks    int
	recheckWait wait.Backoff
	// replanHeld is set when a fetch brought a change of a held target's folder: the next
	// tick plans its held batches without fetching again.
	replanHeld bool
	// recheckCut is set when the end of a turn cut a recheck short: the next turn goes on
	// with the batches it has not reached (batch.rechecked).
	recheckCut bool

	// branchLabel names the branch in metrics (normalized URL, no credentials).
	branchLabel string
	// ledger counts the changes received and how they ended (ledger.go); openPublished is
	// when the open count was last set on its gauge.
	ledger Ledger
	// ledgerCheck is the stress build's check of the ledger after every step (ledger_check_stress.go).
	ledgerCheck   struct{ last Ledger }
	openPublished time.Time
	// marks are changes found unchanged while writes were pending: the journal forgets
	// the deletes they end once nothing is pending (journal_queue.go).
	marks map[journalMark]uint64

	// pollAt is when a branch with triggered targets is fetched next; applyResults carries
	// the appliers' answers back into the loop (apply.go).
	pollAt       time.Time
	applyResults chan applyResult
}

// noteError records a failure for status; its text carries no credentials.
func (s *branchState) noteError(err error) {
	s.lastErr = err
	s.cfg.Log.Error(err, "branch worker", "branch", s.cfg.Branch)
}

// backoff schedules the next attempt after a failure: exponential from RetryMin to
// RetryMax; a permanent failure (refused credentials, unknown host key) waits the maximum
// at once, so that a wrong password never becomes a retry storm.
func (s *branchState) backoff(now time.Time, err error) {
	if s.failures == 0 {
		s.failWait = s.cfg.newBackoff()
	}
	s.failures++
	delay := s.failWait.Step()
	if remote, ok := err.(*gitrepo.RemoteError); ok && remote.Permanent() {
		delay = s.cfg.RetryMax
	}
	s.retryAt = now.Add(delay)
	s.noteError(err)
}

// scheduleRecheck sets when held changes are looked at again: exponential from RetryMin to
// RetryMax, as for failures.
func (s *branchState) scheduleRecheck(now time.Time) {
	if s.rechecks == 0 {
		s.recheckWait = s.cfg.newBackoff()
	}
	s.rechecks++
	s.recheckAt = now.Add(s.recheckWait.Step())
	s.cfg.Log.Info("held changes wait; looking again later", "branch", s.cfg.Branch, "at", s.recheckAt)
}

// newBackoff is the wait between attempts: RetryMin doubling up to RetryMax. Every retry
// of the operator (branch workers, watch streams, the catalog, the journal's store) is a
// wait.Backoff from k8s.io/apimachinery.
func (c *Config) newBackoff() wait.Backoff {
	return wait.Backoff{Duration: min(c.RetryMin, c.RetryMax), Factor: 2, Cap: c.RetryMax, Steps: math.MaxInt32}
}

func (s *branchState) recovered() {
	s.failures = 0
	s.retryAt = time.Time{}
	s.lastErr = nil
}

// nextPushAt is when pending writes may be pushed: after the cooldown and any backoff.
func (s *branchState) nextPushAt() time.Time {
	at := s.lastPush.Add(s.cfg.PushCooldown)
	if s.applyDue() {
		at = time.Time{} // an apply waits for this push: no cooldown
	}
	if s.retryAt.After(at) {
		at = s.retryAt
	}
	return at
}

// branchLabel is the metrics label of cfg's branch: its key, which holds no credentials.
func branchLabel(cfg Config) string {
	key, err := ownership.KeyFor(cfg.URL, cfg.Branch)
	if err != nil {
		return cfg.Branch
	}
	return key.String()
}
