package worker

import (
	"bytes"
	"context"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// reduceParallelism is how many Reducer questions (server-side dry-runs) one plan asks at
// once: a burst of edits to documents that exist is a dry-run each, a round trip to the API
// server each when asked one after another.
const reduceParallelism = 8

// reduceChunk is how many actions a plan asks about together before it decides them: the
// progress of a first mirror moves chunk by chunk, and only one chunk's answers are held.
const reduceChunk = 64

// reducedAhead is the Reducer's answer for one upsert, asked before the plan reached it; it
// holds for that object only while the render and the live document are still these.
type reducedAhead struct {
	render, live, doc []byte
}

// reduceAhead asks the Reducer about the upserts of a chunk of actions at once,
// reduceParallelism at a time, before they are decided one after another: the answers do
// not depend on the order. An object with more than one upsert in the chunk is left to the
// plan, whose render changes between them.
func (s *branchState) reduceAhead(ctx context.Context, ts *targetState, actions []action) map[layout.Identity]reducedAhead {
	if s.cfg.Reducer == nil {
		return nil
	}
	seen := map[layout.Identity]int{}
	for _, a := range actions {
		if a.op == OpUpsert {
			seen[a.id]++
		}
	}
	type job struct {
		a      action
		render []byte
	}
	var jobs []job
	for _, a := range actions {
		if a.op != OpUpsert || seen[a.id] != 1 {
			continue
		}
		render := ts.folder.renderAhead(a.id)
		if render == nil && ts.cfg.KeepDefaults {
			continue // written as it is: nothing to ask
		}
		jobs = append(jobs, job{a, render})
	}
	if len(jobs) < 2 {
		return nil
	}
	docs := make([][]byte, len(jobs))
	sem := make(chan struct{}, reduceParallelism)
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			docs[i] = s.reduce(ctx, ts, j.a, j.render)
		})
	}
	wg.Wait()
	out := make(map[layout.Identity]reducedAhead, len(jobs))
	for i, j := range jobs {
		out[j.a.id] = reducedAhead{render: j.render, live: j.a.doc, doc: docs[i]}
	}
	return out
}

// reduced is the document an upsert writes: the answer asked ahead when its render and live
// document are still the ones asked about, else the Reducer's answer now.
func (s *branchState) reduced(ctx context.Context, ts *targetState, a action, render []byte, ahead map[layout.Identity]reducedAhead) []byte {
	if r, ok := ahead[a.id]; ok && (r.render == nil) == (render == nil) && bytes.Equal(r.render, render) && bytes.Equal(r.live, a.doc) {
		return r.doc
	}
	return s.reduce(ctx, ts, a, render)
}
