//go:build e2e

package controller_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func TestMetricsCountAMirroredChangeAndEventsTellTheFirstPush(t *testing.T) {
	metricsAddr, probeAddr := testenv.LoopbackAddress(t), testenv.LoopbackAddress(t)
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperatorWith(t, cp.Config, t.TempDir(), func(o *operator.Options) {
		o.MetricsBindAddress, o.HealthProbeBindAddress = metricsAddr, probeAddr
	})
	waitFor(t, "/readyz once discovery answered", func() bool { return get(t, "http://"+probeAddr+"/readyz") != "" })
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "cms", "live", configMapsRule()))
	targetReady(t, gt)
	assertKstatusCurrent(t, gt)
	create(t, configMap(ns, "counted", map[string]string{"k": "v"}))
	waitFor(t, "the ConfigMap in Git", func() bool { return r.has("live/" + ns + "/core/configmaps/counted.yaml") })

	var body string
	waitFor(t, "the counters and the latency histogram", func() bool {
		body = get(t, "http://"+metricsAddr+"/metrics")
		return metricValue(body, `gitops_reverser_events_received_total{group="",resource="configmaps",type="CREATE"}`) >= 1 &&
			metricValue(body, `gitops_reverser_pushes_total{result="success"}`) >= 1 &&
			metricValue(body, "gitops_reverser_event_to_push_seconds_count") >= 1
	})
	for _, name := range []string{"gitops_reverser_commits_total", `gitops_reverser_documents_written_total{operation="upsert"}`,
		`gitops_reverser_window_closes_total{reason="silence"}`, "gitops_reverser_snapshots_total"} {
		if !strings.Contains(body, name) {
			t.Errorf("metric %s is missing", name)
		}
	}

	waitFor(t, "a FirstPush event on the GitTarget", func() bool {
		var list eventsv1.EventList
		if err := cp.Client.List(ctxOf(t), &list, client.InNamespace(ns)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Regarding.Name == "live" && e.Reason == "FirstPush" {
				return true
			}
		}
		return false
	})
}

// get returns the body of a 200 answer, or "".
func get(t *testing.T, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}

// metricValue reads the value of one exposition line starting with series, or -1.
func metricValue(body, series string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// assertKstatusCurrent checks what kstatus reads: Ready=True, no Reconciling or Stalled, and
// observedGeneration equal to the object's generation, on the status and on Ready.
func assertKstatusCurrent(t *testing.T, gt *v1.GitTarget) {
	t.Helper()
	if err := cp.Client.Get(ctxOf(t), client.ObjectKeyFromObject(gt), gt); err != nil {
		t.Fatal(err)
	}
	ready := meta.FindStatusCondition(gt.Status.Conditions, v1.ConditionReady)
	switch {
	case gt.Status.ObservedGeneration != gt.Generation:
		t.Fatalf("status.observedGeneration %d, generation %d", gt.Status.ObservedGeneration, gt.Generation)
	case ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != gt.Generation:
		t.Fatalf("Ready condition %+v at generation %d", ready, gt.Generation)
	case meta.FindStatusCondition(gt.Status.Conditions, v1.ConditionReconciling) != nil,
		meta.FindStatusCondition(gt.Status.Conditions, v1.ConditionStalled) != nil:
		t.Fatalf("a ready target still reports Reconciling or Stalled: %+v", gt.Status.Conditions)
	}
}
