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

// reduce returns the document an upsert writes: when the object already has a document in
// the folder that differs from the live one, the Reducer takes out the server defaults
// that source omits (S4). On any failure the live document is written as it is: a change
// that reached the API is never dropped for want of an answer.
func (s *branchState) reduce(ctx context.Context, v *treeView, ts *targetState, a action) []byte {
	if s.cfg.Reducer == nil || ts.index == nil {
		return a.doc
	}
	source, ok, err := layout.ReadDocument(ts.index, v.read, a.id)
	if err != nil || !ok {
		return a.doc
	}
	ctx, cancel := context.WithTimeout(ctx, reduceTimeout)
	defer cancel()
	doc, err := s.cfg.Reducer.Reduce(ctx, a.typ, source, a.doc)
	if err != nil {
		s.cfg.Log.Info("writing the live document as it is: server defaults could not be told apart",
			"object", a.id.String(), "error", fmt.Sprint(err))
		return a.doc
	}
	return doc
}
