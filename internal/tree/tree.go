// Package tree holds what every stage says of a repository's files: one file with its Git
// mode, as the local copy reads it and the layout indexes it, and the paths of a
// GitTarget's folder. It depends on nothing, so that the layout stays free of Git.
package tree

import (
	"path"
	"strings"
)

// FileMode is the kind of a tree entry.
type FileMode int

// Kinds of tree entries.
const (
	// ModeRegular is a plain file.
	ModeRegular FileMode = iota
	// ModeExecutable is a plain file with the executable bit.
	ModeExecutable
	// ModeSymlink is a symbolic link.
	ModeSymlink
	// ModeSubmodule is a Git submodule (gitlink).
	ModeSubmodule
)

// File is one file of a tree. Content is empty for symlinks and submodules.
type File struct {
	// Path is relative to the folder read (the repository root, or a target's folder).
	Path    string
	Content []byte
	Mode    FileMode
}

// Folder turns a GitTarget's spec.path into its folder in the repository: clean, without
// a leading slash, "" for the root.
func Folder(specPath string) string {
	p := strings.TrimPrefix(path.Clean("/"+specPath), "/")
	if p == "." {
		return ""
	}
	return p
}

// Rel returns the repository path p relative to folder, when it lies inside it.
func Rel(folder, p string) (string, bool) {
	if folder == "" {
		return p, true
	}
	return strings.CutPrefix(p, folder+"/")
}

// Join is the repository path of rel, a path inside folder.
func Join(folder, rel string) string {
	if folder == "" {
		return rel
	}
	return folder + "/" + rel
}
