// Package bounds checks repository content before any parser sees it
// (docs/security.md#bounded-reading): a file over a size is not read, and a YAML file whose
// aliases would expand it beyond a number of values ("billion laughs") is refused. Both
// refusals name the file and the bound, so that its folder is refused by name and nothing
// else stops.
package bounds

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

const (
	// DefaultMaxFileBytes is the default size of the largest file read from a folder.
	DefaultMaxFileBytes = 4 << 20
	// MaxExpandedValues bounds the values one YAML file holds once its aliases are
	// expanded: far more than any real manifest, far less than what exhausts memory.
	MaxExpandedValues = 1 << 20
)

// ExceededError is a file over a bound.
type ExceededError struct {
	// Path is the file, as its reader named it.
	Path string
	// Bound says which bound, and Limit its value.
	Bound string
	Limit int64
}

func (e *ExceededError) Error() string {
	return fmt.Sprintf("%s: %s exceeds the bound of %d", e.Path, e.Bound, e.Limit)
}

// FileLimit is the size of the largest file read under a bound of max (0: DefaultMaxFileBytes).
func FileLimit(max int64) int64 {
	if max <= 0 {
		return DefaultMaxFileBytes
	}
	return max
}

// CheckSize refuses a file of size bytes over max (0: DefaultMaxFileBytes).
func CheckSize(path string, size, max int64) error {
	max = FileLimit(max)
	if size > max {
		return &ExceededError{Path: path, Bound: fmt.Sprintf("its size (%d bytes)", size), Limit: max}
	}
	return nil
}

// CheckYAML refuses a YAML stream whose documents, with their aliases expanded, would hold
// more than MaxExpandedValues values together. It parses into nodes, which keep aliases
// as references, and counts each anchored node once. Content that does not parse is left to
// the parser that reads it for real (it reports the error in its own words).
func CheckYAML(path string, content []byte) error {
	if bytes.IndexByte(content, '&') < 0 {
		return nil // no anchor, nothing an alias could expand: most files, at no cost
	}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	c := counter{sizes: map[*yaml.Node]int64{}, open: map[*yaml.Node]bool{}}
	total := int64(0)
	for {
		var doc yaml.Node
		err := decode(dec, &doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil
		}
		total += c.size(&doc)
		if total > MaxExpandedValues {
			return &ExceededError{Path: path, Bound: "its YAML with aliases expanded", Limit: MaxExpandedValues}
		}
	}
}

func decode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml decoder: %v", r)
		}
	}()
	return dec.Decode(n)
}

// counter computes expanded sizes, each node once; sizes saturate just above the bound.
type counter struct {
	sizes map[*yaml.Node]int64
	open  map[*yaml.Node]bool // on the current path: an alias back to one is a cycle
}

func (c *counter) size(n *yaml.Node) int64 {
	if n == nil {
		return 0
	}
	if s, ok := c.sizes[n]; ok {
		return s
	}
	if c.open[n] {
		return MaxExpandedValues + 1 // a cycle expands for ever
	}
	c.open[n] = true
	s := int64(1)
	if n.Kind == yaml.AliasNode {
		s = c.size(n.Alias)
	}
	for _, child := range n.Content {
		s += c.size(child)
		if s > MaxExpandedValues {
			s = MaxExpandedValues + 1
			break
		}
	}
	delete(c.open, n)
	c.sizes[n] = s
	return s
}
