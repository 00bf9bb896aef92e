package layout

import (
	"fmt"
	"path"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Upsert writes doc (ONE YAML document of a Kubernetes object: apiVersion,
// kind, metadata.name, optional metadata.namespace, ...) into the folder.
//
// An existing document of the same identity is edited where it lives;
// a new one is placed by the placement ladder (see Placement). Upsert does not
// change ix: the caller applies the edits and then calls ix.Update for each.
// Returns nil edits when the document already holds exactly this content (no-op).
func Upsert(ix *Index, read ReadFile, t TypeInfo, doc []byte, p Placement) ([]FileEdit, error) {
	return UpsertPrepared(ix, read, t, Prepare(doc, false), p)
}

// Prepared is a document parsed for Upsert ahead of the plan that writes it: parsing is
// most of an upsert's work and needs neither the index nor the folder, so a plan prepares
// many documents at once and writes them one after another. A Prepared is written once:
// the write may take its parsed form over.
type Prepared struct {
	doc []byte
	d   objectDoc
	err error // doc cannot be written
	// unparsed is set by PrepareRendered: d holds the identity only, and doc is the text
	// of a new file.
	unparsed bool
	// rendered is doc as a new file holds it, made ahead when the folder was thought not to
	// hold it (rendered or renderErr set).
	rendered  string
	renderErr error
}

// Prepare parses doc for UpsertPrepared. absent says the folder does not hold the object
// yet, so the text a new file holds is made too; a wrong guess costs only that work.
// Prepare is safe to call from many goroutines at once: it reads nothing but doc.
func Prepare(doc []byte, absent bool) *Prepared {
	d, err := parseSingle(doc)
	if err == nil {
		err = checkSafeIdentity(d.id)
	}
	if err != nil {
		return &Prepared{doc: doc, err: fmt.Errorf("upsert: %w", err)}
	}
	blockStyle(d.node)
	pr := &Prepared{doc: doc, d: d}
	if absent {
		pr.rendered, pr.renderErr = pr.render()
	}
	return pr
}

// PrepareRendered is Prepare of the document of an object the folder is thought not to
// hold, for a document that the sanitizer rendered (sanitize.Document: block style,
// YAML 1.1 words quoted) and that holds no block sequence: such a text is a new file's
// as it is (TestADocumentIsItsNewFileAsItIs in internal/sanitize checks this for the
// sanitizer's tricky strings), so it is not parsed, unless the folder turns out to hold the
// object already. id is the object's identity, which the caller had from the object the
// document was rendered from; the document's identity lines must name it and nothing else
// (read as the index reads them). A sealed document (a core Secret, or one with a top-level
// sops key), one with a block sequence (which a new file holds at its key's column) and
// any other is prepared as Prepare does.
func PrepareRendered(doc []byte, id Identity) *Prepared {
	text := string(doc) // no copy: only read here
	if text == "" || isCoreSecret(id) || hasTopLevelKey(text, "sops") || hasSequenceEntry(text) || !namesOnly(doc, id) {
		return Prepare(doc, true)
	}
	if err := checkSafeIdentity(id); err != nil {
		return &Prepared{doc: doc, err: fmt.Errorf("upsert: %w", err)}
	}
	return &Prepared{doc: doc, d: objectDoc{id: id}, unparsed: true}
}

// namesOnly reports whether the identity lines of doc name id and no other object.
func namesOnly(doc []byte, id Identity) bool {
	ids, ok := scanIdentities(doc)
	return ok && len(ids) == 1 && ids[0] == id
}

// hasTopLevelKey reports whether a block-style text may hold key at its top level: a line
// that starts with it and a colon.
func hasTopLevelKey(text, key string) bool {
	return strings.HasPrefix(text, key+":") || strings.Contains(text, "\n"+key+":")
}

// render makes the text a new file holds.
func (pr *Prepared) render() (string, error) {
	out, err := renderNode(pr.d.node, true)
	if err != nil {
		return "", fmt.Errorf("render %s: %w", pr.d.id, err)
	}
	return out, nil
}

// UpsertPrepared is Upsert of a document prepared ahead.
func UpsertPrepared(ix *Index, read ReadFile, t TypeInfo, pr *Prepared, p Placement) ([]FileEdit, error) {
	if pr.err != nil {
		return nil, pr.err
	}
	if err := checkType(t, pr.d.id); err != nil {
		return nil, fmt.Errorf("upsert %s: %w", pr.d.id, err)
	}
	if loc, ok := ix.Lookup(pr.d.id); ok {
		if pr.unparsed { // the folder holds it after all: an edit needs the parse
			return Upsert(ix, read, t, pr.doc, p)
		}
		return editInPlace(read, loc, pr.d)
	}
	if pr.unparsed {
		return placeDocument(ix, read, t, pr.d.id, false, pr.doc, p)
	}
	rendered, err := pr.rendered, pr.renderErr
	if rendered == "" && err == nil {
		rendered, err = pr.render()
	}
	if err != nil {
		return nil, err
	}
	text := pr.doc
	if rendered != string(pr.doc) {
		text = []byte(rendered)
	}
	// A new file holding the document as it came: one copy less of every document of a
	// first mirror held until its commit (nothing writes into a file's content).
	return placeDocument(ix, read, t, pr.d.id, isSealed(pr.d), text, p)
}

// Edit rewrites the existing document of id in place with doc, keeping comments and the
// bytes of unchanged lines. Unlike Upsert it does not check the document against a type:
// a document of a kustomization may leave its namespace to the build. It fails when the
// folder holds no document of id.
func Edit(ix *Index, read ReadFile, id Identity, doc []byte) ([]FileEdit, error) {
	d, err := parseSingle(doc)
	if err != nil {
		return nil, fmt.Errorf("edit %s: %w", id, err)
	}
	if d.id != id {
		return nil, fmt.Errorf("edit %s: the new document is %s", id, d.id)
	}
	loc, ok := ix.Lookup(id)
	if !ok {
		return nil, fmt.Errorf("edit %s: not in the folder: %w", id, ErrStaleIndex)
	}
	blockStyle(d.node)
	return editInPlace(read, loc, d)
}

// checkType makes sure the type describes the document.
func checkType(t TypeInfo, id Identity) error {
	switch {
	case t.Group != id.Group || t.Kind != id.Kind:
		return fmt.Errorf("type %s/%s does not match the document's %s/%s",
			groupOrCore(t.Group), t.Kind, groupOrCore(id.Group), id.Kind)
	case t.Resource == "" || t.Version == "":
		return fmt.Errorf("type %s/%s lacks its version or resource", groupOrCore(t.Group), t.Kind)
	case t.Namespaced && id.Namespace == "":
		return fmt.Errorf("namespaced type without metadata.namespace")
	case !t.Namespaced && id.Namespace != "":
		return fmt.Errorf("cluster-scoped type with metadata.namespace %q", id.Namespace)
	}
	return nil
}

// readExisting reads a file the index says exists.
func readExisting(read ReadFile, p string) ([]byte, error) {
	content, ok, err := read(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if !ok {
		return nil, fmt.Errorf("read %s: file is missing: %w", p, ErrStaleIndex)
	}
	return content, nil
}

// locate reads and parses the file of loc and returns it with the position of
// id's document in it.
func locate(read ReadFile, loc Location, id Identity) (*parsedFile, objectDoc, error) {
	content, err := readExisting(read, loc.Path)
	if err != nil {
		return nil, objectDoc{}, err
	}
	pf, err := parseObjects(content)
	if err != nil {
		return nil, objectDoc{}, fmt.Errorf("edit %s: %w", loc.Path, asUnsupported(loc.Path, err))
	}
	if loc.Doc < 0 || loc.Doc >= len(pf.docs) || pf.docs[loc.Doc].id != id {
		return nil, objectDoc{}, fmt.Errorf("edit %s: %s is not document %d: %w", loc.Path, id, loc.Doc, ErrStaleIndex)
	}
	return pf, pf.docs[loc.Doc], nil
}

// editInPlace rewrites the document of d.id where the index says it is.
func editInPlace(read ReadFile, loc Location, d objectDoc) ([]FileEdit, error) {
	pf, old, err := locate(read, loc, d.id)
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(old.meaning, d.meaning) {
		return nil, nil
	}
	seg := &pf.text.segs[old.seg]
	var body string
	if !isEncrypted(d.node) {
		body, err = rewriteDocument(seg.body, old.node, func(root *yaml.Node) error {
			mergeInto(root, d.node)
			return nil
		})
	}
	// An encrypted document is replaced whole: its MAC covers the values in the order
	// they were encrypted, which a merge into the old key order could break.
	if isEncrypted(d.node) || err != nil || !bodyHolds(body, d.meaning) {
		// The merge did not produce the new document: write it afresh.
		body, err = rewriteDocument(seg.body, old.node, func(root *yaml.Node) error {
			*root = *d.node
			return nil
		})
		if err == nil && !bodyHolds(body, d.meaning) {
			err = fmt.Errorf("rendering %s changed its content", d.id)
		}
		if err != nil {
			return nil, fmt.Errorf("edit %s: %w", loc.Path, err)
		}
	}
	if body == seg.body {
		return nil, nil
	}
	seg.body = body
	return []FileEdit{{Path: loc.Path, Content: pf.text.join()}}, nil
}

// bodyHolds reports whether a segment body holds exactly a document that means want.
func bodyHolds(body string, want any) bool {
	n, got, err := parseMeaning(body)
	return err == nil && n != nil && reflect.DeepEqual(got, want)
}

// placeDocument writes the document of id, which is not in the folder yet; text is what a
// new file holds.
func placeDocument(ix *Index, read ReadFile, t TypeInfo, id Identity, sealed bool, text []byte, p Placement) ([]FileEdit, error) {
	at, err := choosePath(ix, t, id, sealed, p)
	if err != nil {
		return nil, err
	}
	content, exists, err := read(at.path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", at.path, err)
	}
	out := text
	if exists {
		pf, err := parseObjects(content)
		if err != nil {
			return nil, fmt.Errorf("place %s in %s: %w", id, at.path, asUnsupported(at.path, err))
		}
		for _, other := range pf.docs {
			if other.id == id {
				return nil, fmt.Errorf("place %s in %s: the file holds it already: %w", id, at.path, ErrStaleIndex)
			}
			if sealed || isSealed(other) {
				return nil, fmt.Errorf("place %s in %s next to %s: %w", id, at.path, other.id, ErrSecretSharedFile)
			}
		}
		out = appendDocument(content, string(text))
	}
	edits := []FileEdit{{Path: at.path, Content: out}}
	if at.kustomization != "" {
		kc, err := readExisting(read, at.kustomization)
		if err != nil {
			return nil, err
		}
		updated, changed, err := addResource(kc, path.Base(at.path))
		if err != nil {
			return nil, fmt.Errorf("edit %s: %w", at.kustomization, asUnsupported(at.kustomization, err))
		}
		if changed {
			edits = append(edits, FileEdit{Path: at.kustomization, Content: updated})
		}
	}
	return edits, nil
}

// appendDocument adds a rendered document at the end of a file, after a
// separator line, keeping the existing bytes and line endings.
func appendDocument(content []byte, doc string) []byte {
	s := string(content)
	if strings.TrimSpace(strings.TrimPrefix(s, utf8BOM)) == "" {
		return []byte(doc)
	}
	eol := "\n"
	if i := strings.IndexByte(s, '\n'); i > 0 && s[i-1] == '\r' {
		eol = "\r\n"
		doc = strings.ReplaceAll(doc, "\n", "\r\n")
	}
	if !strings.HasSuffix(s, "\n") {
		s += eol
	}
	text := splitDocuments(s)
	// A file that ends in a separator line already opens the new document.
	if last := text.segs[len(text.segs)-1]; last.sep == "" || last.body != "" {
		s += "---" + eol
	}
	return []byte(s + doc)
}

// isEncrypted reports whether a document is a SOPS document (it has a top-level "sops" map).
func isEncrypted(doc *yaml.Node) bool {
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return false
	}
	v := mappingValue(root, "sops")
	return v != nil && v.Kind == yaml.MappingNode
}

// isSealed reports a document that lives alone in a .sops.yaml file: a core Secret (written
// only encrypted) or any document encrypted with SOPS (a type marked sensitive).
func isSealed(d objectDoc) bool { return isCoreSecret(d.id) || isEncrypted(d.node) }
