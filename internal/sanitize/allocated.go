package sanitize

import "strings"

// removeAllocated removes values the API server or a controller allocates, which no person
// wrote and which differ from cluster to cluster. meta is the object's original metadata
// (before its annotations were cleaned). Server defaults that are not allocations (a
// Service's ipFamilyPolicy, internalTrafficPolicy, sessionAffinity, an allocated nodePort
// that the update path preserves) are left to Reduce
// (docs/sanitize.md#server-defaults-are-not-edits).
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
