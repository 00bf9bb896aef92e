package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// saves holds the CommitRequests handed to a worker whose answer is awaited, so that a
// reconcile never waits for a push: it hands the request over once, returns, and reads the
// answer in the reconcile the answer asks for.
type saves struct {
	mu      sync.Mutex
	waiting map[types.NamespacedName]*save
}

// save is one handed-over request (uid tells a request from a new one of the same name);
// res is set once done.
type save struct {
	uid  types.UID
	done bool
	res  worker.SaveResult
}

// started reports whether this request was handed over and not yet read back.
func (s *saves) started(name types.NamespacedName, uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv, ok := s.waiting[name]
	return ok && sv.uid == uid
}

func (s *saves) start(name types.NamespacedName, uid types.UID) *save {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := &save{uid: uid}
	s.waiting[name] = sv
	return sv
}

func (s *saves) answer(sv *save, res worker.SaveResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv.done, sv.res = true, res
}

// result returns the answer to this request once it came, and forgets the request.
func (s *saves) result(name types.NamespacedName, uid types.UID) (worker.SaveResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv, ok := s.waiting[name]
	if !ok || !sv.done || sv.uid != uid {
		return worker.SaveResult{}, false
	}
	delete(s.waiting, name)
	return sv.res, true
}

// forget drops a request (deleted, or its target gone); a late answer is ignored.
func (s *saves) forget(name types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, name)
}
