package kustomize

import (
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// jv decodes a YAML value into the JSON kinds project works on.
func jv(t *testing.T, y string) any {
	t.Helper()
	var v any
	if err := sigsyaml.Unmarshal([]byte(y), &v); err != nil {
		t.Fatalf("decode %q: %v", y, err)
	}
	return v
}

// projectCase is one call of project: the source s, the render r and the live value l,
// and either the new source or the field an unplaceable-edit refusal names.
type projectCase struct {
	name    string
	s, r, l string
	want    string
	refused string
}

func runProjectCases(t *testing.T, cases []projectCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, r, l := jv(t, tc.s), jv(t, tc.r), jv(t, tc.l)
			before := clone(s)
			got, err := project(s, r, l, nil, "obj")
			if tc.refused != "" {
				wantRefusal(t, err, CodeUnplaceable, tc.refused)
				return
			}
			if err != nil {
				t.Fatalf("project: %v", err)
			}
			if want := jv(t, tc.want); !equal(got, want) {
				t.Errorf("project =\n%s\nwant\n%s", encodeTest(t, got), encodeTest(t, want))
			}
			if !equal(s, before) {
				t.Errorf("project changed its source argument to %v", s)
			}
		})
	}
}

func TestProjectKeepsTheSourceWhereRenderAndLiveAgreeAndWritesTheirDifferences(t *testing.T) {
	runProjectCases(t, []projectCase{
		{
			name: "agreement keeps the source as it is, build additions and all",
			s:    "{a: 1}", r: "{a: 1, env: prod}", l: "{a: 1, env: prod}",
			want: "{a: 1}",
		},
		{
			name: "agreement keeps a source value the build replaced",
			s:    "{env: dev}", r: "{env: prod}", l: "{env: prod}",
			want: "{env: dev}",
		},
		{
			name: "a changed scalar is written",
			s:    "{a: 1}", r: "{a: 1, env: prod}", l: "{a: 2, env: prod}",
			want: "{a: 2}",
		},
		{
			name: "a changed value of a field the build replaced is written",
			s:    "{env: dev}", r: "{env: prod}", l: "{env: staging}",
			want: "{env: staging}",
		},
		{
			name: "a key live adds is written",
			s:    "{a: 1}", r: "{a: 1, env: prod}", l: "{a: 1, env: prod, c: [x]}",
			want: "{a: 1, c: [x]}",
		},
		{
			name: "a key live removes is removed",
			s:    "{a: 1, b: 2}", r: "{a: 1, b: 2, env: prod}", l: "{a: 1, env: prod}",
			want: "{a: 1}",
		},
		{
			name: "a key the build adds and live removes was never in the source",
			s:    "{a: 1}", r: "{a: 1, env: prod}", l: "{a: 1}",
			want: "{a: 1}",
		},
		{
			name: "nested maps keep what agrees at every level",
			s:    "{metadata: {name: x, labels: {app: web}}, data: {k: v}}",
			r:    "{metadata: {name: x, namespace: prod, labels: {app: web, env: prod}}, data: {k: v}}",
			l:    "{metadata: {name: x, namespace: prod, labels: {app: web, env: prod, tier: front}}, data: {k: v}}",
			want: "{metadata: {name: x, labels: {app: web, tier: front}}, data: {k: v}}",
		},
		{
			name: "a map live added under a missing source key",
			s:    "{a: 1}", r: "{a: 1, m: {x: 1}}", l: "{a: 1, m: {x: 1, y: 2}}",
			want: "{a: 1, m: {y: 2}}",
		},
		{
			name: "a value live turned into another kind is written whole",
			s:    "{v: {x: 1}}", r: "{v: {x: 1}}", l: "{v: text}",
			want: "{v: text}",
		},
		{
			name: "a scalar document",
			s:    "a", r: "b", l: "c",
			want: "c",
		},
	})
}

