package worker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// A commit message lists at most maxListedChanges changes, says how many more there are,
// and its subject and .Count count them all: the default templates, a custom one, and a
// CommitRequest's message alike.
func TestACommitMessageListsAThousandChangesAndCountsAll(t *testing.T) {
	const n = maxListedChanges + 500
	actions := make([]action, n)
	for i := range actions {
		actions[i] = action{op: OpUpsert, id: layout.Identity{Kind: "ConfigMap", Namespace: "demo", Name: fmt.Sprintf("cm-%05d", i)}, created: true}
	}
	m, err := newMessages("{{.Count}} {{len .Changes}} {{.Omitted}}", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.render(&batch{target: "demo/live"}, listOf(actions...)); got != "1500 1000 500" {
		t.Errorf("a custom template saw %q, want .Count 1500, 1000 .Changes, .Omitted 500", got)
	}
	defaults, err := newMessages("", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*batch{
		"a window":          {target: "demo/live", author: Author{Name: "alice"}},
		"a resync":          {target: "demo/live", snapshots: []*Snapshot{{}}},
		"a CommitRequest's": {target: "demo/live", message: "release 1.2"},
	} {
		msg := defaults.render(b, listOf(actions...))
		if lines := strings.Count(msg, "\n- create "); lines != maxListedChanges {
			t.Errorf("%s message lists %d changes, want %d", name, lines, maxListedChanges)
		}
		if !strings.Contains(msg, "\n- and 500 more\n") {
			t.Errorf("%s message does not say how many it leaves out:\n%s", name, msg[len(msg)-200:])
		}
		if strings.Contains(msg, "cm-01000") {
			t.Errorf("%s message lists a change past the first %d", name, maxListedChanges)
		}
		if subject, _, _ := strings.Cut(msg, "\n"); name != "a CommitRequest's" && !strings.Contains(subject, "create 1500 in demo") {
			t.Errorf("%s subject %q does not count every change", name, subject)
		}
	}
}

// The trailers that end a message are bounded alike: the first maxListedChanges Audit-ID
// lines, each once, then a line that counts the distinct others; a user or an impersonator
// named after them is still listed.
func TestACommitMessageEndsWithAThousandAuditTrailers(t *testing.T) {
	b := &batch{target: "demo/live", author: Author{Name: "alice"}}
	for i := range maxListedChanges + 500 {
		trailers := []string{fmt.Sprintf("Audit-ID: %05d", i), "Kubernetes-User: alice"}
		if i == maxListedChanges+100 {
			trailers = append(trailers, "Kubernetes-Impersonator: admin")
		}
		b.events = append(b.events, Event{Trailers: trailers})
		if i%2 == 0 { // a change seen twice (two events of one request) is one line
			b.events = append(b.events, Event{Trailers: trailers})
		}
	}
	m, err := newMessages("", "")
	if err != nil {
		t.Fatal(err)
	}
	msg := m.render(b, listOf(action{op: OpUpsert, id: layout.Identity{Kind: "ConfigMap", Namespace: "demo", Name: "a"}}))
	if n := strings.Count(msg, "\nAudit-ID: "); n != maxListedChanges {
		t.Errorf("the message holds %d Audit-ID trailers, want %d", n, maxListedChanges)
	}
	for _, line := range []string{"\nKubernetes-User: alice\n", "\nKubernetes-Impersonator: admin\n"} {
		if n := strings.Count(msg, line); n != 1 {
			t.Errorf("the message holds %q %d times, want once", strings.TrimSpace(line), n)
		}
	}
	if !strings.HasSuffix(msg, "\nAudit-IDs-Omitted: 500\n") {
		t.Errorf("the message does not end by counting the Audit-ID trailers it leaves out:\n%s", msg[len(msg)-200:])
	}
	if strings.Contains(msg, "Trailers-Omitted") {
		t.Errorf("the message counts other trailers as left out, and none was")
	}
}
