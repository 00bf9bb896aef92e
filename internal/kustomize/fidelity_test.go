package kustomize

import (
	"strings"
	"testing"
)

// Render fidelity (docs/kustomize.md#render-fidelity): a rendered value holding a ${...}
// token must equal the live value.

const tokenConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  host: ${CLUSTER_HOST}
  url: https://${CLUSTER_HOST}/api
  shell: $(HOSTNAME)
  plain: blue
`

func TestASubstitutedTokenIsADivergenceNamingTheTokenAndTheField(t *testing.T) {
	cases := []struct {
		name, render, live string
		field, token       string
	}{
		{
			name:   "whole value",
			render: tokenConfigMap,
			live:   strings.Replace(tokenConfigMap, "host: ${CLUSTER_HOST}", "host: prod.example.com", 1),
			field:  "data.host", token: "${CLUSTER_HOST}",
		},
		{
			name:   "inside a value",
			render: tokenConfigMap,
			live:   strings.Replace(tokenConfigMap, "https://${CLUSTER_HOST}/api", "https://prod.example.com/api", 1),
			field:  "data.url", token: "${CLUSTER_HOST}",
		},
		{
			name:   "field gone from live",
			render: tokenConfigMap,
			live:   strings.Replace(tokenConfigMap, "  host: ${CLUSTER_HOST}\n", "", 1),
			field:  "data.host", token: "${CLUSTER_HOST}",
		},
		{
			name:   "in a named list",
			render: strings.Replace(webDeployment, "nginx:1.25", "registry.example.com/web:${WEB_TAG}", 1),
			live:   strings.Replace(webDeployment, "nginx:1.25", "registry.example.com/web:1.4.2", 1),
			field:  "spec.template.spec.containers[name=web].image", token: "${WEB_TAG}",
		},
		{
			name:   "in an unnamed list",
			render: strings.Replace(webDeployment, `"8080"`, `"${PORT}"`, 1),
			live:   webDeployment,
			field:  "spec.template.spec.containers[name=web].args[1]", token: "${PORT}",
		},
		{
			name:   "a default in the token",
			render: strings.Replace(settingsConfigMap, "color: blue", "color: ${COLOR:=blue}", 1),
			live:   settingsConfigMap,
			field:  "data.color", token: "${COLOR:=blue}",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := RenderDivergence("core/ConfigMap prod/settings", []byte(tc.render), []byte(tc.live))
			if err != nil {
				t.Fatalf("RenderDivergence: %v", err)
			}
			if d == nil {
				t.Fatal("no divergence, though live holds another value")
			}
			if d.Field != tc.field || d.Token != tc.token || d.Object != "core/ConfigMap prod/settings" {
				t.Errorf("divergence %+v, want field %q token %q", d, tc.field, tc.token)
			}
			if s := d.String(); !strings.Contains(s, tc.field) || !strings.Contains(s, tc.token) {
				t.Errorf("the message %q does not name the field and the token", s)
			}
		})
	}
}

// wantNoDivergence checks that RenderDivergence finds none between render and live; why
// says what the test shows.
func wantNoDivergence(t *testing.T, render, live []byte, why string) {
	t.Helper()
	if d, err := RenderDivergence("settings", render, live); err != nil || d != nil {
		t.Fatalf("RenderDivergence = %+v, %v; want none: %s", d, err, why)
	}
}

func TestALiteralTokenTheLiveObjectAlsoHoldsIsNoDivergence(t *testing.T) {
	wantNoDivergence(t, []byte(tokenConfigMap), []byte(tokenConfigMap), "live holds the token as well")
}

func TestADollarParenIsNotAToken(t *testing.T) {
	render := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  shell: $(HOSTNAME)\n  env: $HOME\n"
	live := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  shell: web-0\n  env: /root\n"
	wantNoDivergence(t, []byte(render), []byte(live), "$(...) and $NAME are no ${...} tokens")
}

func TestATokenInACommentIsNotAToken(t *testing.T) {
	render := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # set by ${FLUX}\ndata:\n  color: blue # ${COLOR}\n"
	live := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n"
	wantNoDivergence(t, []byte(render), []byte(live), "comments are not values")
}

func TestOtherDifferencesAreNotDivergences(t *testing.T) {
	live := strings.Replace(tokenConfigMap, "plain: blue", "plain: red", 1)
	wantNoDivergence(t, []byte(tokenConfigMap), []byte(live), "only token-bearing values are compared")
}

func TestALabelsTransformOverwritingATokenInTheSourceIsNoDivergence(t *testing.T) {
	f := loadEnvTokenFolder(t)
	obj, ok := f.Lookup(settingsID)
	if !ok {
		t.Fatalf("the folder renders %v", renderedIDs(f))
	}
	if got, _ := fieldAt(decodeTest(t, obj.Doc), "metadata", "labels", "env"); got != "prod" {
		t.Fatalf("the render has label env %v; the fixture needs the build to overwrite the token", got)
	}
	live := obj.Doc
	wantNoDivergence(t, obj.Doc, live, "the render no longer holds the token")
	// The source still holds the token: comparing it with live would have been wrong.
	if d, _ := RenderDivergence(settingsID.String(), []byte(envTokenSettings), live); d == nil {
		t.Fatal("the source compared with live shows no divergence; the fixture does not prove the point")
	}
}

func TestATokenTheRenderKeepsIsADivergenceWhenLiveSubstitutedIt(t *testing.T) {
	f := loadWithFile(t, "prod", "namespace: prod\nresources:\n- settings.yaml\n",
		"settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  host: ${CLUSTER_HOST}\n")
	id := inNamespace(settingsID, "prod")
	obj, _ := f.Lookup(id)
	live := liveFrom(t, f, id, func(doc map[string]any) { setFieldAt(t, doc, "prod.example.com", "data", "host") })
	d, err := RenderDivergence(id.String(), obj.Doc, live)
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || d.Field != "data.host" || d.Token != "${CLUSTER_HOST}" {
		t.Fatalf("RenderDivergence = %+v, want data.host ${CLUSTER_HOST}", d)
	}
}

func TestUnreadableDocumentsAreErrors(t *testing.T) {
	if _, err := RenderDivergence("x", []byte("a: [b"), []byte(tokenConfigMap)); err == nil {
		t.Error("an unreadable render was accepted")
	}
	if _, err := RenderDivergence("x", []byte(tokenConfigMap), []byte("a: [b")); err == nil {
		t.Error("an unreadable live document was accepted")
	}
}
