package sanitize

import "testing"

// The server copies serviceAccountName into the deprecated serviceAccount of every pod spec;
// the alias is not written beside its successor, in a Deployment's template or deeper.
func TestTheDeprecatedServiceAccountAliasIsNotWritten(t *testing.T) {
	podSpec := func(alias string) map[string]any {
		return map[string]any{"serviceAccountName": "builder", "serviceAccount": alias,
			"containers": []any{map[string]any{"name": "app", "image": "app:1"}}}
	}
	deployment := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"template": map[string]any{"spec": podSpec("builder")}}}
	cronJob := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "nightly"},
		"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec("builder")}}}}}
	for name, c := range map[string]struct {
		obj  map[string]any
		path []any
	}{
		"Deployment": {deployment, p("spec", "template", "spec")},
		"CronJob":    {cronJob, p("spec", "jobTemplate", "spec", "template", "spec")},
	} {
		out := Clean(c.obj)
		if _, ok := lookup(out, append(c.path, "serviceAccount")...); ok {
			t.Errorf("%s: the deprecated serviceAccount is written", name)
		}
		if v, _ := lookup(out, append(c.path, "serviceAccountName")...); v != "builder" {
			t.Errorf("%s: serviceAccountName = %v", name, v)
		}
	}
	// Two different names are not an alias and its successor: both stay, as the server holds them.
	other := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": podSpec("other")}
	if v, _ := lookup(Clean(other), "spec", "serviceAccount"); v != "other" {
		t.Errorf("a serviceAccount that differs from serviceAccountName was removed")
	}
}
