package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestEveryStageRecordsUnderTheProjectPrefix(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.EventReceived("", "configmaps", "CREATE")
	m.Snapshot("apps", "deployments")
	m.DocumentWritten("upsert")
	m.Commit()
	m.Push("success")
	m.Replay()
	m.WindowClosed("silence")
	m.Refused("folder")
	m.QueueDepth("https://git.example.com/a#main", 3)
	now := time.Now()
	m.Published(now.Add(-150*time.Millisecond), now)
	m.ApplyRequest("ForeignCommit", "success")
	m.ApplyEcho("not_mirrored")
	m.StaleSnapshot("discarded")
	m.ApplyOwnershipConflict()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 14 { // the attribution counter and the ledger's have no sample yet
		t.Fatalf("%d metric families, want 14", len(families))
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "gitops_reverser_") {
			t.Fatalf("metric %s lacks the prefix", f.GetName())
		}
	}
	if got := testutil.ToFloat64(m.pushes.WithLabelValues("success")); got != 1 {
		t.Fatalf("pushes = %v", got)
	}
	again, err := New(reg)
	if err != nil {
		t.Fatalf("a second operator run in one process: %v", err)
	}
	again.Push("success")
	if got := testutil.ToFloat64(m.pushes.WithLabelValues("success")); got != 2 {
		t.Fatalf("a second New does not share the registered collectors: pushes = %v", got)
	}
}

func TestANilMetricsRecordsNothingAndDoesNotPanic(t *testing.T) {
	var m *Metrics
	m.EventReceived("", "configmaps", "CREATE")
	m.Push("failure")
	m.Published(time.Now(), time.Now())
	m.ForgetBranch("x")
}
