package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// reduceTimeout bounds the question to the API server behind the Reducer, so that a slow
// server delays a plan but never stalls the branch.
const reduceTimeout = 20 * time.Second

// renderOf returns what the folder makes of an object: its kustomize render when the
// folder's render produces it, else its document in the folder; nil when it has none.
func (s *branchState) renderOf(v *treeView, ts *targetState, id layout.Identity) []byte {
	if ts.index == nil {
		return nil
	}
	if ts.kust != nil {
		if obj, ok := ts.kust.Lookup(id); ok {
			return obj.Doc
		}
	}
	doc, ok, err := layout.ReadDocument(ts.index, v.read, id)
	if err != nil || !ok {
		return nil
	}
	return doc
}

// reduce returns the document an upsert writes: when the object already has a render that
// differs from the live document, the Reducer takes out the server defaults that the render
// omits (docs/sanitize.md#server-defaults-are-not-edits), so that a defaulted field is not
// taken for an edit. On any failure the live document is written as it is: a change that
// reached the API is never dropped for want of an answer.
func (s *branchState) reduce(ctx context.Context, ts *targetState, a action, render []byte) []byte {
	if s.cfg.Reducer == nil || render == nil {
		return a.doc
	}
	ctx, cancel := context.WithTimeout(ctx, reduceTimeout)
	defer cancel()
	doc, err := s.cfg.Reducer.Reduce(ctx, a.typ, render, a.doc)
	if err != nil {
		s.cfg.Log.Info("writing the live document as it is: server defaults could not be told apart",
			"object", a.id.String(), "error", fmt.Sprint(err))
		return a.doc
	}
	return doc
}
