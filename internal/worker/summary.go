package worker

import (
	"fmt"
	"strings"
)

// The verbs of a change line, in the order a summary counts them.
var summaryVerbs = [...]string{"create", "update", "delete", "prune"}

// summarize says what a commit changed, for its subject: the verb, kind and object of a
// single change ("update ConfigMap demo/app-config"), counts per verb for several, with
// the namespace when they share one ("create 3, update 2 in demo").
func summarize(changes []changeLine) string {
	switch len(changes) {
	case 0:
		return "no change"
	case 1:
		c := changes[0]
		return c.Operation + " " + c.Kind + " " + c.Name
	}
	counts := map[string]int{}
	for _, c := range changes {
		counts[c.Operation]++
	}
	var parts []string
	for _, v := range summaryVerbs {
		if n := counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, n))
		}
	}
	return strings.Join(parts, ", ") + scopeOf(changes)
}

// scopeOf is " in <namespace>" when every change is of one namespace, " in <n>
// namespaces" when of several, "" when all are cluster-scoped.
func scopeOf(changes []changeLine) string {
	namespaces := map[string]bool{}
	for _, c := range changes {
		if c.Namespace != "" {
			namespaces[c.Namespace] = true
		}
	}
	switch len(namespaces) {
	case 0:
		return ""
	case 1:
		for ns := range namespaces {
			return " in " + ns
		}
	}
	return fmt.Sprintf(" in %d namespaces", len(namespaces))
}

// changeLineOf is the line of a planned action whose first file is path.
func changeLineOf(a action, path string) changeLine {
	op := "update"
	switch {
	case a.sweep:
		op = "prune"
	case a.op == OpDelete:
		op = "delete"
	case a.created:
		op = "create"
	}
	name := a.id.Name
	if a.id.Namespace != "" {
		name = a.id.Namespace + "/" + a.id.Name
	}
	return changeLine{Operation: op, Object: a.id.String(), Kind: a.id.Kind, Namespace: a.id.Namespace, Name: name, Path: path}
}
