//go:build e2e

package twoway

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// E13: the time from an API create in a triggered folder to the object adopted by the
// applier (its marks name the Kustomization or the Application): the event reaching the
// worker, the commit and push, the CatchUp apply and the applier's fetch and apply. Reported
// by `make bench` per applier, never asserted: s/adopted is the mean of b.N creates, made
// one after the other.
func BenchmarkAPICreateToAdopted(b *testing.B) {
	for _, a := range appliers {
		b.Run(a.String(), func(b *testing.B) { benchmarkAPICreateToAdopted(b, a) })
	}
}

func benchmarkAPICreateToAdopted(b *testing.B, a gitopsApplier) {
	l := newLoop(b, a)
	waitFor(b, "the catch-up apply", func() bool { return l.applyStatus().Applied != "" })
	l.appliesSettled()
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("adopt-%d", i)
		start := time.Now()
		l.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: name}, Data: map[string]string{"v": "1"}})
		for !l.adopted(name) { // polled finely: waitFor's pace would round the figure
			if time.Since(start) > deadline {
				b.Fatalf("%s not adopted within %s", name, deadline)
			}
			time.Sleep(20 * time.Millisecond)
		}
		total += time.Since(start)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/adopted")
}
