// Package kustomize lets the writer edit a target folder that is a kustomization.
//
// The cluster runs the render of such a folder, not its files. The package renders the
// folder in memory with the kustomize library (no plugins, no exec, no network, no remote
// bases), tells which file and which images:/replicas: entry produced each rendered
// field (by rendering a dyed copy of the folder), and turns a live object into the edit of
// the folder that makes the render equal the live object (the source form):
//
//   - where the live object and the render agree, the source keeps its bytes;
//   - where they disagree, the difference is the user's edit: it goes to the images: or
//     replicas: entry that supplies the field, else it is written through to the source
//     document.
//
// Every batch of edits is verified by rendering again: the edited objects must render
// equal to live and no other rendered object may move. The package is pure: it reads
// files through Files and returns file edits; it never writes.
package kustomize
