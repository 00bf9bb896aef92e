package sanitize

import (
	"testing"
)

// A node port is written only where a field manager set it: one the server allocated (in no
// manager's field set) would be refused on restore into a cluster where it is taken.
func TestANodePortIsWrittenOnlyWhereAManagerSetIt(t *testing.T) {
	service := func(managers ...map[string]any) map[string]any {
		meta := map[string]any{"name": "web", "namespace": "demo"}
		if managers != nil {
			entries := []any{}
			for _, m := range managers {
				entries = append(entries, map[string]any{"manager": "kubectl", "operation": "Update", "fieldsV1": m})
			}
			meta["managedFields"] = entries
		}
		return map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": map[string]any{
			"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": int64(31999),
			"ports": []any{
				map[string]any{"port": int64(80), "protocol": "TCP", "nodePort": int64(30080)},
				map[string]any{"port": int64(53), "protocol": "UDP", "nodePort": int64(30053)},
			},
		}}
	}
	portsOwned := func(keys ...string) map[string]any {
		ports := map[string]any{".": map[string]any{}}
		for _, k := range keys {
			ports[k] = map[string]any{".": map[string]any{}, "f:port": map[string]any{}, "f:nodePort": map[string]any{}}
		}
		return map[string]any{"f:spec": map[string]any{"f:type": map[string]any{}, "f:ports": ports}}
	}
	for _, c := range []struct {
		name                 string
		obj                  map[string]any
		tcp, udp, healthPort bool // kept
	}{
		{"allocated, every port", service(map[string]any{"f:spec": map[string]any{"f:type": map[string]any{}}}), false, false, false},
		{"set by the user for TCP only", service(portsOwned(`k:{"port":80,"protocol":"TCP"}`)), true, false, false},
		{"set for UDP by one manager, the health check port by another", service(portsOwned(`k:{"port":53,"protocol":"UDP"}`),
			map[string]any{"f:spec": map[string]any{"f:healthCheckNodePort": map[string]any{}}}), false, true, true},
		{"no managedFields: nothing tells, all kept", service(), true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := Clean(c.obj)
			for _, k := range []struct {
				path []any
				want bool
			}{{p("spec", "ports", 0, "nodePort"), c.tcp}, {p("spec", "ports", 1, "nodePort"), c.udp}, {p("spec", "healthCheckNodePort"), c.healthPort}} {
				if _, got := lookup(out, k.path...); got != k.want {
					t.Errorf("%v kept = %v, want %v", k.path, got, k.want)
				}
			}
			if _, ok := lookup(out, "spec", "ports", 0, "port"); !ok {
				t.Error("the port itself was removed")
			}
		})
	}
}
