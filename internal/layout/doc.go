// Package layout decides where Kubernetes object documents live inside one
// target folder of a Git tree and how they are edited there.
//
// The package is pure: it works on the bytes it is given and returns the file
// edits to apply. Every path it accepts or returns is relative to the target
// folder, slash-separated and clean.
//
// The rules, in short (docs/layout.md has them in full):
//   - An existing document is found by identity wherever it lives and edited
//     in place; a file is never moved (match-first).
//   - A new document goes to the first placement that applies: a placement
//     template, beside the folder's single kustomization, or the canonical path
//     {namespace|_cluster}/{group|core}/{resource}/{name}.yaml.
//   - Editing one document of a multi-document file leaves the other documents
//     byte-identical, and keeps comments and key order in the edited one.
//   - Deleting the last document of a file deletes the file and its entry in
//     every kustomization of the folder that lists it.
//   - Content the package cannot understand refuses the folder
//     (UnsupportedContentError) instead of being overwritten.
package layout
