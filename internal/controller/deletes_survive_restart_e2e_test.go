//go:build e2e

package controller_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// A DELETE under prune: OnEvent that could not be pushed before the operator stopped (the
// Git server was down) is written after the restart, although the restart's snapshot no
// longer lists the object and does not sweep: the journal of deletes kept it
// (docs/branch-worker.md#restart).
func TestAnUnpushedDeleteSurvivesARestart(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	op := startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	onEvent := target(ns, "on-event", "origin", "on-event", v1.PruneOnEvent)
	create(t, onEvent)
	create(t, watchRule(ns, "cms", "on-event", configMapsRule()))
	targetReady(t, onEvent)
	create(t, configMap(ns, "doomed", map[string]string{"v": "1"}))
	doomed := "on-event/" + ns + "/core/configmaps/doomed.yaml"
	waitFor(t, "doomed in Git", func() bool { return r.has(doomed) })

	r.http.SetDown(true)
	if err := cp.Client.Delete(ctxOf(t), configMap(ns, "doomed", nil)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delete in the journal", func() bool {
		return strings.Contains(journalText(t), `"namespace":"`+ns+`","name":"doomed"`)
	})
	op.stop(t)
	if !r.has(doomed) {
		t.Fatal("the delete reached Git while the server was down")
	}

	r.http.SetDown(false)
	startOperator(t, cp.Config, t.TempDir())
	waitFor(t, "the delete to land after the restart", func() bool { return !r.has(doomed) })
	waitFor(t, "the journal to forget it", func() bool {
		text := journalText(t)
		return text != "" && !strings.Contains(text, `"name":"doomed"`)
	})
}

// journalText is the JSON of the journal of deletes as its Secret holds it ("" when it
// cannot be read).
func journalText(t *testing.T) string {
	var cm corev1.Secret
	if err := cp.Client.Get(ctxOf(t), keyOf("default", "gitops-reverser-deletes"), &cm); err != nil {
		return ""
	}
	zr, err := gzip.NewReader(bytes.NewReader(cm.Data["deletes.json.gz"]))
	if err != nil {
		return ""
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		return ""
	}
	return string(text)
}
