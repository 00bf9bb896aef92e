package worker

import (
	"context"
	"fmt"
	"time"
)

// reduceTimeout bounds the question to the API server behind the Reducer, so that a slow
// server delays a plan but never stalls the branch.
const reduceTimeout = 20 * time.Second

// reduce returns the document an upsert writes: when the object already has a render that
// differs from the live document, the Reducer takes out the server defaults that the render
// omits (docs/sanitize.md#server-defaults-are-not-edits), so that a defaulted field is not
// taken for an edit; an object without a render gets the smallest document the server
// turns into it, unless its target keeps defaults (docs/sanitize.md#minimal-documents). On
// any failure the live document is written as it is: a change that reached the API is
// never dropped for want of an answer.
func (s *branchState) reduce(ctx context.Context, ts *targetState, a action, render []byte) []byte {
	if s.cfg.Reducer == nil || (render == nil && ts.cfg.KeepDefaults) {
		return a.doc
	}
	asked, cancel := context.WithTimeout(ctx, reduceTimeout)
	defer cancel()
	var doc []byte
	var err error
	if render == nil {
		doc, err = s.cfg.Reducer.Minimal(asked, a.typ, a.doc, a.shape)
	} else {
		doc, err = s.cfg.Reducer.Reduce(asked, a.typ, render, a.doc)
	}
	if err != nil && ctx.Err() != nil {
		return a.doc // the plan stopped asking (reduceAhead): the answer is not used
	}
	if err != nil {
		s.cfg.Log.Info("writing the live document as it is: server defaults could not be told apart",
			"object", a.id.String(), "error", fmt.Sprint(err))
		return a.doc
	}
	return doc
}
