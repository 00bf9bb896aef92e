package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/stores"
	"go.yaml.in/yaml/v3"
)

// The SOPS YAML format is read and written here, not through SOPS's stores/yaml package:
// that package reaches SOPS's command configuration and its publish command, which link the
// cloud storage clients (GCS with gRPC's xDS, S3) into the operator — 14.6 MB of its binary
// and about 7 MiB of its resident memory at idle, for code it never runs
// (docs/secrets.md#the-sops-yaml-format). SOPS still does the rest: the tree's encryption
// and MAC, the key groups, and the form of the `sops` metadata
// (stores.SerializeMetadata / stores.ExtractMetadata). The YAML library is SOPS's own, so a
// document is written as `sops` writes it; sops_format_test.go compares the two.
//
// Errors here never wrap the YAML library's: those quote the text they failed on, which may
// be a secret value.

// maxSOPSNodes bounds the nodes of a document, its aliases expanded (the YAML library
// refuses excessive aliasing before that).
const maxSOPSNodes = 1 << 20

var (
	errNotAMapping     = errors.New("read the document: not one YAML mapping with unique keys")
	errUnreadableValue = errors.New("read the document: a key or value cannot be decoded")
)

var sopsMetadataOpts = stores.MetadataOpts{Flatten: stores.MetadataFlattenNone}

// loadSealed reads a SOPS YAML document into its tree: the values and the `sops` metadata.
func loadSealed(doc []byte) (sops.Tree, error) {
	branch, err := loadSOPSBranch(doc)
	if err != nil {
		return sops.Tree{}, err
	}
	branches, metadata, err := stores.ExtractMetadata(sops.TreeBranches{branch}, sopsMetadataOpts)
	if err != nil {
		return sops.Tree{}, err
	}
	return sops.Tree{Branches: branches, Metadata: metadata}, nil
}

// emitSealed writes an encrypted tree as a SOPS YAML document, its metadata under `sops`.
func emitSealed(tree sops.Tree) ([]byte, error) {
	branches, err := stores.SerializeMetadata(tree, sopsMetadataOpts)
	if err != nil {
		return nil, err
	}
	return emitSOPSBranches(branches)
}

// loadSOPSBranch reads one YAML document, a mapping, into a SOPS tree branch as SOPS's YAML
// store does: a mapping becomes a branch with its keys in order, a sequence a list, a scalar
// the value the YAML library decodes it to (the value's type decides what SOPS records as
// its type when it encrypts it). Comments are not kept; they are not part of the MAC, and a
// document the operator seals has none.
func loadSOPSBranch(doc []byte) (sops.TreeBranch, error) {
	d := yaml.NewDecoder(bytes.NewReader(doc))
	var root yaml.Node
	if err := d.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return sops.TreeBranch{}, nil // an empty document: an empty mapping, as SOPS reads it
		}
		return nil, errNotAMapping
	}
	var next yaml.Node
	if err := d.Decode(&next); !errors.Is(err, io.EOF) {
		return nil, errors.New("read the document: more than one YAML document")
	}
	// Decoding the parsed nodes into a map rejects a key defined twice, which the node tree
	// keeps; the text is parsed once.
	if err := root.Decode(&map[string]any{}); err != nil {
		return nil, errNotAMapping
	}
	budget := maxSOPSNodes
	top := &root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	switch {
	case top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null":
		return sops.TreeBranch{}, nil
	case top.Kind != yaml.MappingNode:
		return nil, errNotAMapping
	}
	return sopsBranch(top, &budget)
}

func sopsBranch(n *yaml.Node, budget *int) (sops.TreeBranch, error) {
	branch := make(sops.TreeBranch, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		var key any
		if err := n.Content[i].Decode(&key); err != nil {
			return nil, errUnreadableValue
		}
		value, err := sopsValue(n.Content[i+1], budget)
		if err != nil {
			return nil, err
		}
		branch = append(branch, sops.TreeItem{Key: key, Value: value})
	}
	return branch, nil
}

func sopsValue(n *yaml.Node, budget *int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, errors.New("read the document: its aliases expand past the bound")
	}
	switch n.Kind {
	case yaml.MappingNode:
		return sopsBranch(n, budget)
	case yaml.SequenceNode:
		var list []any // nil when empty, as SOPS reads it
		for _, item := range n.Content {
			v, err := sopsValue(item, budget)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.AliasNode:
		return sopsValue(n.Alias, budget)
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, errUnreadableValue
		}
		return v, nil
	}
	return nil, fmt.Errorf("read the document: unexpected YAML node kind %d", n.Kind)
}

// emitSOPSBranches writes each branch as one YAML document, indented by Indent.
func emitSOPSBranches(branches sops.TreeBranches) ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(Indent)
	for _, branch := range branches {
		mapping, err := sopsMappingNode(branch)
		if err != nil {
			return nil, err
		}
		if err := e.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{mapping}}); err != nil {
			return nil, err
		}
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func sopsMappingNode(branch sops.TreeBranch) (*yaml.Node, error) {
	mapping := &yaml.Node{Kind: yaml.MappingNode}
	for _, item := range branch {
		if _, ok := item.Key.(sops.Comment); ok {
			continue
		}
		key := &yaml.Node{}
		if err := key.Encode(item.Key); err != nil {
			return nil, err
		}
		value, err := sopsNode(item.Value)
		if err != nil {
			return nil, err
		}
		mapping.Content = append(mapping.Content, key, value)
	}
	return mapping, nil
}

func sopsNode(v any) (*yaml.Node, error) {
	switch v := v.(type) {
	case sops.TreeBranch:
		return sopsMappingNode(v)
	case []any:
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, item := range v {
			if _, ok := item.(sops.Comment); ok {
				continue
			}
			n, err := sopsNode(item)
			if err != nil {
				return nil, err
			}
			seq.Content = append(seq.Content, n)
		}
		return seq, nil
	}
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return n, nil
}
