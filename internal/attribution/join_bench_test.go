package attribution

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// BenchmarkJoinAt500EventsPerSecond drives the join as the operator does under load: 500
// watch events per second, each resolved while its fact arrives 0–20 ms later (the audit
// batch is usually later still, which only adds the batching delay itself). It reports the
// p50/p99 time Resolve adds after the fact arrived, and the index's heap per fact.
func BenchmarkJoinAt500EventsPerSecond(b *testing.B) {
	const rate, seconds = 500, 4
	gr := schema.GroupResource{Resource: "configmaps"}
	for range b.N {
		idx := NewIndex(IndexConfig{})
		var mu sync.Mutex
		var added []time.Duration
		var wg sync.WaitGroup
		tick := time.NewTicker(time.Second / rate)
		for i := range rate * seconds {
			<-tick.C
			uid, rv := fmt.Sprintf("uid-%d", i), fmt.Sprint(i)
			delay := time.Duration(i%21) * time.Millisecond
			arrived := make(chan time.Time, 1)
			go func() {
				time.Sleep(delay)
				arrived <- time.Now()
				idx.Add(&Fact{AuditID: "a" + rv, UID: uid, ResourceVersion: rv, Resource: gr, Namespace: "ns", Name: uid, Verb: "update",
					Author: Author{Name: "alice"}, Time: time.Now()})
			}()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, tier := idx.Resolve(context.Background(), ObjectKey{Resource: gr, Namespace: "ns", Name: uid, UID: uid, ResourceVersion: rv}, 3*time.Second)
				done := time.Now()
				if tier != TierExact {
					b.Errorf("tier %v", tier)
				}
				mu.Lock()
				added = append(added, done.Sub(<-arrived))
				mu.Unlock()
			}()
		}
		tick.Stop()
		wg.Wait()
		slices.Sort(added)
		b.ReportMetric(float64(added[len(added)/2].Microseconds()), "p50-added-µs")
		b.ReportMetric(float64(added[len(added)*99/100].Microseconds()), "p99-added-µs")
	}
	b.StopTimer()
	// Heap per fact in a full index.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	idx := NewIndex(IndexConfig{})
	const n = 50_000
	for i := range n {
		idx.Add(&Fact{AuditID: fmt.Sprintf("audit-%08d", i), UID: fmt.Sprintf("uid-%08d", i), ResourceVersion: fmt.Sprint(i), Resource: gr,
			Namespace: "team-a", Name: fmt.Sprintf("object-%08d", i), Verb: "update", Author: Author{Name: "alice", Email: "alice@example.com"}, Time: time.Now()})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/fact")
	runtime.KeepAlive(idx)
}
