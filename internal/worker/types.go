package worker

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
)

// Author is who made a change: the Kubernetes actor with attribution, else the committer.
type Author struct {
	Name, Email string
}

// Op is what an event asks for.
type Op int

const (
	// OpUpsert writes the object's document.
	OpUpsert Op = iota
	// OpDelete removes the object's document (subject to the prune mode).
	OpDelete
)

func (o Op) String() string {
	if o == OpDelete {
		return "delete"
	}
	return "upsert"
}

// Event is one desired-state change of one object for one GitTarget.
type Event struct {
	// Target is the GitTarget, as "namespace/name".
	Target string
	Author Author
	Op     Op
	Type   layout.TypeInfo
	// ID names the object; for an upsert it must match Doc.
	ID layout.Identity
	// Doc is the sanitized YAML document (upserts only).
	Doc []byte
	// Shape is the shape of the object's content (sanitize.ShapeOf; zero: unknown), handed
	// back to the Reducer with Doc.
	Shape sanitize.Shape
	// Trailers are lines the commit message ends with (the audit event behind the change,
	// "Audit-ID: …"); repeated lines appear once.
	Trailers []string
	// Managers are the field managers that wrote the object last (watch.Object.Managers).
	Managers []string
	// Applier names the GitOps applier object that applied the object (ApplierOf), "" for
	// none.
	Applier string

	// changes is the event's weight in the ledger (ledger.go): 1 when received, what it
	// stands for when a refused change is kept and queued again.
	changes int
	// seq orders the event with the journal's deletes of its object (journal.go).
	seq uint64
}

// Scope is the part of a target a snapshot covers: one type, in one namespace or in all
// namespaces (Namespace "").
type Scope struct {
	Group, Kind, Namespace string
}

// contains reports whether a document identity lies in the scope.
func (s Scope) contains(id layout.Identity) bool {
	return id.Group == s.Group && id.Kind == s.Kind && (s.Namespace == "" || s.Namespace == id.Namespace)
}

// Snapshot is a complete, consistent listing of a scope: every object in it is written and
// documents of the scope whose object is not listed are swept (prune mode permitting).
type Snapshot struct {
	Target  string
	Scope   Scope
	Type    layout.TypeInfo
	Objects []SnapshotObject
	// TakenAt is when the listing reached the router (zero: unknown). A snapshot taken while
	// Git was ahead of the cluster is stale even when it arrives after the apply
	// (apply_stale.go).
	TakenAt time.Time

	// seq orders the snapshot with the journal's deletes (journal.go).
	seq uint64
}

// SnapshotObject is one object of a snapshot. A nil Doc lists an object that exists but
// could not be read: its document is neither written nor swept.
type SnapshotObject struct {
	ID  layout.Identity
	Doc []byte
	// Shape is the shape of the object's content (Event.Shape).
	Shape sanitize.Shape
	// Applier names the GitOps applier object that applied it (ApplierOf), "" for none.
	Applier string
}

// PruneMode says which deletions reach Git (mirrors the API's GitTarget spec.prune.mode).
type PruneMode string

// Prune modes.
const (
	PruneNever   PruneMode = "Never"
	PruneOnEvent PruneMode = "OnEvent"
	PruneAlways  PruneMode = "Always"
)

// deletesOnEvent reports whether a DELETE event removes a document.
func (p PruneMode) deletesOnEvent() bool { return p == PruneOnEvent || p == PruneAlways || p == "" }

// deletesOnSweep reports whether a snapshot sweep removes a document.
func (p PruneMode) deletesOnSweep() bool { return p == PruneAlways }

// TargetConfig is what the worker needs to know of one GitTarget writing its branch.
type TargetConfig struct {
	// Name is "namespace/name".
	Name      string
	Path      string // spec.path; "." is the repository root
	Prune     PruneMode
	Placement layout.Placement
	// SOPSRules, when set, is the .sops.yaml the first write adds to the folder (its
	// encryption is on); an existing .sops.yaml is kept.
	SOPSRules []byte
	// Apply, when set, names the applier object that applies the folder (the GitTarget's
	// applyTriggerRef): the worker asks it to apply the branch (docs/two-way.md).
	Apply *ApplyTrigger
	// Reapply (onRefusal: Reapply, with Apply): a change the render refuses for its object
	// is not kept for a retry; the applier is asked to put Git's state back on the cluster.
	Reapply bool
	// KeepDefaults (write.defaults: Keep): the document of a new object is the live one as
	// it is, not the minimal one (docs/sanitize.md#minimal-documents).
	KeepDefaults bool
}

