package attribution

import "sync/atomic"

// IgnoreReason says why the accept gate dropped an audit event (not an error: the event
// simply does not name the author of a persisted change).
type IgnoreReason int

// Reasons an audit event is ignored.
const (
	IgnoredStage       IgnoreReason = iota // not ResponseComplete
	IgnoredReadOnly                        // not create/update/patch/delete/deletecollection
	IgnoredDryRun                          // ?dryRun=All
	IgnoredFailed                          // response code outside 2xx, or none
	IgnoredNoObject                        // no objectRef
	IgnoredSubresource                     // a subresource other than scale
	IgnoredResource                        // a resource type of no interest (events, leases, reviews)
	numIgnoreReasons
)

var ignoreNames = [...]string{"stage", "read_only", "dry_run", "failed", "no_object", "subresource", "resource"}

func (r IgnoreReason) String() string {
	if r >= 0 && int(r) < len(ignoreNames) {
		return ignoreNames[r]
	}
	return "unknown"
}

// IgnoreReasons lists every IgnoreReason, for metrics wiring.
func IgnoreReasons() []IgnoreReason {
	out := make([]IgnoreReason, numIgnoreReasons)
	for i := range out {
		out[i] = IgnoreReason(i)
	}
	return out
}

// RefuseReason says why the webhook refused a whole request: no fact of it is kept.
type RefuseReason int

// Reasons a request is refused.
const (
	RefusedBadJSON        RefuseReason = iota // 400: not JSON, or not an audit.k8s.io/v1 EventList
	RefusedTooLarge                           // 413: body above the limit
	RefusedBadClientCert                      // TLS handshake: no client certificate, or not signed by the CA
	RefusedMethod                             // 405: not POST
	RefusedNameNotAllowed                     // TLS handshake: a valid certificate whose name is not in --audit-allowed-names
	numRefuseReasons
)

var refuseNames = [...]string{"bad_json", "too_large", "bad_client_cert", "method", "name_not_allowed"}

func (r RefuseReason) String() string {
	if r >= 0 && int(r) < len(refuseNames) {
		return refuseNames[r]
	}
	return "unknown"
}

// RefuseReasons lists every RefuseReason, for metrics wiring.
func RefuseReasons() []RefuseReason {
	out := make([]RefuseReason, numRefuseReasons)
	for i := range out {
		out[i] = RefuseReason(i)
	}
	return out
}

// Counters counts what the webhook and the index did. All methods are safe for concurrent
// use; the zero value is ready. Metrics wiring reads them (or wraps them) later.
type Counters struct {
	accepted atomic.Int64
	evicted  atomic.Int64
	expired  atomic.Int64
	ignored  [numIgnoreReasons]atomic.Int64
	refused  [numRefuseReasons]atomic.Int64
	resolved [numTiers]atomic.Int64
}

// Accepted is the number of audit events that became facts.
func (c *Counters) Accepted() int64 { return c.accepted.Load() }

// Evicted is the number of facts dropped because the index was full (oldest first).
func (c *Counters) Evicted() int64 { return c.evicted.Load() }

// Expired is the number of facts dropped because they outlived the TTL.
func (c *Counters) Expired() int64 { return c.expired.Load() }

// Ignored is the number of audit events the accept gate dropped for the reason.
func (c *Counters) Ignored(r IgnoreReason) int64 {
	if r < 0 || r >= numIgnoreReasons {
		return 0
	}
	return c.ignored[r].Load()
}

// Refused is the number of requests refused for the reason.
func (c *Counters) Refused(r RefuseReason) int64 {
	if r < 0 || r >= numRefuseReasons {
		return 0
	}
	return c.refused[r].Load()
}

// Resolved is the number of Resolve calls answered at the tier.
func (c *Counters) Resolved(t Tier) int64 {
	if t < 0 || t >= numTiers {
		return 0
	}
	return c.resolved[t].Load()
}

func (c *Counters) ignore(r IgnoreReason) { c.ignored[r].Add(1) }
func (c *Counters) refuse(r RefuseReason) { c.refused[r].Add(1) }
func (c *Counters) resolve(t Tier)        { c.resolved[t].Add(1) }
