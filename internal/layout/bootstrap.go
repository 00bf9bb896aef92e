package layout

import "fmt"

// readmeName is the file Bootstrap adds to explain the folder.
const readmeName = "README.md"

// readmeText is the content of the bootstrapped README.md.
const readmeText = `# Written by GitOps Reverser

The YAML files in this folder are written by GitOps Reverser. It mirrors
Kubernetes objects from a cluster into this folder: when an object changes in
the cluster, its document here changes in a new commit.

Change these objects through the Kubernetes API (kubectl, your applier, ...).
An edit made here directly is overwritten the next time the object changes in
the cluster.

## Layout

- An object that is already in this folder is edited where it is, whichever
  file holds it. Files are never moved, and the other documents of a file, the
  comments and the key order are kept.
- A new object goes to the path set by the GitTarget's spec.placement; if there
  is none, beside the folder's only kustomization file (and into its
  resources list); otherwise to {namespace}/{group}/{resource}/{name}.yaml,
  with _cluster for cluster-scoped objects and core for the core API group.
  Secrets are written encrypted, to files ending in .sops.yaml.
- When the last object of a file is deleted, the file is deleted too.

Only YAML files of Kubernetes objects, kustomization files and a few plain
files (*.md, LICENSE, COPYING, NOTICE, .gitignore, .gitattributes, .gitkeep,
.sops.yaml) may live here. Anything else stops GitOps Reverser from writing to
this folder until it is removed.
`

// Bootstrap returns the files the first write adds when missing: README.md
// explaining that this folder is written by GitOps Reverser. Existing files are
// kept; the result is nil when nothing is missing.
func Bootstrap(read ReadFile) ([]FileEdit, error) {
	_, ok, err := read(readmeName)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", readmeName, err)
	}
	if ok {
		return nil, nil
	}
	return []FileEdit{{Path: readmeName, Content: []byte(readmeText)}}, nil
}
