package worker

import (
	"errors"
	"fmt"
	"path"

	"github.com/gitops-reverser/gitops-reverser/internal/bounds"
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// A target folder that holds a kustomization is written through its render
// (docs/kustomize.md): each live object goes through kustomize.SourceForm, and the batch is
// rendered again before it is committed. The plan's kustomize view (folderPlan.kust) is
// loaded with the index and dropped after the plan.

// repoFiles reads the repository at one commit for the kustomize package; the folder's own
// files, read already for the index, are served from memory.
type repoFiles struct {
	repo   *gitrepo.Repo
	commit string
	folder map[string][]byte // repository path -> content
}

// ReadFile bounds every file kustomize reads, whatever its name (a kustomization may list
// bomb.txt as a resource), before kustomize parses it; the folder's YAML files were bounded
// when the folder was read (checkYAML).
func (r repoFiles) ReadFile(p string) ([]byte, bool, error) {
	content, inFolder := r.folder[p]
	ok, err := inFolder, error(nil)
	if !inFolder {
		content, ok, err = r.repo.ReadFile(r.commit, p)
	}
	if err == nil && ok && !(inFolder && layout.ReadsAsYAML(p)) {
		err = bounds.CheckYAML(p, content)
	}
	if err != nil {
		return nil, false, err
	}
	return content, ok, nil
}

// loadKustomize reads the folder's kustomizations at base. A feature the writer does not
// model refuses the folder as unsupported content (docs/kustomize.md#unsupported-features).
func (f *folder) loadKustomize(base string, files []tree.File) (*kustomize.Folder, error) {
	paths := make([]string, len(files))
	read := repoFiles{repo: f.repo, commit: base, folder: map[string][]byte{}}
	for i, file := range files {
		paths[i] = file.Path
		if file.Mode == tree.ModeRegular || file.Mode == tree.ModeExecutable {
			read.folder[path.Join(f.prefix, file.Path)] = file.Content
		}
	}
	kz, err := kustomize.Load(read, f.prefix, paths)
	var unsupported *kustomize.UnsupportedError
	if errors.As(err, &unsupported) {
		p := unsupported.Path
		if rel, ok := tree.Rel(f.prefix, p); ok {
			p = rel
		}
		return nil, &layout.UnsupportedContentError{Path: p, Reason: unsupported.Reason()}
	}
	return kz, err
}

// actRendered decides an action on an object the folder's render produces. handled is
// false when the layout decides it (an object the render does not produce).
func (f *folder) actRendered(a action) (edits []layout.FileEdit, handled bool, err error) {
	p := f.plan
	if _, rendered := p.kust.Lookup(a.id); !rendered {
		return nil, false, nil
	}
	if a.op == OpDelete {
		edits, err = f.deleteRendered(a.id)
		return edits, true, err
	}
	w, err := p.kust.SourceForm(a.id, a.doc)
	if err != nil {
		return nil, true, err
	}
	edits = w.Edits
	if w.Doc != nil {
		docEdits, err := layout.Edit(f.index, p.view.read, w.SourceID, w.Doc)
		if err != nil {
			return nil, true, err
		}
		edits = append(docEdits, edits...)
	}
	return edits, true, nil
}

// deleteRendered removes a rendered object: its source document when the folder holds it
// (then the replicas: entries that named it), else a $patch: delete in its render root.
func (f *folder) deleteRendered(id layout.Identity) ([]layout.FileEdit, error) {
	p := f.plan
	w, err := p.kust.Delete(id)
	if err != nil || !w.Delete {
		return w.Edits, err
	}
	edits, err := layout.Delete(f.index, p.view.read, w.SourceID)
	if err != nil {
		return nil, err
	}
	if err := p.kust.Apply(edits); err != nil {
		return nil, err
	}
	return append(edits, p.kust.ReleaseReplicas(id)...), nil
}

// noteRendered keeps the folder's kustomize view and the index in step with an action's
// edits, and records what the action expects the render to become.
func (f *folder) noteRendered(a action, edits []layout.FileEdit) error {
	p := f.plan
	if p.kust == nil {
		return nil
	}
	if _, expected := p.expect[a.id]; len(edits) == 0 && !expected {
		return nil // nothing to write and nothing promised for it yet
	}
	if err := p.kust.Apply(edits); err != nil {
		return err
	}
	for _, ctx := range p.kust.ContextFiles() {
		f.index.MarkContext(ctx)
	}
	if p.expect == nil {
		p.expect = map[layout.Identity][]byte{}
	}
	if a.op == OpDelete {
		p.expect[a.id] = nil
	} else {
		p.expect[a.id] = a.doc
	}
	return nil
}

// verify renders the folder with the plan's edits (docs/kustomize.md#verification-render).
func (f *folder) verify() error {
	p := f.plan
	if p == nil || p.kust == nil || len(p.expect) == 0 {
		return nil
	}
	return p.kust.Verify(p.expect)
}

// writeRefusal is a batch the writer refused as a whole: nothing of it is written.
type writeRefusal struct {
	target string
	err    error
	// kept is set when only single objects were refused: their changes are kept for a
	// retry (targetState.retry) and the batch is done; otherwise the batch is held.
	kept bool
}

func (e *writeRefusal) Error() string {
	return fmt.Sprintf("GitTarget %s: nothing of the batch was written: %v", e.target, e.err)
}

func (e *writeRefusal) Unwrap() error { return e.err }

// refusalCode is the metrics reason of a refused write.
func refusalCode(err error) string {
	var r *kustomize.RefusalError
	if errors.As(err, &r) {
		return r.Code
	}
	return "object"
}
