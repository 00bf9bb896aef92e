package worker

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
)

const (
	// The subject says what changed: one object by its verb, kind and name, several by
	// counts, after the name of their author.
	defaultMessageTemplate = `{{if eq .Count 1}}{{.Summary}}{{else}}{{.Author}}: {{.Summary}}{{end}}
{{range .Changes}}
- {{.Operation}} {{.Object}} ({{.Path}}){{end}}{{if .Omitted}}
- and {{.Omitted}} more{{end}}
`
	defaultResyncTemplate = `Resync: {{.Summary}}
{{range .Changes}}
- {{.Operation}} {{.Object}} ({{.Path}}){{end}}{{if .Omitted}}
- and {{.Omitted}} more{{end}}
`
)

// messageData is what message templates see.
type messageData struct {
	Author    string
	GitTarget string
	// Count is the number of changes, listed or not.
	Count int
	// Summary says what changed (changeList.summarize): "update ConfigMap
	// demo/app-config", "create 3, update 2 in demo".
	Summary string
	// Changes are the first maxListedChanges changes; Omitted counts the others.
	Changes []changeLine
	Omitted int
}

// changeLine is one changed object in a commit message.
type changeLine struct {
	// Operation is create, update, delete or prune (a sweep's delete).
	Operation string
	// Object is the object's identity ("core/ConfigMap demo/app-config").
	Object string
	// Kind, Namespace and Name ("demo/app-config", or "admin" when cluster-scoped) name
	// it for a reader.
	Kind, Namespace, Name string
	Path                  string
}

// messages renders commit messages from the configured templates.
type messages struct {
	window, resync *template.Template
}

func newMessages(windowTpl, resyncTpl string) (*messages, error) {
	if windowTpl == "" {
		windowTpl = defaultMessageTemplate
	}
	if resyncTpl == "" {
		resyncTpl = defaultResyncTemplate
	}
	w, err := template.New("message").Parse(windowTpl)
	if err != nil {
		return nil, fmt.Errorf("commit message template: %w", err)
	}
	r, err := template.New("resync").Parse(resyncTpl)
	if err != nil {
		return nil, fmt.Errorf("resync message template: %w", err)
	}
	return &messages{window: w, resync: r}, nil
}

// render writes the message of a batch. A CommitRequest's message replaces the subject.
func (m *messages) render(b *batch, changes *changeList) string {
	return withTrailers(m.body(b, changes), b.events)
}

// auditTrailer starts the trailer of a change's audit event (attribution.Trailers), one
// per change; the others name its user and impersonator, a few per commit.
const auditTrailer = "Audit-ID:"

// withTrailers ends a message with the trailers of its events, each line once, as the last
// paragraph (where `git interpret-trailers` finds them). Of the Audit-ID lines, and of the
// others, the first maxListedChanges each are listed; an Audit-IDs-Omitted and a
// Trailers-Omitted line count the distinct lines left out, so that no user or
// impersonator is left out for the many audit events before them.
func withTrailers(msg string, events []Event) string {
	var lines []string
	var listed, omitted [2]int // Audit-ID lines, the others
	seen := map[string]bool{}
	for _, ev := range events {
		for _, l := range ev.Trailers {
			if seen[l] {
				continue
			}
			seen[l] = true
			kind := 1
			if strings.HasPrefix(l, auditTrailer) {
				kind = 0
			}
			if listed[kind] < maxListedChanges {
				lines = append(lines, l)
				listed[kind]++
			} else {
				omitted[kind]++
			}
		}
	}
	if omitted[0] > 0 {
		lines = append(lines, fmt.Sprintf("Audit-IDs-Omitted: %d", omitted[0]))
	}
	if omitted[1] > 0 {
		lines = append(lines, fmt.Sprintf("Trailers-Omitted: %d", omitted[1]))
	}
	if len(lines) == 0 {
		return msg
	}
	return strings.TrimRight(msg, "\n") + "\n\n" + strings.Join(lines, "\n") + "\n"
}

func (m *messages) body(b *batch, changes *changeList) string {
	tpl := m.window
	if len(b.snapshots) > 0 {
		tpl = m.resync
	}
	data := messageData{Author: b.author.Name, GitTarget: b.target, Count: changes.total, Summary: changes.summarize(),
		Changes: changes.listed, Omitted: changes.omitted()}
	if b.message != "" {
		var body bytes.Buffer
		body.WriteString(b.message)
		body.WriteString("\n")
		for _, c := range data.Changes {
			fmt.Fprintf(&body, "\n- %s %s (%s)", c.Operation, c.Object, c.Path)
		}
		if data.Omitted > 0 {
			fmt.Fprintf(&body, "\n- and %d more", data.Omitted)
		}
		return body.String() + "\n"
	}
	var out bytes.Buffer
	if err := tpl.Execute(&out, data); err != nil {
		// A template that fails on real data still must not lose the commit.
		return fmt.Sprintf("%s: %s\n", data.Author, data.Summary)
	}
	return out.String()
}
