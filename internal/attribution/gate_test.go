package attribution

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

var cmGR = schema.GroupResource{Resource: "configmaps"}

func TestGateKeepsOnlyCompleteSuccessfulPersistedMutations(t *testing.T) {
	cases := []struct {
		name   string
		change func(ev *auditv1.Event)
		ok     bool
		reason IgnoreReason
	}{
		{"create", func(ev *auditv1.Event) { ev.Verb = "create" }, true, 0},
		{"update", func(ev *auditv1.Event) { ev.Verb = "update" }, true, 0},
		{"patch", func(ev *auditv1.Event) { ev.Verb = "patch" }, true, 0},
		{"delete", func(ev *auditv1.Event) { ev.Verb = "delete" }, true, 0},
		{"deletecollection", func(ev *auditv1.Event) { ev.Verb = "deletecollection"; ev.ObjectRef.Name = "" }, true, 0},
		{"created 201", func(ev *auditv1.Event) { ev.Verb = "create"; ev.ResponseStatus.Code = 201 }, true, 0},
		{"scale subresource", func(ev *auditv1.Event) { ev.ObjectRef.Subresource = "scale" }, true, 0},
		{"request received stage", func(ev *auditv1.Event) { ev.Stage = auditv1.StageRequestReceived }, false, IgnoredStage},
		{"response started stage", func(ev *auditv1.Event) { ev.Stage = auditv1.StageResponseStarted }, false, IgnoredStage},
		{"panic stage", func(ev *auditv1.Event) { ev.Stage = auditv1.StagePanic }, false, IgnoredStage},
		{"get", func(ev *auditv1.Event) { ev.Verb = "get" }, false, IgnoredReadOnly},
		{"list", func(ev *auditv1.Event) { ev.Verb = "list" }, false, IgnoredReadOnly},
		{"watch", func(ev *auditv1.Event) { ev.Verb = "watch" }, false, IgnoredReadOnly},
		{"dry-run create", func(ev *auditv1.Event) {
			ev.Verb = "create"
			ev.RequestURI = "/api/v1/namespaces/a/configmaps?dryRun=All&fieldManager=kubectl"
		}, false, IgnoredDryRun},
		{"dry-run patch", func(ev *auditv1.Event) { ev.RequestURI += "?dryRun=All" }, false, IgnoredDryRun},
		{"empty dryRun is not a dry run", func(ev *auditv1.Event) { ev.RequestURI += "?dryRun=" }, true, 0},
		{"conflict 409", func(ev *auditv1.Event) { ev.ResponseStatus.Code = 409 }, false, IgnoredFailed},
		{"forbidden 403", func(ev *auditv1.Event) { ev.ResponseStatus.Code = 403 }, false, IgnoredFailed},
		{"server error 500", func(ev *auditv1.Event) { ev.ResponseStatus.Code = 500 }, false, IgnoredFailed},
		{"no response status", func(ev *auditv1.Event) { ev.ResponseStatus = nil }, false, IgnoredFailed},
		{"no object", func(ev *auditv1.Event) { ev.ObjectRef = nil }, false, IgnoredNoObject},
		{"status subresource", func(ev *auditv1.Event) { ev.ObjectRef.Subresource = "status" }, false, IgnoredSubresource},
		{"token subresource", func(ev *auditv1.Event) {
			ev.Verb = "create"
			ev.ObjectRef.Resource, ev.ObjectRef.Subresource = "serviceaccounts", "token"
		}, false, IgnoredSubresource},
		{"lease", func(ev *auditv1.Event) {
			ev.ObjectRef.APIGroup, ev.ObjectRef.Resource = "coordination.k8s.io", "leases"
		}, false, IgnoredResource},
		{"subject access review", func(ev *auditv1.Event) {
			ev.Verb = "create"
			ev.ObjectRef.APIGroup, ev.ObjectRef.Resource = "authorization.k8s.io", "subjectaccessreviews"
		}, false, IgnoredResource},
	}
	gate := DefaultGate()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := event("id", "patch", "a", "cm", "u1", "5", "alice")
			tc.change(&ev)
			ok, reason := gate.Check(&ev)
			if ok != tc.ok || (!ok && reason != tc.reason) {
				t.Fatalf("Check = %v, %v; want %v, %v", ok, reason, tc.ok, tc.reason)
			}
		})
	}
}

func TestIgnoredEventsAreCountedByReasonAndKeepNoFact(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	h := NewHandler(idx, DefaultGate(), 0, testLogger())
	dry := event("d", "create", "a", "cm", "u1", "5", "alice")
	dry.RequestURI += "?dryRun=All"
	failed := event("f", "update", "a", "cm", "u1", "6", "alice")
	failed.ResponseStatus = &metav1.Status{Code: 422}
	read := event("r", "get", "a", "cm", "u1", "5", "alice")
	if code := post(t, h, eventList(dry, failed, read)); code != 200 {
		t.Fatalf("status %d", code)
	}
	c := idx.Counters()
	if c.Ignored(IgnoredDryRun) != 1 || c.Ignored(IgnoredFailed) != 1 || c.Ignored(IgnoredReadOnly) != 1 {
		t.Fatalf("ignored: dry %d failed %d read %d", c.Ignored(IgnoredDryRun), c.Ignored(IgnoredFailed), c.Ignored(IgnoredReadOnly))
	}
	if idx.Len() != 0 || c.Accepted() != 0 {
		t.Fatalf("facts %d accepted %d, want none", idx.Len(), c.Accepted())
	}
}
