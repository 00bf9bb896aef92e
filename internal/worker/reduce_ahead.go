package worker

import (
	"bytes"
	"context"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// reduceParallelism is how many upserts one plan prepares at once: a Reducer question
// (server-side dry-run) is a round trip to the API server each when asked one after
// another, and a parse is CPU work that the other cores can share.
const reduceParallelism = 8

// reduceChunk is how many actions a plan prepares together: the next chunk is prepared
// while one is decided, the progress of a first mirror moves chunk by chunk, and the
// answers of two chunks are held at most.
const reduceChunk = 64

// reducedAhead is one upsert prepared before the plan reached it: the Reducer's answer and
// the document parsed for the layout. It holds for that object only while the render and
// the live document are still these.
type reducedAhead struct {
	render, live, doc []byte
	prepared          *layout.Prepared
}

// reduceAhead prepares the upserts of a chunk of actions at once, reduceParallelism at a
// time, before they are decided one after another: it asks the Reducer about each and
// parses the document it answers. Neither depends on the order. An object with more than
// one upsert in the chunk is left to the plan, whose render changes between them.
//
// The renders are read now, in the worker's loop; the rest runs while the loop goes on (it
// decides the chunk before), and wait returns the answers once all are in. An answer whose
// render or live document changed by then is not used (reduced).
func (s *branchState) reduceAhead(ctx context.Context, ts *targetState, actions []action) (wait func() map[layout.Identity]reducedAhead) {
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
		jobs = append(jobs, job{a, ts.folder.renderAhead(a.id)})
	}
	if len(jobs) < 2 {
		return func() map[layout.Identity]reducedAhead { return nil }
	}
	prepared := make([]reducedAhead, len(jobs))
	done := make(chan struct{})
	go func() {
		defer close(done)
		sem := make(chan struct{}, reduceParallelism)
		var wg sync.WaitGroup
		for i, j := range jobs {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				doc := s.reduce(ctx, ts, j.a, j.render)
				prepared[i] = reducedAhead{render: j.render, live: j.a.doc, doc: doc, prepared: s.prepare(doc, j.a.id, j.render == nil)}
			})
		}
		wg.Wait()
	}()
	return func() map[layout.Identity]reducedAhead {
		<-done
		out := make(map[layout.Identity]reducedAhead, len(jobs))
		for i, j := range jobs {
			out[j.a.id] = prepared[i]
		}
		return out
	}
}

// prepare parses doc, the document an upsert of id writes, for the layout; absent says the
// folder does not hold id. The Reducer's answer for an object without a render is the live
// document or the sanitizer's rendering of less, so with RenderedDocs it is written as it is.
func (s *branchState) prepare(doc []byte, id layout.Identity, absent bool) *layout.Prepared {
	if absent && s.cfg.RenderedDocs {
		return layout.PrepareRendered(doc, id)
	}
	return layout.Prepare(doc, absent)
}

// reduced is the document an upsert writes, and that document prepared for the layout
// when it was prepared ahead: the answer asked ahead when its render and live document are
// still the ones asked about, else the Reducer's answer now (and no preparation).
func (s *branchState) reduced(ctx context.Context, ts *targetState, a action, render []byte, ahead map[layout.Identity]reducedAhead) ([]byte, *layout.Prepared) {
	if r, ok := ahead[a.id]; ok && (r.render == nil) == (render == nil) && bytes.Equal(r.render, render) && bytes.Equal(r.live, a.doc) {
		return r.doc, r.prepared
	}
	return s.reduce(ctx, ts, a, render), nil
}
