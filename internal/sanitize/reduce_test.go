package sanitize

import (
	"bytes"
	"reflect"
	"testing"
)

// reduceCase holds a captured source, live object and dry-run of the source.
type reduceCase struct{ source, live, defaulted map[string]any }

func captured(t *testing.T, name string) reduceCase {
	t.Helper()
	return reduceCase{
		source:    Clean(readSource(t, name)),
		live:      Clean(readLive(t, name)),
		defaulted: readJSON(t, name+".defaulted.json"),
	}
}

func set(t *testing.T, obj map[string]any, value any, path ...any) {
	t.Helper()
	parent, ok := lookup(obj, path[:len(path)-1]...)
	if !ok {
		t.Fatalf("no %v", path[:len(path)-1])
	}
	switch k := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[k] = value
	case int:
		parent.([]any)[k] = value
	}
}

func assertSameDocument(t *testing.T, got, want map[string]any) {
	t.Helper()
	g, w := mustDocument(t, got), mustDocument(t, want)
	if !bytes.Equal(g, w) {
		t.Errorf("reduced document:\n%s--- want\n%s", g, w)
	}
}

func TestReduceOfAnUneditedDeploymentEqualsItsSource(t *testing.T) {
	c := captured(t, "deployment")
	// The capture must hold the defaults the source omits, or the test proves nothing.
	for _, path := range [][]any{
		p("spec", "strategy"), p("spec", "revisionHistoryLimit"),
		p("spec", "template", "spec", "containers", 0, "imagePullPolicy"),
		p("spec", "template", "spec", "containers", 0, "terminationMessagePath"),
		p("spec", "template", "spec", "containers", 0, "ports", 0, "protocol"),
	} {
		if _, ok := lookup(c.live, path...); !ok {
			t.Fatalf("live fixture lacks the default %v", path)
		}
	}
	assertSameDocument(t, Reduce(c.source, c.live, c.defaulted), c.source)
}

func TestReduceKeepsOnlyTheEditedImage(t *testing.T) {
	c := captured(t, "deployment")
	set(t, c.live, "nginx:1.28", "spec", "template", "spec", "containers", 0, "image")
	want := copyValue(c.source).(map[string]any)
	set(t, want, "nginx:1.28", "spec", "template", "spec", "containers", 0, "image")
	assertSameDocument(t, Reduce(c.source, c.live, c.defaulted), want)
}

func TestReduceKeepsAnOmittedFieldWhoseLiveValueIsNotTheDefault(t *testing.T) {
	c := captured(t, "deployment")
	set(t, c.live, "Always", "spec", "template", "spec", "containers", 1, "imagePullPolicy")
	want := copyValue(c.source).(map[string]any)
	set(t, want, "Always", "spec", "template", "spec", "containers", 1, "imagePullPolicy")
	assertSameDocument(t, Reduce(c.source, c.live, c.defaulted), want)
}

func TestReduceKeepsOnlyTheEditedFieldOfAnOmittedMap(t *testing.T) {
	c := captured(t, "deployment")
	set(t, c.live, "50%", "spec", "strategy", "rollingUpdate", "maxSurge")
	want := copyValue(c.source).(map[string]any)
	set(t, want, map[string]any{"rollingUpdate": map[string]any{"maxSurge": "50%"}}, "spec", "strategy")
	assertSameDocument(t, Reduce(c.source, c.live, c.defaulted), want)
}

func TestReduceMatchesNamedElementsByName(t *testing.T) {
	c := captured(t, "deployment")
	containers, _ := lookup(c.live, "spec", "template", "spec", "containers")
	list := containers.([]any)
	list[0], list[1] = list[1], list[0] // someone reordered the containers live
	want := copyValue(c.source).(map[string]any)
	wantList, _ := lookup(want, "spec", "template", "spec", "containers")
	wl := wantList.([]any)
	wl[0], wl[1] = wl[1], wl[0]
	assertSameDocument(t, Reduce(c.source, c.live, c.defaulted), want)
}

func TestReduceOfAServiceWithoutTypeOrProtocolEqualsItsSource(t *testing.T) {
	c := captured(t, "service")
	for _, path := range [][]any{p("spec", "type"), p("spec", "ports", 0, "protocol"), p("spec", "sessionAffinity")} {
		if _, ok := lookup(c.live, path...); !ok {
			t.Fatalf("live fixture lacks the default %v", path)
		}
	}
	assertSameDocument(t, Reduce(c.source, c.live, c.defaulted), c.source)
}

func TestReduceKeepsLiveListWhoseLengthDiffers(t *testing.T) {
	port := func(n int64) map[string]any { return map[string]any{"port": n} }
	defaultedPort := func(n int64) map[string]any { return map[string]any{"port": n, "protocol": "TCP"} }
	source := map[string]any{"spec": map[string]any{"ports": []any{port(80)}, "args": []any{"a"}}}
	defaulted := map[string]any{"spec": map[string]any{"ports": []any{defaultedPort(80)}, "args": []any{"a"}}}
	live := map[string]any{"spec": map[string]any{
		"ports": []any{defaultedPort(80), defaultedPort(443)}, "args": []any{"a", "b"},
	}}
	got := Reduce(source, live, defaulted)
	if !reflect.DeepEqual(got, live) {
		t.Errorf("got %#v, want live's lists whole", got)
	}
}

func TestReduceFollowsListsOfEqualLengthByPosition(t *testing.T) {
	source := map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}
	defaulted := map[string]any{"ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}}
	live := map[string]any{"ports": []any{map[string]any{"port": int64(8080), "protocol": "TCP"}}}
	want := map[string]any{"ports": []any{map[string]any{"port": int64(8080)}}}
	if got := Reduce(source, live, defaulted); !equalValues(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestReduceKeepsWhatOnlyLiveHoldsAndDropsWhatLiveLost(t *testing.T) {
	source := map[string]any{"metadata": map[string]any{"labels": map[string]any{"gone": "x"}}, "spec": map[string]any{"a": int64(1)}}
	defaulted := map[string]any{"metadata": map[string]any{"labels": map[string]any{"gone": "x"}}, "spec": map[string]any{"a": int64(1), "d": "default"}}
	live := map[string]any{"metadata": map[string]any{"labels": map[string]any{"added": "y"}}, "spec": map[string]any{"a": int64(1), "d": "default", "extra": false}}
	want := map[string]any{"metadata": map[string]any{"labels": map[string]any{"added": "y"}}, "spec": map[string]any{"a": int64(1), "extra": false}}
	if got := Reduce(source, live, defaulted); !equalValues(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestReduceComparesNumbersByValue(t *testing.T) {
	source := map[string]any{"spec": map[string]any{}}
	defaulted := map[string]any{"spec": map[string]any{"replicas": 1}}
	live := map[string]any{"spec": map[string]any{"replicas": float64(1)}}
	if got := Reduce(source, live, defaulted); !equalValues(got, source) {
		t.Errorf("got %#v", got)
	}
}

func TestReduceLeavesItsArgumentsUntouched(t *testing.T) {
	c := captured(t, "deployment")
	before := copyValue(map[string]any{"s": c.source, "l": c.live, "d": c.defaulted})
	out := Reduce(c.source, c.live, c.defaulted)
	set(t, out, "changed", "spec", "template", "spec", "containers", 0, "image")
	if after := copyValue(map[string]any{"s": c.source, "l": c.live, "d": c.defaulted}); !reflect.DeepEqual(before, after) {
		t.Error("Reduce modified an argument or shares memory with its result")
	}
}