func TestProjectPairsNamedListElementsByName(t *testing.T) {
	runProjectCases(t, []projectCase{
		{
			name: "a container the build prepends stays out, the main container's edit lands on it",
			s:    "[{name: web, image: a}]",
			r:    "[{name: sidecar, image: s}, {name: web, image: a}]",
			l:    "[{name: sidecar, image: s}, {name: web, image: b}]",
			want: "[{name: web, image: b}]",
		},
		{
			name: "a container the build appends stays out",
			s:    "[{name: web, image: a}]",
			r:    "[{name: web, image: a}, {name: sidecar, image: s}]",
			l:    "[{name: web, image: b}, {name: sidecar, image: s}]",
			want: "[{name: web, image: b}]",
		},
		{
			name: "an element live adds is appended",
			s:    "[{name: web}]",
			r:    "[{name: sidecar}, {name: web}]",
			l:    "[{name: sidecar}, {name: web}, {name: extra, v: 1}]",
			want: "[{name: web}, {name: extra, v: 1}]",
		},
		{
			name: "an element live removes is removed",
			s:    "[{name: web}, {name: api}]",
			r:    "[{name: web}, {name: api}]",
			l:    "[{name: web}]",
			want: "[{name: web}]",
		},
		{
			name: "an element the build dropped and live lacks stays in the source",
			s:    "[{name: web, v: 1}, {name: gone}]",
			r:    "[{name: web, v: 1}]",
			l:    "[{name: web, v: 2}]",
			want: "[{name: web, v: 2}, {name: gone}]",
		},
		{
			name: "an element the build added and live edited gets the edited fields only",
			s:    "[{name: web}]",
			r:    "[{name: sidecar, image: s, port: 1}, {name: web}]",
			l:    "[{name: sidecar, image: s2, port: 1}, {name: web}]",
			want: "[{name: web}, {name: sidecar, image: s2}]",
		},
		{
			name: "the source's order is kept when live reorders",
			s:    "[{name: a, v: 1}, {name: b, v: 1}]",
			r:    "[{name: a, v: 1}, {name: b, v: 1}]",
			l:    "[{name: b, v: 2}, {name: a, v: 1}]",
			want: "[{name: a, v: 1}, {name: b, v: 2}]",
		},
		{
			name: "an empty source list takes what live adds",
			s:    "[]",
			r:    "[{name: a}]",
			l:    "[{name: a}, {name: b}]",
			want: "[{name: b}]",
		},
		{
			name: "an unnamed list inside a named element is placed by the element's name",
			s:    "{containers: [{name: web, args: [a]}]}",
			r:    "{containers: [{name: log}, {name: web, args: [a]}]}",
			l:    "{containers: [{name: log}, {name: web, args: [a, b]}]}",
			want: "{containers: [{name: web, args: [a, b]}]}",
		},
	})
}

func TestProjectRefusesAListBothTheBuildAndLiveRewroteWithoutNames(t *testing.T) {
	runProjectCases(t, []projectCase{
		{
			name: "strings the build rewrote and live changed",
			s:    "{args: [a]}", r: "{args: [b]}", l: "{args: [c]}",
			refused: "args",
		},
		{
			name: "a list the build added and live changed",
			s:    "{}", r: "{tolerations: [{key: a}]}", l: "{tolerations: [{key: a}, {key: b}]}",
			refused: "tolerations",
		},
		{
			name:    "duplicate names are no names",
			s:       "{l: [{name: x, v: 1}, {name: x, v: 2}]}",
			r:       "{l: [{name: x, v: 1}, {name: x, v: 3}]}",
			l:       "{l: [{name: x, v: 1}, {name: x, v: 4}]}",
			refused: "l",
		},
		{
			name: "elements without a name field",
			s:    "{l: [{key: a}]}", r: "{l: [{key: b}]}", l: "{l: [{key: c}]}",
			refused: "l",
		},
		{
			name: "named render and live over an unnamed source the build rewrote",
			s:    "{l: [{v: 1}]}", r: "{l: [{name: a, v: 1}]}", l: "{l: [{name: a, v: 2}]}",
			refused: "l",
		},
		{
			name:    "the refusal names the path through named elements",
			s:       "{spec: {containers: [{name: web, args: [a]}]}}",
			r:       "{spec: {containers: [{name: log}, {name: web, args: [b]}]}}",
			l:       "{spec: {containers: [{name: log}, {name: web, args: [c]}]}}",
			refused: "spec.containers[name=web].args",
		},
	})
}

