//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// pollInterval is the safety poll of the ref watcher. The watcher wakes on inotify events
// of the bare repository (git receive-pack renames refs/heads/<branch>.lock into place, or
// rewrites packed-refs), so a push is seen within microseconds; the poll only bounds what
// a missed event could cost.
const pollInterval = 20 * time.Millisecond

// tipEvent is a branch tip the watcher saw, with when it first saw it.
type tipEvent struct {
	at  time.Time
	sha string
}

// refWatcher records every tip of one branch of a bare repository on the Git server's
// disk, as the server itself would see it after a push.
type refWatcher struct {
	dir, branch string

	mu      sync.Mutex
	tips    []tipEvent
	changed chan struct{} // closed and replaced on each new tip

	file *os.File
	stop chan struct{}
	done chan struct{}
}

func watchRef(repoDir, branch string) (*refWatcher, error) {
	w := &refWatcher{dir: repoDir, branch: branch, changed: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	if err := os.MkdirAll(filepath.Join(repoDir, "refs", "heads"), 0o755); err != nil {
		return nil, err
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	const mask = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_CLOSE_WRITE | syscall.IN_DELETE
	for _, d := range []string{filepath.Join(repoDir, "refs", "heads"), repoDir} {
		if _, err := syscall.InotifyAddWatch(fd, d, mask); err != nil {
			syscall.Close(fd)
			return nil, fmt.Errorf("inotify watch %s: %w", d, err)
		}
	}
	w.file = os.NewFile(uintptr(fd), "inotify") // non-blocking: reads park in the poller
	wake := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := w.file.Read(buf); err != nil {
				return
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	w.check()
	go func() {
		defer close(w.done)
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-wake:
			case <-t.C:
			}
			w.check()
		}
	}()
	return w, nil
}

func (w *refWatcher) check() {
	sha := readRef(w.dir, w.branch)
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if sha == "" || (len(w.tips) > 0 && w.tips[len(w.tips)-1].sha == sha) {
		return
	}
	w.tips = append(w.tips, tipEvent{at: now, sha: sha})
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *refWatcher) Close() {
	close(w.stop)
	<-w.done
	w.file.Close()
}

// snapshot returns the tips seen from index i on, and a channel closed on the next tip.
func (w *refWatcher) snapshot(i int) ([]tipEvent, chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i > len(w.tips) {
		i = len(w.tips)
	}
	return append([]tipEvent(nil), w.tips[i:]...), w.changed
}

// count is how many tips were seen so far.
func (w *refWatcher) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.tips)
}

// last is the latest tip seen, or a zero tipEvent.
func (w *refWatcher) last() tipEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.tips) == 0 {
		return tipEvent{}
	}
	return w.tips[len(w.tips)-1]
}

var (
	errTimeout = errors.New("timed out")
	errAborted = errors.New("the operator exited")
)

// waitFor checks each tip seen from index from on, in order, and returns the first for
// which ok is true, with the index after it.
// A close of abort (the operator exited) ends the wait with errAborted.
func (w *refWatcher) waitFor(ctx context.Context, from int, timeout time.Duration, abort <-chan struct{}, ok func(tipEvent) (bool, error)) (tipEvent, int, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		tips, changed := w.snapshot(from)
		for _, t := range tips {
			from++
			done, err := ok(t)
			if err != nil {
				return tipEvent{}, from, err
			}
			if done {
				return t, from, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return tipEvent{}, from, ctx.Err()
		case <-abort:
			return tipEvent{}, from, errAborted
		case <-deadline.C:
			return tipEvent{}, from, fmt.Errorf("%w after %s", errTimeout, timeout)
		}
	}
}

// readRef reads refs/heads/<branch> of a bare repository, loose or packed.
func readRef(dir, branch string) string {
	if data, err := os.ReadFile(filepath.Join(dir, "refs", "heads", branch)); err == nil {
		if sha := strings.TrimSpace(string(data)); len(sha) >= 40 {
			return sha
		}
	}
	f, err := os.Open(filepath.Join(dir, "packed-refs"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sha, ref, ok := strings.Cut(sc.Text(), " ")
		if ok && ref == "refs/heads/"+branch {
			return sha
		}
	}
	return ""
}
