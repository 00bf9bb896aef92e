package kustomize

import "fmt"

// Refusal codes. Feature refusals (the folder as a whole) use CodeUnsupported; the others
// refuse one write and leave the folder usable.
const (
	// CodeUnsupported: the folder uses a kustomize feature the writer does not model
	// (docs/kustomize.md#unsupported-features).
	CodeUnsupported = "unsupported-kustomize"
	// CodeRenderRefused: the batch would not render equal to live, or would move another
	// rendered object (docs/kustomize.md#verification-render).
	CodeRenderRefused = "kustomize-render-refused"
	// CodeUnplaceable: the build and the user both rewrote a list whose elements have no
	// unique name (docs/kustomize.md#unplaceable-edits).
	CodeUnplaceable = "unplaceable-edit"
	// CodeEscapesScope: the edit would have to change a file outside the target folder.
	CodeEscapesScope = "write-escapes-scope"
	// CodeFanIn: the edit would change a file that more than one render root reads.
	CodeFanIn = "write-fan-in"
)

// UnsupportedError refuses a folder whose kustomization the writer cannot edit safely. It
// is reported before anything is written.
type UnsupportedError struct {
	// Path is the kustomization (or resource) file, relative to the repository root.
	Path string
	// Feature names what is not supported, e.g. "namePrefix" or "remote base".
	Feature string
	// Hint says what to do about it.
	Hint string
}

func (e *UnsupportedError) Error() string {
	return e.Path + ": " + e.Reason()
}

// Reason says what is not supported and what to do, without the path.
func (e *UnsupportedError) Reason() string {
	msg := fmt.Sprintf("kustomize feature %q is not supported", e.Feature)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// RefusalError refuses one write: nothing of its batch is written.
type RefusalError struct {
	// Code is one of the Code* constants.
	Code string
	// Object names the object, Field the field path where the problem shows ("" if none).
	Object string
	Field  string
	// Detail says what happened and what to do.
	Detail string
}

func (e *RefusalError) Error() string {
	msg := e.Code + ": " + e.Object
	if e.Field != "" {
		msg += " field " + e.Field
	}
	return msg + ": " + e.Detail
}

func refuse(code, object, field, format string, args ...any) *RefusalError {
	return &RefusalError{Code: code, Object: object, Field: field, Detail: fmt.Sprintf(format, args...)}
}
