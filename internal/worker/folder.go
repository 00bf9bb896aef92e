package worker

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gitops-reverser/gitops-reverser/internal/bounds"
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// folder is one GitTarget's folder on the local tip: the layout index of its files,
// whether it holds a kustomization, and why it is refused; and, while a plan is made on it,
// the plan's overlay of edits, its kustomize view and what it expects the render to become.
// It is the only place that applies an edit to the index or drops it: an edit goes through
// act, and a plan ends with end, which keeps the index only when it matches the new local
// tip (docs/branch-worker.md#state).
type folder struct {
	repo   *gitrepo.Repo
	prefix string // the folder in the repository; "" for the root

	// index maps identities to files at the local tip; nil means load before the next plan.
	index *layout.Index
	// kustomized remembers that the folder holds a kustomization.
	kustomized bool
	// refused is set while the folder holds content the writer cannot understand.
	refused error

	plan *folderPlan // nil between plans
}

// folderPlan is one plan on a folder at a base commit.
type folderPlan struct {
	view *treeView
	// kust is the folder's kustomize view; nil when it holds no kustomization. It follows
	// the plan's edits, so it lives only as long as the plan.
	kust *kustomize.Folder
	// expect maps the objects the plan edited through the render to their live documents
	// (nil: deleted), for the verification render.
	expect map[layout.Identity][]byte
	// broken is set when the index could not follow an edit: the plan is unusable.
	broken bool
	// ahead are documents read before the plan reached their object (renderAhead), each
	// taken by the next render of it while its file is unchanged.
	ahead map[layout.Identity]readAhead
}

// readAhead is an object's document as read from a file of the plan's view.
type readAhead struct {
	loc  layout.Location
	laid int // the view's count of edits laid on loc.Path when it was read
	doc  []byte
}

func newFolder(repo *gitrepo.Repo, specPath string) *folder {
	return &folder{repo: repo, prefix: tree.Folder(specPath)}
}

// begin starts a plan on base, the local tip, loading the index first when there is none.
// A plan in progress is dropped with its effect on the index: begin again plans afresh.
func (f *folder) begin(base string) error {
	if f.plan != nil {
		f.end(false)
	}
	var kz *kustomize.Folder
	if f.index == nil {
		ix, k, err := f.load(base)
		if err != nil {
			return err
		}
		f.index, kz = ix, k
	}
	f.plan = &folderPlan{view: newTreeView(f.repo, base, f.prefix), kust: kz}
	return nil
}

// end closes the plan. The index, moved along the plan's edits, is kept only when kept is
// set (the edits were committed, or there were none) and nothing broke it; a kustomized
// folder is loaded again with its render for every plan.
func (f *folder) end(kept bool) {
	p := f.plan
	f.plan = nil
	if p == nil {
		return
	}
	if p.broken || p.kust != nil || (!kept && len(p.view.order) > 0) {
		f.index = nil
	}
}

// invalidate drops the index: the next plan loads it from its base.
func (f *folder) invalidate() { f.index = nil }

// load reads the folder at base into an index, with its kustomize view when it holds a
// kustomization. Content the writer cannot understand refuses the folder.
func (f *folder) load(base string) (*layout.Index, *kustomize.Folder, error) {
	files, err := f.repo.ReadFiles(base, f.prefix)
	if err == nil {
		err = checkYAML(f.prefix, files)
	}
	if err != nil {
		return nil, nil, f.refuseOverBound(err)
	}
	kz, err := f.loadKustomize(base, files)
	if err != nil {
		err = f.refuseOverBound(err)
		if _, unsupported := err.(*layout.UnsupportedContentError); unsupported {
			f.refused = err
		}
		return nil, nil, err
	}
	var context []string
	if kz != nil {
		context = kz.ContextFiles()
	}
	ix, err := layout.BuildIndexWithContext(files, context)
	if err != nil {
		f.refused = err
		return nil, nil, err
	}
	if kz != nil {
		ix.SetRenderRoots(kz.Roots())
	}
	f.refused, f.kustomized = nil, kz != nil
	return ix, kz, nil
}

