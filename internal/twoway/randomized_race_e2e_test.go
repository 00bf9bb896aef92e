//go:build e2e

package twoway

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// raceRounds is how many changes the randomized race makes, half through the API and half
// as Git-side pushes; raceObjects how many ConfigMaps each side changes.
const (
	raceRounds  = 200
	raceObjects = 6
)

// The randomized race: API edits and Git-side pushes interleave in one triggered folder,
// at random moments (TWOWAY_SEED repeats a run). The API edits ConfigMaps made through the
// API, the Git side ConfigMaps made in Git, so that every change has one right outcome.
// At the end Git and the cluster agree on every object and hold its last change: no API
// edit lost, no Git-side change reverted; and no commit but the Git side's own ever wrote
// a ConfigMap made in Git (Flux's apply of it was never mirrored back).
func TestInterleavedAPIEditsAndGitSidePushesConverge(t *testing.T) {
	eachApplier(t, testInterleavedAPIEditsAndGitSidePushesConverge)
}

func testInterleavedAPIEditsAndGitSidePushesConverge(t *testing.T, a gitopsApplier) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TWOWAY_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TWOWAY_SEED: %v", err)
		}
	}
	t.Logf("seed %d (TWOWAY_SEED=%d repeats the choices)", seed, seed)
	l := newLoop(t, a)
	apiName := func(k int) string { return fmt.Sprintf("api-%d", k) }
	gitName := func(k int) string { return fmt.Sprintf("git-%d", k) }
	files := map[string]string{}
	for k := range raceObjects {
		l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: apiName(k)}, Data: map[string]string{"v": "0"}})
		files[l.folder+gitName(k)+".yaml"] = configMapDoc(l.ns, gitName(k), "0")
	}
	if _, err := l.pushForeign(testenv.ForeignChange{Files: files, Message: "the Git side's ConfigMaps"}); err != nil {
		t.Fatal(err)
	}
	for k := range raceObjects {
		waitFor(t, apiName(k)+" adopted", func() bool { return l.adopted(apiName(k)) })
		waitFor(t, gitName(k)+" applied", func() bool { return l.live(gitName(k)) == "0" })
	}
	l.appliesSettled()

	var mu sync.Mutex
	last := map[string]string{}
	set := func(name, v string) {
		mu.Lock()
		defer mu.Unlock()
		last[name] = v
	}
	apiRng := rand.New(rand.NewPCG(seed, 1))
	gitRng := rand.New(rand.NewPCG(seed, 2))
	var wg sync.WaitGroup
	wg.Go(func() {
		for r := 0; r < raceRounds/2; r++ {
			name, v := apiName(apiRng.IntN(raceObjects)), "api-"+strconv.Itoa(r)
			if err := l.trySetValue(name, v); err != nil {
				t.Error(err)
				return
			}
			set(name, v)
			time.Sleep(time.Duration(apiRng.IntN(400)) * time.Millisecond) // the load's pace, not a wait
		}
	})
	wg.Go(func() {
		for r := 0; r < raceRounds/2; r++ {
			name, v := gitName(gitRng.IntN(raceObjects)), "git-"+strconv.Itoa(r)
			if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{l.folder + name + ".yaml": configMapDoc(l.ns, name, v)}}); err != nil {
				t.Errorf("push %s=%s: %v", name, v, err)
				return
			}
			set(name, v)
			time.Sleep(time.Duration(gitRng.IntN(200)) * time.Millisecond)
		}
	})
	wg.Wait()
	if t.Failed() {
		return
	}

	agree := func() (bool, string) {
		for name, v := range last {
			if git, live := l.inGit(l.folder+name+".yaml"), l.live(name); git != configMapDoc(l.ns, name, v) || live != v {
				return false, fmt.Sprintf("%s: last change %q, Git %q, cluster %q", name, v, git, live)
			}
		}
		return true, ""
	}
	for end := time.Now().Add(deadline); ; {
		ok, why := agree()
		if ok {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after %s Git and the cluster do not hold every object's last change: %s", deadline, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
	l.appliesSettled()
	if ok, why := agree(); !ok {
		t.Fatalf("after the applies settled: %s", why)
	}
	for k := range raceObjects {
		for _, c := range l.commitsTouching(l.folder + gitName(k) + ".yaml") {
			if c.Author != "Foreign User <foreign@example.com>" {
				t.Errorf("%s was written by %s (%s %q): Flux's apply mirrored back, or a Git-side change reverted", gitName(k), c.Author, c.SHA[:12], c.Subject)
			}
		}
	}
}
