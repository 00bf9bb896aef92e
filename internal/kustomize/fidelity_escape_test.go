package kustomize

import "testing"

func TestAnEscapedTokenThatLiveHoldsUnescapedIsNoDivergence(t *testing.T) {
	render := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: script\ndata:\n  run: echo $${HOME}\n")
	live := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: script\ndata:\n  run: echo ${HOME}\n")
	if d, err := RenderDivergence("script", render, live); err != nil || d != nil {
		t.Fatalf("Flux writes $${HOME} as ${HOME}; got divergence %v, %v", d, err)
	}
	substituted := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: script\ndata:\n  run: echo /root\n")
	if d, _ := RenderDivergence("script", render, substituted); d == nil {
		t.Fatal("a value that is neither the render nor its unescaped form is a divergence")
	}
}
