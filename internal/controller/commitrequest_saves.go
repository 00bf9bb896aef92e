package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// saves holds the CommitRequests handed to a worker, so that a reconcile never waits for a
// push: it hands the request over once, returns, and reads the answer in the reconcile the
// answer asks for. A request is known by its UID, so a new request of the same name starts
// afresh.
type saves struct {
	mu      sync.Mutex
	waiting map[types.NamespacedName]*save
}

type save struct {
	uid types.UID
	res *worker.SaveResult // nil until the worker answered
}

// answer returns the state of this request: whether it was handed over, and the worker's
// answer once it came.
func (s *saves) answer(name types.NamespacedName, uid types.UID) (res *worker.SaveResult, started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv, ok := s.waiting[name]
	if !ok || sv.uid != uid {
		return nil, false
	}
	return sv.res, true
}

func (s *saves) start(name types.NamespacedName, uid types.UID) *save {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := &save{uid: uid}
	s.waiting[name] = sv
	return sv
}

func (s *saves) answered(sv *save, res worker.SaveResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv.res = &res
}

// forget drops a request whose answer was reported (or that is gone); a late answer is
// ignored.
func (s *saves) forget(name types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, name)
}
