package layout

import "strings"

// Reading a file's identities without parsing it: loading a folder of 50,000 files spent
// most of its time parsing documents it never needed (docs/layout.md#reading-a-folder).

// scanIdentities returns the identities of a YAML file's object documents, read from the
// lines of each document's top-level mapping and of its metadata alone. It reads only the
// plain block style (what the writer renders, and what most hand-written files hold);
// anything it cannot read with certainty makes ok false and the caller parses the file:
// flow style or a quote not closed on its line, an anchor or tag before a value, an alias
// where an identity is, a merge key, a key that is not a plain word, a key defined twice
// at those levels, a tab, a carriage return or another of YAML's line breaks. When ok is
// true and the file parses, the parse finds the same identities; the lines the scan skips
// are not checked: the file is parsed when an edit first reads it
// (docs/layout.md#reading-a-folder).
func scanIdentities(content []byte) (ids []Identity, ok bool) {
	text := string(content)
	// yaml.v3 also breaks lines at NEL, LS and PS: a line of the scan could be two of its.
	if strings.ContainsAny(text, "\r\t\u0085\u2028\u2029") {
		return nil, false
	}
	for _, s := range splitDocuments(text).segs {
		if isEmptyBody(s.body) {
			continue
		}
		id, ok := scanDocument(s.body)
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// docScan is what scanDocument has read of one document so far.
type docScan struct {
	top, meta  []string // keys seen at the top level and in metadata
	apiVersion string
	kind       string
	name       string
	namespace  string
}

// scanDocument reads the identity of one document body line by line.
func scanDocument(body string) (Identity, bool) {
	var d docScan
	section := ""    // the top-level key whose nested lines follow
	valued := false  // the last key line at the current level had a value on its line
	metaIndent := -1 // the indentation of metadata's keys, once seen
	metaKey := ""    // the metadata key whose nested lines follow
	opaque := -1     // lines indented more than this are a block scalar's text
	for body != "" {
		var line string
		line, body, _ = strings.Cut(body, "\n")
		rest := strings.TrimLeft(line, " ")
		indent := len(line) - len(rest)
		if rest == "" {
			continue
		}
		if opaque >= 0 {
			if indent > opaque {
				continue
			}
			opaque = -1
		}
		if rest[0] == '#' {
			continue
		}
		if !closedOnItsLine(rest) {
			return Identity{}, false
		}
		switch {
		case indent == 0:
			key, hasValue, block, ok := keyAt(rest, &d.top, d.topValue)
			if !ok {
				return Identity{}, false
			}
			section, valued = key, hasValue
			if block {
				opaque = 0
			}
		case section != "metadata":
			// Nested content of another key, or the continuation of its value.
			if valued && (section == "apiVersion" || section == "kind") {
				return Identity{}, false
			}
			if col, ok := blockScalarStart(rest, indent); ok {
				opaque = col
			}
		default:
			if metaIndent < 0 {
				metaIndent = indent
			}
			if indent < metaIndent {
				return Identity{}, false
			}
			if indent > metaIndent {
				if valued && (metaKey == "name" || metaKey == "namespace") {
					return Identity{}, false // a value continued or nested below them
				}
				if col, ok := blockScalarStart(rest, indent); ok {
					opaque = col
				}
				continue
			}
			key, hasValue, block, ok := keyAt(rest, &d.meta, d.metaValue)
			if !ok {
				return Identity{}, false
			}
			metaKey, valued = key, hasValue
			if block {
				opaque = indent
			}
		}
	}
	return d.identity()
}

// keyAt takes a key line of one level of the document (the top or metadata): a plain word
// not defined before at that level, whose value take accepts. hasValue reports a value on
// the line, block one that starts a block scalar.
func keyAt(rest string, keys *[]string, take func(key, value string) bool) (key string, hasValue, block, ok bool) {
	key, value, ok := keyLine(rest)
	if !ok || seen(*keys, key) || !take(key, value) {
		return "", false, false, false
	}
	*keys = append(*keys, key)
	return key, value != "", isBlockScalar(value), true
}

// topValue takes the value of a top-level key.
func (d *docScan) topValue(key, value string) bool {
	var ok bool
	switch key {
	case "apiVersion":
		d.apiVersion, ok = identityValue(value)
		return ok && d.apiVersion != ""
	case "kind":
		d.kind, ok = identityValue(value)
		return ok && d.kind != ""
	case "metadata":
		return value == "" // a mapping on the lines below
	}
	return true
}

// metaValue takes the value of a metadata key.
func (d *docScan) metaValue(key, value string) bool {
	var ok bool
	switch key {
	case "name":
		d.name, ok = identityValue(value)
		return ok && d.name != ""
	case "namespace":
		d.namespace, ok = identityValue(value)
		return ok
	}
	return true
}

// identity is the document's identity, when it has everything one needs.
func (d *docScan) identity() (Identity, bool) {
	if d.apiVersion == "" || d.kind == "" || d.name == "" || !seen(d.top, "metadata") {
		return Identity{}, false
	}
	// Copied: the index keeps identities long after the file's text is gone, and a slice
	// of that text would keep all of it (a first mirror of 100,000 objects held 190 MB so).
	return identityOf(strings.Clone(d.apiVersion), strings.Clone(d.kind),
		strings.Clone(d.namespace), strings.Clone(d.name)), true
}

func seen(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}

// keyLine cuts "key: value # comment" where key is a plain word; value is "" when the
// line has none.
func keyLine(rest string) (key, value string, ok bool) {
	i := 0
	for i < len(rest) && isKeyChar(rest[i], i == 0) {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != ':' {
		return "", "", false
	}
	key, value = rest[:i], rest[i+1:]
	if value != "" && value[0] != ' ' {
		return "", "", false
	}
	return key, stripComment(value), true
}

func isKeyChar(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		return true
	case c == '.' || c == '-' || c == '/':
		return !first
	}
	return false
}

// stripComment removes a trailing " # comment" and the blanks around the value. Called on
// lines closedOnItsLine accepted, whose quotes hold no " #" that is not a comment: a
// quoted value with one is refused by identityValue, and other values are not read.
func stripComment(value string) string {
	if i := strings.Index(value, " #"); i >= 0 {
		value = value[:i]
	}
	return strings.Trim(value, " ")
}

// identityValue reads a plain or quoted scalar written on one line, with no escapes: the
// text the parser gives for it. ok is false for anything else (null, an anchor, alias or
// tag, a flow collection, a block scalar, an escape, a character outside the plain set).
func identityValue(v string) (string, bool) {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		inner := v[1 : len(v)-1]
		if v[len(v)-1] != v[0] || strings.ContainsAny(inner, "\"'\\#") || !plainText(inner, true) {
			return "", false
		}
		return inner, true
	}
	if v == "" || v == "~" || strings.EqualFold(v, "null") || !isAlnum(v[0]) || v[len(v)-1] == ':' {
		return "", false
	}
	return v, plainText(v, false)
}

// plainText accepts letters, digits and . _ - / : (and spaces, inside quotes).
func plainText(s string, quoted bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlnum(c), c == '.', c == '_', c == '-', c == '/':
		case c == ':' && (i+1 == len(s) || s[i+1] != ' '):
		case c == ' ' && quoted:
		default:
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// closedOnItsLine reports whether every quoted scalar and flow collection the line opens
// is closed on it, so that no later line can belong to one of them. A quote or bracket
// opens one only where a scalar starts (the line's start, after "- ", "? ", ": ", and in
// a flow collection after "[", "{" or ","); elsewhere it is a character of a plain scalar.
func closedOnItsLine(rest string) bool {
	depth := 0
	var quote byte
	start := true // a scalar may start here
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		next := byte(' ')
		if i+1 < len(rest) {
			next = rest[i+1]
		}
		switch {
		case quote == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				quote = 0
			}
		case quote == '\'':
			if c == '\'' && next == '\'' && i+1 < len(rest) {
				i++
			} else if c == '\'' {
				quote = 0
			}
		case c == ' ':
		case c == '#' && (i == 0 || rest[i-1] == ' '):
			return depth == 0
		case (c == '&' || c == '!') && start:
			return false // an anchor or a tag: the scalar or collection after it is not read here
		case (c == '"' || c == '\'') && start:
			quote, start = c, false
		case (c == '[' || c == '{') && (start || depth > 0):
			depth++
			start = true
		case (c == ']' || c == '}') && depth > 0:
			depth--
			start = false
		case c == ',' && depth > 0:
			start = true
		case c == ':' && (next == ' ' || depth > 0):
			start = true // in a flow collection a value may follow a quoted key at once
		case (c == '-' || c == '?') && next == ' ':
			// "- " and "? " start a scalar only where one could start anyway.
		default:
			start = false
		}
	}
	return quote == 0 && depth == 0
}

// isBlockScalar reports a value that starts a block scalar ("|", ">-", "|2" …).
func isBlockScalar(value string) bool {
	if value == "" || (value[0] != '|' && value[0] != '>') {
		return false
	}
	for i := 1; i < len(value); i++ {
		if c := value[i]; c != '-' && c != '+' && (c < '1' || c > '9') {
			return false
		}
	}
	return true
}

// blockScalarStart reports a nested line at column indent ("key: |", "- |", "- key: >-")
// whose value starts a block scalar, and the column of the node that holds it: the lines
// indented more than that are its text. Only a plain word is taken for the key.
func blockScalarStart(rest string, indent int) (int, bool) {
	col := indent
	for strings.HasPrefix(rest, "- ") {
		after := strings.TrimLeft(rest[2:], " ")
		if isBlockScalar(stripComment(after)) {
			return col, true // "- |": the entry of the sequence at this dash's column
		}
		col += len(rest) - len(after)
		rest = after
	}
	if _, value, ok := keyLine(rest); ok && isBlockScalar(value) {
		return col, true
	}
	return 0, false
}
