package layout

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// objectDoc is one Kubernetes object document of a file.
type objectDoc struct {
	seg     int        // index of its segment in the split file
	node    *yaml.Node // the parsed document (a DocumentNode)
	meaning any        // what node says, decoded (see meaningOf): compared, never changed
	id      Identity
}

// parsedFile is a file of object documents: its text cut into segments and the
// object documents found in them, in order.
type parsedFile struct {
	text splitFile
	docs []objectDoc
}

// contentProblem is a reason a file cannot be understood. It becomes an
// UnsupportedContentError once the file's path is known.
type contentProblem struct{ reason string }

func (p *contentProblem) Error() string { return p.reason }

func problemf(format string, args ...any) error {
	return &contentProblem{reason: fmt.Sprintf(format, args...)}
}

// asUnsupported turns a contentProblem into an UnsupportedContentError for path
// and leaves other errors as they are.
func asUnsupported(path string, err error) error {
	var p *contentProblem
	if errors.As(err, &p) {
		return &UnsupportedContentError{Path: path, Reason: p.reason}
	}
	return err
}

// parseObjects parses every document of a YAML file. Empty documents are
// skipped; any other document must be a Kubernetes object.
func parseObjects(content []byte) (*parsedFile, error) {
	pf := &parsedFile{text: splitDocuments(string(content))}
	line := 1
	for i, s := range pf.text.segs {
		if s.sep != "" {
			line++
		}
		lead, _, _ := splitTrivia(s.body)
		start := line + strings.Count(lead, "\n")
		line += strings.Count(s.body, "\n")
		if isEmptyBody(s.body) {
			continue
		}
		node, meaning, err := parseMeaning(s.body)
		if err != nil {
			return nil, problemf("invalid YAML in the document at line %d: %s; fix the syntax",
				start, fileLines(err.Error(), line-strings.Count(s.body, "\n")-1))
		}
		if node == nil {
			continue
		}
		id, ok := identityOfNode(node)
		if !ok {
			return nil, problemf("the document at line %d is not a Kubernetes object (it needs apiVersion, kind and metadata.name); remove it or move it out of the folder", start)
		}
		pf.docs = append(pf.docs, objectDoc{seg: i, node: node, meaning: meaning, id: id})
	}
	return pf, nil
}

// parseSingle parses text that must hold exactly one Kubernetes object document.
func parseSingle(doc []byte) (objectDoc, error) {
	pf, err := parseObjects(doc)
	if err != nil {
		return objectDoc{}, err
	}
	if len(pf.docs) != 1 {
		return objectDoc{}, fmt.Errorf("want exactly one object document, found %d", len(pf.docs))
	}
	return pf.docs[0], nil
}

// parseDocument parses the text of one segment. It returns nil for a segment
// without a document, and an error for invalid YAML, more than one document,
// or duplicate mapping keys.
func parseDocument(text string) (*yaml.Node, error) {
	node, _, err := parseMeaning(text)
	return node, err
}

// parseMeaning parses text as parseDocument does and also returns what the document
// means (see meaningOf): the decoding that checks the document is the one a comparison
// needs, so a caller that compares does not decode it again.
func parseMeaning(text string) (node *yaml.Node, meaning any, err error) {
	defer func() {
		if r := recover(); r != nil {
			node, meaning, err = nil, nil, fmt.Errorf("yaml parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(strings.NewReader(text))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, &n)
	}
	switch len(docs) {
	case 0:
		return nil, nil, nil
	case 1:
	default:
		return nil, nil, errors.New("more than one document without a '---' separator line between them")
	}
	// Decoding into a value catches what the node parser lets through, such
	// as a key defined twice.
	meaning, err = meaningOf(docs[0])
	if err != nil {
		return nil, nil, err
	}
	return docs[0], meaning, nil
}

// meaningOf decodes a node into plain Go values, for comparing documents by
// what they say rather than how they are written.
func meaningOf(n *yaml.Node) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("yaml decoder failed: %v", r)
		}
	}()
	err = n.Decode(&v)
	return v, err
}

// fileLines rewrites a parser message about one segment so that its line
// numbers ("line N") count from the start of the file, and puts it on one line.
func fileLines(msg string, offset int) string {
	msg = strings.Join(strings.Fields(strings.TrimPrefix(msg, "yaml: ")), " ")
	var b strings.Builder
	for {
		i := strings.Index(msg, "line ")
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		i += len("line ")
		b.WriteString(msg[:i])
		msg = msg[i:]
		j := 0
		for j < len(msg) && j < 9 && msg[j] >= '0' && msg[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(msg[:j]); err == nil {
			b.WriteString(strconv.Itoa(n + offset))
			msg = msg[j:]
		}
	}
}
