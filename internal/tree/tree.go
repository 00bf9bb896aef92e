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

// GitDir reports whether a path segment names the repository's own .git folder on some
// checkout: in any case (".GIT"), with trailing dots or spaces (Windows drops them), as its
// 8.3 short name ("GIT~1"), or with the code points macOS's HFS+ ignores (git's own
// is_hfs_dotgit and is_ntfs_dotgit rules). A file written under it would be Git's config on
// such a checkout.
func GitDir(segment string) bool {
	var b strings.Builder
	for _, r := range segment {
		if hfsIgnored(r) {
			continue
		}
		b.WriteRune(r)
	}
	s := strings.ToLower(strings.TrimRight(b.String(), ". "))
	return s == ".git" || s == "git~1"
}

// hfsIgnored reports the code points HFS+ leaves out when it compares names.
func hfsIgnored(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
