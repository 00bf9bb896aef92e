package applier

// Reason says why an apply did not happen; a trigger's condition carries it.
type Reason string

// Reasons of an *Error.
const (
	// ReasonNotFound: the Kustomization, its GitRepository or the Application does not exist.
	ReasonNotFound Reason = "NotFound"
	// ReasonSuspended: the Kustomization or its GitRepository is suspended.
	ReasonSuspended Reason = "Suspended"
	// ReasonMisconfigured: the source is not a GitRepository, or follows another branch;
	// the Application has several sources, or heals itself.
	ReasonMisconfigured Reason = "Misconfigured"
	// ReasonFailed: the applier handled the request and reports it failed (Flux: Ready=False;
	// Argo CD: the sync operation Failed or Error); the message is the applier's.
	ReasonFailed Reason = "Failed"
	// ReasonTimedOut: the applier did not handle the request in time.
	ReasonTimedOut Reason = "TimedOut"
	// ReasonOtherRevision: Flux applied another commit than the one asked for (the branch
	// moved on meanwhile).
	ReasonOtherRevision Reason = "OtherRevision"
	// ReasonOperationRunning: the Application ran another operation for the whole time an
	// apply may take (Argo CD runs one operation at a time).
	ReasonOperationRunning Reason = "OperationRunning"
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
