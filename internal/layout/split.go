package layout

import (
	"slices"
	"strings"
)

// utf8BOM is the byte order mark some editors put at the start of a file.
const utf8BOM = "\ufeff"

// segment is one document of a file as text: the separator line that opens it
// (with its line ending; "" for a first document without one) and the lines
// after it up to the next separator line.
type segment struct {
	sep  string
	body string
}

// splitFile is a file cut into segments. Joining bom and all segments in
// order gives back the original bytes exactly.
type splitFile struct {
	bom  string
	segs []segment
}

// splitDocuments cuts content on separator lines ("---", optionally followed
// by blanks and a comment). It never fails: every byte lands in a segment.
func splitDocuments(content string) splitFile {
	var f splitFile
	if strings.HasPrefix(content, utf8BOM) {
		f.bom, content = utf8BOM, content[len(utf8BOM):]
	}
	// A segment's body is the lines between two separators: a slice of content, not a copy.
	cur := segment{}
	start, at := 0, 0
	for line := range strings.Lines(content) {
		if isSeparatorLine(line) {
			cur.body = content[start:at]
			f.segs = append(f.segs, cur)
			cur = segment{sep: line}
			start = at + len(line)
		}
		at += len(line)
	}
	cur.body = content[start:]
	f.segs = append(f.segs, cur)
	// A file that starts with a separator has an empty segment before it;
	// keep the separator with the first document instead.
	if len(f.segs) > 1 && f.segs[0].sep == "" && f.segs[0].body == "" {
		f.segs = f.segs[1:]
	}
	return f
}

// join gives back the file's bytes.
func (f splitFile) join() []byte {
	var b strings.Builder
	b.WriteString(f.bom)
	for _, s := range f.segs {
		b.WriteString(s.sep)
		b.WriteString(s.body)
	}
	return []byte(b.String())
}

// splitLines cuts s into lines that keep their line endings; the last line may
// have none.
func splitLines(s string) []string { return slices.Collect(strings.Lines(s)) }

// trimEOL removes a trailing "\n" or "\r\n".
func trimEOL(line string) string {
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r")
}

// isMarkerLine reports whether line is marker ("---" or "...") at column 0,
// optionally followed by blanks and a comment.
func isMarkerLine(line, marker string) bool {
	l := trimEOL(line)
	if !strings.HasPrefix(l, marker) {
		return false
	}
	rest := l[len(marker):]
	if rest == "" {
		return true
	}
	if rest[0] != ' ' && rest[0] != '\t' {
		return false
	}
	rest = strings.TrimLeft(rest, " \t")
	return rest == "" || rest[0] == '#'
}

func isSeparatorLine(line string) bool { return isMarkerLine(line, "---") }

func isDocEndLine(line string) bool { return isMarkerLine(line, "...") }

// isTriviaLine reports whether a line carries no content: blank, a comment, a
// directive or a document end marker.
func isTriviaLine(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || t[0] == '#' || strings.HasPrefix(line, "%") || isDocEndLine(line)
}

// isEmptyBody reports whether a segment holds no document at all.
func isEmptyBody(body string) bool {
	for l := range strings.Lines(body) {
		if !isTriviaLine(l) {
			return false
		}
	}
	return true
}

// splitTrivia cuts a document body into leading trivia lines, the content
// lines, and trailing trivia lines. Trailing lines that look like comments
// may still belong to a block scalar; callers check that the cut keeps the
// document's meaning.
func splitTrivia(body string) (lead, core, tail string) {
	lines := splitLines(body)
	first, last := -1, -1
	for i, l := range lines {
		if !isTriviaLine(l) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return body, "", ""
	}
	return strings.Join(lines[:first], ""), strings.Join(lines[first:last+1], ""), strings.Join(lines[last+1:], "")
}
