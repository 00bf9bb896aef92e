package layout

import (
	"path"
	"strings"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// FileEdit is a change to one file of the folder. Content nil means delete the file.
type FileEdit struct {
	// Path is relative to the target folder.
	Path string
	// Content is the new content of the file; nil deletes it.
	Content []byte
}

// ReadFile returns the current content of a file of the folder (ok=false when absent).
type ReadFile func(path string) (content []byte, ok bool, err error)

// fileClass says how the index treats a file, judged by its name.
type fileClass int

const (
	classForeign       fileClass = iota // not understood: refuses the folder
	classIgnored                        // accepted and not indexed (README.md, LICENSE, .sops.yaml, ...)
	classKustomization                  // a kustomize build file
	classObjects                        // a YAML file of Kubernetes objects
)

// sopsConfigName is the file name of the SOPS configuration.
const sopsConfigName = ".sops.yaml"

// KustomizationNames are the file names kustomize reads as a folder's build file, in the
// order it looks for them.
var KustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// ReadsAsYAML reports whether the layout or kustomize parse the file at path p as YAML: a
// file of objects or a kustomization.
func ReadsAsYAML(p string) bool {
	c := classify(p)
	return c == classObjects || c == classKustomization
}

// IsKustomizationFile reports whether kustomize reads the file at path p (any depth) as a
// build file.
func IsKustomizationFile(p string) bool { return isKustomizationName(path.Base(p)) }

// isKustomizationName reports whether kustomize reads a file of this name as a build file.
func isKustomizationName(base string) bool {
	for _, n := range KustomizationNames {
		if base == n {
			return true
		}
	}
	return false
}

func isYAMLName(base string) bool {
	ext := strings.ToLower(path.Ext(base))
	return ext == ".yaml" || ext == ".yml"
}

// classify judges a file by its relative path.
func classify(p string) fileClass {
	base := path.Base(p)
	lower := strings.ToLower(base)
	switch {
	case isKustomizationName(base):
		return classKustomization
	case base == sopsConfigName:
		return classIgnored
	case isYAMLName(base):
		return classObjects
	case strings.HasSuffix(lower, ".md"),
		strings.HasPrefix(lower, "license"),
		strings.HasPrefix(lower, "copying"),
		strings.HasPrefix(lower, "notice"),
		base == ".gitignore", base == ".gitattributes", base == ".gitkeep":
		return classIgnored
	}
	return classForeign
}

// validRelPath reports whether p is a clean, slash-separated path inside the folder.
func validRelPath(p string) bool {
	if p == "" || p == "." || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	if path.Clean(p) != p {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || tree.GitDir(part) {
			return false
		}
	}
	return true
}
