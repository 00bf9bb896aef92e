package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// A commit's subject says what changed: one object by its verb, kind and name, several by
// counts per verb, with their namespace and after their author's name.
func TestACommitSubjectSaysWhatChanged(t *testing.T) {
	cm := func(ns, name string) layout.Identity {
		return layout.Identity{Kind: "ConfigMap", Namespace: ns, Name: name}
	}
	role := layout.Identity{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "reader"}
	line := func(op Op, id layout.Identity, created, sweep bool) action {
		return action{op: op, id: id, created: created, sweep: sweep}
	}
	for _, c := range []struct {
		name    string
		resync  bool
		changes []action
		want    string
	}{
		{"one update", false, []action{line(OpUpsert, cm("demo", "app-config"), false, false)}, "update ConfigMap demo/app-config"},
		{"one create", false, []action{line(OpUpsert, cm("demo", "app-config"), true, false)}, "create ConfigMap demo/app-config"},
		{"one delete", false, []action{line(OpDelete, cm("demo", "old"), false, false)}, "delete ConfigMap demo/old"},
		{"a cluster-scoped object", false, []action{line(OpUpsert, role, true, false)}, "create ClusterRole reader"},
		{"several of one namespace", false, []action{
			line(OpUpsert, cm("demo", "a"), true, false), line(OpUpsert, cm("demo", "b"), false, false),
			line(OpUpsert, cm("demo", "c"), true, false), line(OpDelete, cm("demo", "d"), false, false),
		}, "alice: create 2, update 1, delete 1 in demo"},
		{"several namespaces", false, []action{
			line(OpUpsert, cm("demo", "a"), false, false), line(OpUpsert, cm("prod", "a"), false, false),
		}, "alice: update 2 in 2 namespaces"},
		{"a resync with a sweep", true, []action{
			line(OpUpsert, cm("demo", "a"), true, false), line(OpDelete, cm("demo", "gone"), false, true),
		}, "Resync: create 1, prune 1 in demo"},
	} {
		m, err := newMessages("", "")
		if err != nil {
			t.Fatal(err)
		}
		b := &batch{target: "demo/live", author: Author{Name: "alice"}}
		if c.resync {
			b.snapshots = []*Snapshot{{}}
		}
		msg := m.render(b, listOf(c.changes...))
		if subject, _, _ := strings.Cut(msg, "\n"); subject != c.want {
			t.Errorf("%s: subject %q, want %q", c.name, subject, c.want)
		}
		first := changeLineOf(c.changes[0], "f.yaml")
		if !strings.Contains(msg, "- "+first.Operation+" "+first.Object+" (f.yaml)") {
			t.Errorf("%s: the body does not list the change with its file:\n%s", c.name, msg)
		}
	}
}

// listOf lists the changes of actions, each with the file f.yaml.
func listOf(actions ...action) *changeList {
	l := &changeList{}
	for _, a := range actions {
		l.add(a, func() string { return "f.yaml" })
	}
	return l
}
