package layout

import "errors"

// ErrUnsafeName is returned (wrapped) when an object's name or namespace could
// make a path escape the folder or is empty.
var ErrUnsafeName = errors.New("unsafe object name")

// ErrSecretSharedFile is returned (wrapped) when placement would put a Secret
// into a file that holds other documents, or another document into a file that
// holds a Secret. Secrets always live alone in their file.
var ErrSecretSharedFile = errors.New("a Secret never shares a file with other documents")

// ErrStaleIndex is returned (wrapped) when the index does not match the files
// it is read against; the caller should rebuild the index.
var ErrStaleIndex = errors.New("index does not match the folder")

// UnsupportedContentError reports a file of the folder that the operator does
// not understand. While such a file exists nothing is written to the folder.
type UnsupportedContentError struct {
	// Path is the offending file, relative to the folder.
	Path string
	// Reason says what is wrong and what to do about it.
	Reason string
}

// Error returns "path: reason".
func (e *UnsupportedContentError) Error() string {
	return e.Path + ": " + e.Reason
}