// checkYAML refuses a YAML file of the folder whose aliases expand beyond the bound, before
// any parser expands them (docs/security.md#bounded-reading).
func checkYAML(prefix string, files []tree.File) error {
	for _, file := range files {
		if layout.ReadsAsYAML(file.Path) {
			if err := bounds.CheckYAML(tree.Join(prefix, file.Path), file.Content); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuseOverBound turns a file over a bound (its size, its aliases), in the folder or in a
// base it reads, into the folder's refusal naming it; other errors are returned as they are.
func (f *folder) refuseOverBound(err error) error {
	var exceeded *bounds.ExceededError
	if !errors.As(err, &exceeded) {
		return err
	}
	p := exceeded.Path
	if rel, ok := tree.Rel(f.prefix, p); ok {
		p = rel
	}
	f.refused = &layout.UnsupportedContentError{Path: p, Reason: fmt.Sprintf("%s exceeds the bound of %d: the writer does not read it (docs/security.md#bounded-reading)",
		strings.TrimPrefix(exceeded.Bound, "its "), exceeded.Limit)}
	return f.refused
}

// act runs one action of the plan through the layout (or the render, for an object the
// folder's kustomization produces) and lays its edits over the plan's view.
func (f *folder) act(a action, placement layout.Placement) ([]layout.FileEdit, error) {
	p := f.plan
	if p == nil || p.broken {
		return nil, fmt.Errorf("%s %s: the folder index was dropped by an earlier failure in this plan", a.op, a.id)
	}
	var edits []layout.FileEdit
	var err error
	handled := false
	if p.kust != nil {
		edits, handled, err = f.actRendered(a)
	}
	switch {
	case handled:
	case a.op == OpDelete:
		edits, err = layout.Delete(f.index, p.view.read, a.id)
	case a.prepared != nil:
		edits, err = layout.UpsertPrepared(f.index, p.view.read, a.typ, a.prepared, placement)
	default:
		edits, err = layout.Upsert(f.index, p.view.read, a.typ, a.doc, placement)
	}
	if err == nil {
		err = f.noteRendered(a, edits)
	}
	if err != nil {
		f.refuseUnreadable(err)
		return nil, fmt.Errorf("%s %s: %w", a.op, a.id, err)
	}
	if err := f.lay(edits, true); err != nil {
		p.broken = true
		return nil, fmt.Errorf("%s %s: %w", a.op, a.id, err)
	}
	return edits, nil
}

// refuseUnreadable refuses the folder when an edit read one of its files in full and could
// not understand it. The load indexed that file from its identity lines alone
// (docs/layout.md#reading-a-folder); read in full, it refuses the folder as a load that
// parsed it would have, and the plan ends.
func (f *folder) refuseUnreadable(err error) {
	var unsupported *layout.UnsupportedContentError
	if errors.As(err, &unsupported) {
		f.refused = unsupported
		f.plan.broken = true
	}
}

// broken reports a plan the index could not follow.
func (f *folder) broken() bool { return f.plan != nil && f.plan.broken }

// lay puts edits over the plan's view; indexed edits move the index along.
func (f *folder) lay(edits []layout.FileEdit, indexed bool) error {
	v := f.plan.view
	for _, e := range edits {
		v.set(e.Path, e.Content)
		if indexed {
			if err := f.index.Update(e.Path, e.Content); err != nil {
				return err
			}
		}
	}
	return nil
}

// render returns what the folder makes of an object in the plan: its kustomize render
// when the folder's render produces it, else its document; nil when it has none.
func (f *folder) render(id layout.Identity) []byte {
	p := f.plan
	if p == nil || f.index == nil {
		return nil
	}
	if p.kust != nil {
		if obj, ok := p.kust.Lookup(id); ok {
			return obj.Doc
		}
	}
	if r, ok := p.ahead[id]; ok {
		delete(p.ahead, id)
		if loc, found := f.index.Lookup(id); found && loc == r.loc && p.view.laid[loc.Path] == r.laid {
			return r.doc
		}
	}
	doc, ok, err := layout.ReadDocument(f.index, p.view.read, id)
	if err != nil || !ok {
		return nil
	}
	return doc
}

// renderAhead is render for an object the plan reaches later in its chunk: a document read
// from a file is kept for that render, which takes it while the file is unchanged (a burst's
// plan read each document twice).
func (f *folder) renderAhead(id layout.Identity) []byte {
	doc := f.render(id)
	p := f.plan
	if doc == nil || p == nil || p.kust != nil {
		return doc
	}
	if loc, found := f.index.Lookup(id); found {
		if p.ahead == nil {
			p.ahead = map[layout.Identity]readAhead{}
		}
		p.ahead[id] = readAhead{loc: loc, laid: p.view.laid[loc.Path], doc: doc}
	}
	return doc
}

// sweep turns a snapshot into upserts of every listed object (made a chunk at a time as
// the plan takes them: a first mirror's would be 100,000 actions at once beside the plan's
// own) and, where the prune mode allows, deletes of the scope's documents whose object is
// gone; retained counts the documents the mode keeps.
func (f *folder) sweep(snap *Snapshot, prune PruneMode) (upserts actionSource, deletes []action, retained int) {
	listed := make(map[layout.Identity]bool, len(snap.Objects))
	for _, obj := range snap.Objects {
		listed[obj.ID] = true
	}
	known := f.index.Identities()
	if f.plan.kust != nil {
		known = f.plan.kust.Identities(known)
	}
	for _, id := range known {
		if !snap.Scope.contains(id) || listed[id] {
			continue
		}
		if !prune.deletesOnSweep() {
			retained++
			continue
		}
		deletes = append(deletes, action{op: OpDelete, typ: snap.Type, id: id, sweep: true, seq: snap.seq})
	}
	return upsertsOf(snap), deletes, retained
}

// actionSource hands out a plan's actions, at most n at a time; none once all were.
type actionSource func(n int) []action

// sliceSource hands out actions.
func sliceSource(actions []action) actionSource {
	return func(n int) []action {
		chunk := actions[:min(n, len(actions))]
		actions = actions[len(chunk):]
		return chunk
	}
}

// upsertsOf hands out an upsert of each object snap lists with a document. An object listed
// without one exists but is unreadable: its document stays as it is.
func upsertsOf(snap *Snapshot) actionSource {
	objs := snap.Objects
	return func(n int) []action {
		chunk := make([]action, 0, min(n, len(objs)))
		for len(objs) > 0 && len(chunk) < n {
			obj := objs[0]
			objs = objs[1:]
			if obj.Doc != nil {
				chunk = append(chunk, action{op: OpUpsert, typ: snap.Type, id: obj.ID, doc: obj.Doc, shape: obj.Shape, changes: 1, seq: snap.seq})
			}
		}
		return chunk
	}
}

// bootstrap adds the folder's README.md when this plan creates the folder (a folder that
// already holds files is the user's: nothing is added beside them), and .sops.yaml with
// sopsRules, when set, when it is missing (docs/layout.md#the-first-write).
func (f *folder) bootstrap(sopsRules []byte) error {
	read := f.plan.view.read
	existed, err := f.repo.HasFolder(f.plan.view.base, f.prefix)
	if err != nil {
		return err
	}
	var edits []layout.FileEdit
	if !existed {
		if edits, err = layout.Bootstrap(read); err != nil {
			return err
		}
	}
	if sopsRules != nil {
		_, ok, err := read(sopsConfigName)
		if err != nil {
			return err
		}
		if !ok {
			edits = append(edits, layout.FileEdit{Path: sopsConfigName, Content: sopsRules})
		}
	}
	return f.lay(edits, false)
}

// sopsConfigName is the creation-rules file of SOPS, at the folder's root.
const sopsConfigName = ".sops.yaml"

// changes returns the plan's edits as repository changes.
func (f *folder) changes() []gitrepo.Change { return f.plan.view.changes() }

// path is the repository path of a file of the folder.
func (f *folder) path(rel string) string { return tree.Join(f.prefix, rel) }

// reindex moves the index to a newly fetched tip, following the changed repository paths
// below the folder; what it cannot follow drops the index, loaded again before the next
// plan.
func (f *folder) reindex(tip string, changed []string) {
	if f.index == nil {
		return
	}
	if f.kustomized {
		f.invalidate() // a base outside the folder may have changed too: load it all again
		return
	}
	for _, p := range changed {
		if layout.IsKustomizationFile(p) {
			f.invalidate() // the folder became a kustomization: load it with its render
			return
		}
	}
	for _, p := range changed {
		rel, ok := tree.Rel(f.prefix, p)
		if !ok {
			continue
		}
		file, exists, err := f.repo.ReadEntry(tip, p)
		if err != nil || (exists && file.Mode != tree.ModeRegular && file.Mode != tree.ModeExecutable) {
			f.invalidate() // a symlink or submodule: the full load refuses it with a reason
			return
		}
		content := file.Content
		if !exists {
			content = nil
		} else if layout.ReadsAsYAML(rel) {
			if err := bounds.CheckYAML(p, content); err != nil {
				f.index = nil
				f.refuseOverBound(err)
				return
			}
		}
		if err := f.index.Update(rel, content); err != nil {
			f.index, f.refused = nil, err
			return
		}
	}
}

// changedBy reports whether any changed repository path lies in the folder (for a
// kustomize folder, anywhere: a base outside it may have changed).
func (f *folder) changedBy(changed []string) bool {
	if f.kustomized {
		return len(changed) > 0
	}
	for _, p := range changed {
		if _, ok := tree.Rel(f.prefix, p); ok {
			return true
		}
	}
	return false
}