// Config configures one branch worker.
type Config struct {
	URL         string
	Branch      string
	Credentials gitrepo.Credentials
	// AllowedBranches are the GitProvider's globs; the worker refuses to start otherwise.
	AllowedBranches []string
	Committer       Author
	// SigningKey, when set, is an OpenSSH private key that signs every commit
	// (docs/branch-worker.md#commits).
	SigningKey []byte
	// Templates of commit messages (Go text/template); empty means the defaults.
	MessageTemplate, ResyncTemplate string

	// CommitWindow is the silence that closes a window; 0 commits every event alone.
	CommitWindow time.Duration
	// MaxWindowAge closes a window that keeps receiving events (default 3×CommitWindow, at
	// least 2s: docs/branch-worker.md#commit-windows).
	MaxWindowAge time.Duration
	// MaxWindowBytes closes a window whose documents reach this size (default 8 MiB).
	MaxWindowBytes int
	// PushCooldown is the least time between two successful pushes (default 0: a push starts
	// as soon as something is to be pushed and no push is in flight; failures back off
	// between RetryMin and RetryMax instead).
	PushCooldown time.Duration
	// RetryMin and RetryMax bound the backoff after a failed fetch or push (defaults 1s, 2m).
	RetryMin, RetryMax time.Duration
	// RemoteTimeout bounds one fetch or push (default 2m).
	RemoteTimeout time.Duration
	// ReplayAttempts is how many times a push is rebuilt on a moved remote before backing off (default 3).
	ReplayAttempts int

	// Reducer, when set, takes out of a live document the server defaults that the
	// document already in Git omits (docs/sanitize.md#server-defaults-are-not-edits). Nil
	// writes live documents as they are.
	Reducer Reducer
	// RenderedDocs says that every upsert's document is the sanitizer's
	// (sanitize.Document) or sealed, as the pipeline's are: a first mirror then writes a new
	// object's document without parsing it again (layout.PrepareRendered). Unset, every
	// document is parsed and rendered, whatever its form.
	RenderedDocs bool

	// Journal keeps the deletes the worker receives until they are in Git, across worker
	// replacement and restart (docs/branch-worker.md#restart); nil keeps none. Until it is
	// loaded the worker plans nothing.
	Journal *Journal `json:"-"`

	// Metrics records what the worker does; nil records nothing.
	Metrics *metrics.Metrics
	// Progress, when set, is told how far each target's first mirror has come
	// (docs/controllers.md#progress).
	Progress *ProgressBoard `json:"-"`
	// ProgressEvery is how often at most a first mirror's counts are put on the board while
	// it is planned (default 1s).
	ProgressEvery time.Duration
	// Changes, when set, is told the targets whose reported state changed, so that their
	// conditions follow within seconds (docs/controllers.md#status-follows-the-worker).
	Changes *Changes `json:"-"`

	// Applier applies commits for the targets that name an applier (TargetConfig.Apply);
	// nil applies nothing. ApplyPoll is how often such a branch is fetched to find Git-side
	// pushes (DefaultApplyPoll when 0).
	Applier   Applier `json:"-"`
	ApplyPoll time.Duration

	// MaxFileBytes bounds every file the worker reads from the repository (0: 4 MiB); a
	// folder holding a larger one is refused by name (docs/security.md#bounded-reading).
	MaxFileBytes int64

	// Dir holds the local copy of the repository.
	Dir string
	Log logr.Logger
}

