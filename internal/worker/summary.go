package worker

import (
	"fmt"
	"strings"
)

// The verbs of a change line, in the order a summary counts them.
var summaryVerbs = [...]string{"create", "update", "delete", "prune"}

// maxListedChanges is how many changes a commit message lists; its subject and .Count
// count them all (docs/branch-worker.md#commits). A first mirror of 100,000 objects listed
// every one, a message of 10 MB held twice until its commit was written.
const maxListedChanges = 1000

// changeList is what a commit message says of a plan's changes: the lines of the first
// maxListedChanges, and counts of all of them.
type changeList struct {
	listed []changeLine
	total  int
	counts map[string]int // per verb
	// namespaces are those of the changes; cluster-scoped ones count none.
	namespaces map[string]bool
}

// add counts the change of a planned action, and lists it with the path of its first
// file while fewer than maxListedChanges are listed.
func (l *changeList) add(a action, path func() string) {
	if l.counts == nil {
		l.counts, l.namespaces = map[string]int{}, map[string]bool{}
	}
	l.total++
	l.counts[verbOf(a)]++
	if a.id.Namespace != "" {
		l.namespaces[a.id.Namespace] = true
	}
	if len(l.listed) < maxListedChanges {
		l.listed = append(l.listed, changeLineOf(a, path()))
	}
}

// omitted is how many changes are counted and not listed.
func (l *changeList) omitted() int { return l.total - len(l.listed) }

// summarize says what a commit changed, for its subject: the verb, kind and object of a
// single change ("update ConfigMap demo/app-config"), counts per verb for several, with
// the namespace when they share one ("create 3, update 2 in demo").
func (l *changeList) summarize() string {
	switch l.total {
	case 0:
		return "no change"
	case 1:
		c := l.listed[0]
		return c.Operation + " " + c.Kind + " " + c.Name
	}
	var parts []string
	for _, v := range summaryVerbs {
		if n := l.counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", v, n))
		}
	}
	return strings.Join(parts, ", ") + l.scope()
}

// scope is " in <namespace>" when every change is of one namespace, " in <n> namespaces"
// when of several, "" when all are cluster-scoped.
func (l *changeList) scope() string {
	switch len(l.namespaces) {
	case 0:
		return ""
	case 1:
		for ns := range l.namespaces {
			return " in " + ns
		}
	}
	return fmt.Sprintf(" in %d namespaces", len(l.namespaces))
}

// verbOf is the verb of a planned action's change: create or update for an upsert, else
// the action's operation (delete, or prune for a sweep's delete).
func verbOf(a action) string {
	switch op := a.operation(); {
	case op != "upsert":
		return op
	case a.created:
		return "create"
	}
	return "update"
}

// changeLineOf is the line of a planned action whose first file is path.
func changeLineOf(a action, path string) changeLine {
	name := a.id.Name
	if a.id.Namespace != "" {
		name = a.id.Namespace + "/" + a.id.Name
	}
	return changeLine{Operation: verbOf(a), Object: a.id.String(), Kind: a.id.Kind, Namespace: a.id.Namespace, Name: name, Path: path}
}
