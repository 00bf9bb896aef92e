package applier

// Reason says why an apply did not happen; a trigger's condition carries it.
type Reason string

// Reasons of an *Error.
const (
	// ReasonNotFound: the Kustomization or its GitRepository does not exist.
	ReasonNotFound Reason = "NotFound"
	// ReasonSuspended: the Kustomization or its GitRepository is suspended.
	ReasonSuspended Reason = "Suspended"
	// ReasonMisconfigured: the source is not a GitRepository, or follows another branch.
	ReasonMisconfigured Reason = "Misconfigured"
	// ReasonFailed: Flux handled the request and reports Ready=False (a fetch or an apply
	// failed); the message is Flux's.
	ReasonFailed Reason = "Failed"
	// ReasonTimedOut: Flux did not handle the request in time.
	ReasonTimedOut Reason = "TimedOut"
	// ReasonOtherRevision: Flux applied another commit than the one asked for (the branch
	// moved on meanwhile).
	ReasonOtherRevision Reason = "OtherRevision"
	// ReasonUnreachable: the API server did not answer a read or a patch.
	ReasonUnreachable Reason = "Unreachable"
)

// Error is an apply that did not happen, with the object concerned and what to do.
type Error struct {
	Reason  Reason
	Object  string
	Message string
}

func (e *Error) Error() string { return e.Object + ": " + e.Message }
