package sanitize

import (
	"encoding/json"
	"fmt"
	"strings"
)

// removeAllocated removes values the API server or a controller allocates, which no person
// wrote and which differ from cluster to cluster. meta is the object's original metadata
// (before its annotations were cleaned, with its managedFields). Server defaults that are
// not allocations (a Service's ipFamilyPolicy, internalTrafficPolicy, sessionAffinity) are
// left to Reduce (docs/sanitize.md#server-defaults-are-not-edits).
func removeAllocated(obj, meta map[string]any) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return
	}
	switch groupOf(apiVersion) + "/" + kind {
	case "/Service":
		removeServiceAllocations(spec)
		removeAllocatedNodePorts(spec, meta)
	case "/PersistentVolumeClaim":
		annotations, _ := meta["annotations"].(map[string]any)
		if bound, _ := annotations[boundByControllerAnnotation].(string); bound == "yes" {
			delete(spec, "volumeName")
		}
	case "apps/StatefulSet":
		removeClaimTemplateStatus(spec)
	}
}

// removeClaimTemplateStatus removes the status the API server serialises inside a
// StatefulSet's volumeClaimTemplates (`status: {phase: Pending}`): a status, like the
// object's own, is no part of what a person writes.
func removeClaimTemplateStatus(spec map[string]any) {
	templates, _ := spec["volumeClaimTemplates"].([]any)
	for _, t := range templates {
		if tm, ok := t.(map[string]any); ok {
			delete(tm, "status")
		}
	}
}

// removeServiceAllocations removes the allocated cluster IPs and IP families. A headless
// Service's clusterIP "None" is the user's choice and stays.
func removeServiceAllocations(spec map[string]any) {
	if ip, _ := spec["clusterIP"].(string); ip != "None" {
		delete(spec, "clusterIP")
	}
	delete(spec, "clusterIPs")
	delete(spec, "ipFamilies")
	// A ClusterIP Service never holds a node port; one left behind from an earlier type is
	// not meaningful. Other types keep theirs (see removeAllocated).
	if t, _ := spec["type"].(string); t == "" || t == "ClusterIP" {
		ports, _ := spec["ports"].([]any)
		for _, p := range ports {
			if pm, ok := p.(map[string]any); ok {
				delete(pm, "nodePort")
			}
		}
	}
}

// removeAllocatedNodePorts removes the node ports (spec.ports[].nodePort,
// spec.healthCheckNodePort) that no field manager set: the server allocated them, and a
// restore into a cluster where that port is taken would be refused. A port some manager
// (kubectl, an applier, a controller) holds in its field set was asked for and stays
// (docs/sanitize.md#allocated-node-ports). Without managedFields nothing tells, and every
// port stays.
func removeAllocatedNodePorts(spec, meta map[string]any) {
	owned, known := nodePortsSet(meta)
	if !known {
		return
	}
	if !owned.healthCheck {
		delete(spec, "healthCheckNodePort")
	}
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if !owned.ports[servicePortKeyOf(pm["port"], pm["protocol"])] {
			delete(pm, "nodePort")
		}
	}
}

// nodePortsSetBy is what the field managers of a Service hold of its node ports.
type nodePortsSetBy struct {
	healthCheck bool
	ports       map[string]bool // servicePortKeyOf -> a manager set that port's nodePort
}

// nodePortsSet reads the Service's managedFields; known is false when it has none.
func nodePortsSet(meta map[string]any) (nodePortsSetBy, bool) {
	entries, _ := meta["managedFields"].([]any)
	set := nodePortsSetBy{ports: map[string]bool{}}
	for _, e := range entries {
		em, _ := e.(map[string]any)
		fields, _ := em["fieldsV1"].(map[string]any)
		spec, _ := fields["f:spec"].(map[string]any)
		if _, ok := spec["f:healthCheckNodePort"]; ok {
			set.healthCheck = true
		}
		ports, _ := spec["f:ports"].(map[string]any)
		for key, v := range ports {
			fm, _ := v.(map[string]any)
			if _, ok := fm["f:nodePort"]; !ok || !strings.HasPrefix(key, "k:") {
				continue
			}
			var k struct {
				Port     any    `json:"port"`
				Protocol string `json:"protocol"`
			}
			if json.Unmarshal([]byte(key[2:]), &k) == nil {
				set.ports[servicePortKeyOf(k.Port, k.Protocol)] = true
			}
		}
	}
	return set, len(entries) > 0
}

// servicePortKeyOf is the key of a Service port in a managed field set: its port number and
// protocol (TCP when unset, as the server defaults it).
func servicePortKeyOf(port, protocol any) string {
	p, _ := protocol.(string)
	if p == "" {
		p = "TCP"
	}
	return fmt.Sprintf("%v/%s", numberOf(port), p)
}

// numberOf returns a JSON number as an int64 whatever its decoded Go type.
func numberOf(v any) any {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	return v
}

// removeDeprecatedAliases removes, from every pod spec in the content (a Pod's spec, a
// Deployment's spec.template.spec, a CronJob's spec.jobTemplate.spec.template.spec, ...),
// the deprecated serviceAccount that the server copies from serviceAccountName: when both
// hold the same name, the alias says nothing the successor does not
// (docs/sanitize.md#what-is-removed). A pod spec is a map with a containers list.
func removeDeprecatedAliases(v any) {
	switch t := v.(type) {
	case map[string]any:
		if _, podSpec := t["containers"].([]any); podSpec {
			if sa, _ := t["serviceAccount"].(string); sa != "" && sa == t["serviceAccountName"] {
				delete(t, "serviceAccount")
			}
		}
		for _, e := range t {
			removeDeprecatedAliases(e)
		}
	case []any:
		for _, e := range t {
			removeDeprecatedAliases(e)
		}
	}
}

// removeNullTemplateTimestamps removes `creationTimestamp: null` from embedded object
// metadata in the content (a Deployment's spec.template.metadata, a StatefulSet's
// volumeClaimTemplates[].metadata): the API server serialises the zero time as null there.
// A non-null value is kept.
func removeNullTemplateTimestamps(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if k == "metadata" {
				if m, ok := e.(map[string]any); ok {
					if ts, present := m["creationTimestamp"]; present && ts == nil {
						delete(m, "creationTimestamp")
					}
				}
			}
			removeNullTemplateTimestamps(e)
		}
	case []any:
		for _, e := range t {
			removeNullTemplateTimestamps(e)
		}
	}
}

// groupOf returns the API group of an apiVersion ("" for the core group "v1").
func groupOf(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}