func TestProjectUnnamedTakesTheLiveListOnlyWhenTheBuildLeftItAlone(t *testing.T) {
	s, l := jv(t, "[a, b]"), jv(t, "[a, b, c]")
	got, err := projectUnnamed(s, jv(t, "[a, b]"), l, fieldPath{{key: "args"}}, "obj")
	if err != nil || !equal(got, l) {
		t.Fatalf("projectUnnamed over an unchanged list = %v, %v; want the live list", got, err)
	}
	_, err = projectUnnamed(s, jv(t, "[b, a]"), l, fieldPath{{key: "args"}}, "obj")
	r := wantRefusal(t, err, CodeUnplaceable, "args")
	if r.Object != "obj" {
		t.Errorf("the refusal names %q, want obj", r.Object)
	}
}

func TestProjectNamedFallsBackToUnnamedForAnUnnamedSource(t *testing.T) {
	rl := jv(t, "[{name: a, v: 1}]").([]any)
	ll := jv(t, "[{name: a, v: 2}]").([]any)
	got, err := projectNamed(jv(t, "[{name: a, v: 1}]"), rl, ll, nil, "obj")
	if err != nil || !equal(got, jv(t, "[{name: a, v: 2}]")) {
		t.Fatalf("projectNamed = %v, %v", got, err)
	}
	// The source's elements have no names, and the build rewrote the list.
	_, err = projectNamed(jv(t, "[{v: 0}]"), rl, ll, fieldPath{{key: "l"}}, "obj")
	wantRefusal(t, err, CodeUnplaceable, "l")
}

func TestAFieldPathNamesListElementsByNameOrPosition(t *testing.T) {
	cases := []struct {
		path fieldPath
		want string
	}{
		{nil, "(document)"},
		{fieldPath{{key: "data"}, {key: "color"}}, "data.color"},
		{fieldPath{{key: "spec"}, {key: "containers"}, {list: true, name: "web"}, {key: "image"}}, "spec.containers[name=web].image"},
		{fieldPath{{key: "args"}, {list: true, index: 2}}, "args[2]"},
	}
	for _, tc := range cases {
		if got := tc.path.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestGetAndSetFollowNamedAndIndexedPaths(t *testing.T) {
	doc := jv(t, "{spec: {containers: [{name: log, image: l}, {name: web, image: w}], args: [a, b]}}")
	byName := fieldPath{{key: "spec"}, {key: "containers"}, {list: true, name: "web"}, {key: "image"}}
	if v, ok := get(doc, byName); !ok || v != "w" {
		t.Fatalf("get by name = %v, %v", v, ok)
	}
	if !set(doc, byName, "w2") {
		t.Fatal("set by name failed")
	}
	byIndex := fieldPath{{key: "spec"}, {key: "args"}, {list: true, index: 1}}
	if !set(doc, byIndex, "b2") {
		t.Fatal("set by index failed")
	}
	want := jv(t, "{spec: {containers: [{name: log, image: l}, {name: web, image: w2}], args: [a, b2]}}")
	if !equal(doc, want) {
		t.Errorf("after set: %v", doc)
	}
	missing := fieldPath{{key: "spec"}, {key: "containers"}, {list: true, name: "none"}, {key: "image"}}
	if _, ok := get(doc, missing); ok {
		t.Error("get of a missing element succeeded")
	}
	if set(doc, missing, "x") {
		t.Error("set of a missing element succeeded")
	}
}

func TestFirstDifferenceNamesTheFirstFieldThatDiffers(t *testing.T) {
	a := jv(t, "{metadata: {labels: {env: prod}}, spec: {containers: [{name: web, image: a}]}}")
	b := jv(t, "{metadata: {labels: {env: prod}}, spec: {containers: [{name: web, image: b}]}}")
	if got := firstDifference(a, b, nil); got != "spec.containers[name=web].image" {
		t.Errorf("firstDifference = %q", got)
	}
	if got := firstDifference(a, a, nil); got != "" {
		t.Errorf("firstDifference of equal values = %q", got)
	}
	c := jv(t, "{args: [a, b]}")
	d := jv(t, "{args: [a]}")
	if got := firstDifference(c, d, nil); got != "args" {
		t.Errorf("firstDifference of lists of other lengths = %q, want the list", got)
	}
}