// Reducer tells the documents to write from what the API server fills in by itself. Reduce
// compares a live document with the source document of the same object in Git and returns
// the live one without the values the API server would have defaulted from the source
// (docs/sanitize.md#server-defaults-are-not-edits); Minimal returns, for an object with no
// document in Git, the smallest document the server turns into the live object
// (docs/sanitize.md#minimal-documents), told the shape of its content when it is known.
// Both return live unchanged when they cannot tell.
type Reducer interface {
	Reduce(ctx context.Context, typ layout.TypeInfo, source, live []byte) ([]byte, error)
	Minimal(ctx context.Context, typ layout.TypeInfo, live []byte, shape sanitize.Shape) ([]byte, error)
}

func (c *Config) applyDefaults() {
	if c.ProgressEvery == 0 {
		c.ProgressEvery = time.Second
	}
	if c.MaxWindowAge == 0 {
		c.MaxWindowAge = max(maxWindowAgeFactor*c.CommitWindow, minMaxWindowAge)
	}
	if c.MaxWindowBytes == 0 {
		c.MaxWindowBytes = 8 << 20
	}
	if c.ApplyPoll <= 0 {
		c.ApplyPoll = DefaultApplyPoll
	}
	if c.RetryMin == 0 {
		c.RetryMin = time.Second
	}
	if c.RetryMax == 0 {
		c.RetryMax = 2 * time.Minute
	}
	if c.RemoteTimeout == 0 {
		c.RemoteTimeout = 2 * time.Minute
	}
	if c.ReplayAttempts == 0 {
		c.ReplayAttempts = 3
	}
	if c.Committer.Name == "" {
		c.Committer = Author{Name: "GitOps Reverser", Email: "noreply@gitops-reverser.io"}
	}
}

// SaveResult answers a Save (CommitRequest).
type SaveResult struct {
	// SHA is the commit holding the saved window as it exists on the remote after any
	// replay; with NothingCommitted, the branch tip.
	SHA string
	// NothingCommitted is set when no commit was made for the request: the target had no
	// open window, or its changes changed nothing.
	NothingCommitted bool
	// Author is the author of the commit holding the saved changes; ByCommitter is set when
	// that is the committer (a snapshot's commit, or no attribution).
	Author      Author
	ByCommitter bool
	// Held, when set, says why the saved changes cannot be written now: they are kept and
	// tried again (docs/branch-worker.md#held-changes); ask again later.
	Held string
	Err  error
}

// Status is a snapshot of the worker's state for status reporting.
type Status struct {
	Ready        bool   // the local copy has been fetched
	RemoteTip    string // last known tip of the remote branch
	PendingWrite int    // writes committed locally, not yet on the remote
	LastError    string // last failure, credentials redacted; "" after a success
	Refused      map[string]string
	// Boundary holds, per target, the last write the render refused (a verification render,
	// an unplaceable edit, fan-in or a file outside the folder: docs/kustomize.md); it is
	// cleared when a later write of the target lands.
	Boundary map[string]string
	// Held holds, per target, why its changes wait for a recheck when its folder is not
	// refused (docs/branch-worker.md#held-changes): they are kept, not dropped.
	Held map[string]string
	// Fidelity is each target's RenderMatchesLive (docs/kustomize.md#render-fidelity).
	Fidelity map[string]Fidelity
	Retained map[string]int // target -> documents kept by suppressed sweeps
	Pushes   int            // successful pushes
	LastPush time.Time      // when the last push succeeded
	// SigningPublicKey is the commit signing key in authorized_keys form, when signing.
	SigningPublicKey string
	// Failures counts consecutive failed fetches or pushes; RetryAt is the next attempt.
	Failures int
	RetryAt  time.Time
	// NextPushAt is the earliest time pending writes may be pushed (cooldown, backoff).
	NextPushAt time.Time
	// RecheckAt is when held changes are looked at again: the recheck's schedule, not before
	// the branch's retry (zero when nothing waits).
	RecheckAt time.Time
	// Ledger counts the changes received and how they ended
	// (docs/branch-worker.md#the-ledger).
	Ledger Ledger
	// Applies holds, per target that names an applier, what its applies are doing
	// (docs/two-way.md).
	Applies map[string]ApplyStatus
}
