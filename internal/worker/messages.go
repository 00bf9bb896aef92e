package worker

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
)

const (
	defaultMessageTemplate = `{{.Author}} on {{.GitTarget}}: {{.Count}} resource(s)
{{range .Changes}}
- {{.Operation}} {{.Object}} ({{.Path}}){{end}}
`
	defaultResyncTemplate = `Resync {{.GitTarget}}: {{.Count}} change(s)
{{range .Changes}}
- {{.Operation}} {{.Object}} ({{.Path}}){{end}}
`
)

// messageData is what message templates see.
type messageData struct {
	Author    string
	GitTarget string
	Count     int
	Changes   []changeLine
}

// changeLine is one changed object in a commit message.
type changeLine struct {
	Operation string
	Object    string
	Path      string
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
func (m *messages) render(b *batch, changes []changeLine) string {
	return withTrailers(m.body(b, changes), b.events)
}

// withTrailers ends a message with the trailers of its events, each line once, as the last
// paragraph (where `git interpret-trailers` finds them).
func withTrailers(msg string, events []Event) string {
	var lines []string
	seen := map[string]bool{}
	for _, ev := range events {
		for _, l := range ev.Trailers {
			if !seen[l] {
				seen[l] = true
				lines = append(lines, l)
			}
		}
	}
	if len(lines) == 0 {
		return msg
	}
	return strings.TrimRight(msg, "\n") + "\n\n" + strings.Join(lines, "\n") + "\n"
}

func (m *messages) body(b *batch, changes []changeLine) string {
	tpl := m.window
	if len(b.snapshots) > 0 {
		tpl = m.resync
	}
	data := messageData{Author: b.author.Name, GitTarget: b.target, Count: len(changes), Changes: changes}
	if b.message != "" {
		var body bytes.Buffer
		body.WriteString(b.message)
		body.WriteString("\n")
		for _, c := range changes {
			fmt.Fprintf(&body, "\n- %s %s (%s)", c.Operation, c.Object, c.Path)
		}
		return body.String() + "\n"
	}
	var out bytes.Buffer
	if err := tpl.Execute(&out, data); err != nil {
		// A template that fails on real data still must not lose the commit.
		return fmt.Sprintf("%s on %s: %d resource(s)\n", data.Author, data.GitTarget, data.Count)
	}
	return out.String()
}
