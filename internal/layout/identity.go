package layout

import (
	"fmt"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Identity names one object document.
type Identity struct {
	// Group is the API group from apiVersion; "" is the core group.
	Group string
	// Kind is the object's kind.
	Kind string
	// Namespace is metadata.namespace; "" for cluster-scoped objects.
	Namespace string
	// Name is metadata.name.
	Name string
}

// String renders the identity as "group/Kind namespace/name", with "core" for
// the core group and an empty namespace for cluster-scoped objects, e.g.
// "apps/Deployment default/web" or "rbac.authorization.k8s.io/ClusterRole /admin".
func (i Identity) String() string {
	return groupOrCore(i.Group) + "/" + i.Kind + " " + i.Namespace + "/" + i.Name
}

// TypeInfo describes the resource type of a document, for placement.
type TypeInfo struct {
	// Group is the API group; "" is the core group.
	Group string
	// Version is the API version, e.g. "v1".
	Version string
	// Resource is the plural resource name, e.g. "deployments".
	Resource string
	// Kind is the object kind, e.g. "Deployment".
	Kind string
	// Namespaced is true for namespaced resource types.
	Namespaced bool
}

func groupOrCore(group string) string {
	if group == "" {
		return "core"
	}
	return group
}

// isCoreSecret reports whether id is a core/v1 Secret, which is written
// encrypted and kept alone in its file.
func isCoreSecret(id Identity) bool {
	return id.Group == "" && id.Kind == "Secret"
}

// IdentityOf parses a single-document YAML and returns its identity (group from apiVersion).
func IdentityOf(doc []byte) (Identity, error) {
	d, err := parseSingle(doc)
	if err != nil {
		return Identity{}, err
	}
	return d.id, nil
}

// identityOfNode reads apiVersion, kind, metadata.name and metadata.namespace
// from a parsed document. ok is false when the document is not a Kubernetes object.
func identityOfNode(doc *yaml.Node) (Identity, bool) {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) != 1 {
			return Identity{}, false
		}
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return Identity{}, false
	}
	apiVersion, ok := scalarValue(root, "apiVersion")
	if !ok || apiVersion == "" {
		return Identity{}, false
	}
	kind, ok := scalarValue(root, "kind")
	if !ok || kind == "" {
		return Identity{}, false
	}
	meta := mappingValue(root, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return Identity{}, false
	}
	name, ok := scalarValue(meta, "name")
	if !ok || name == "" {
		return Identity{}, false
	}
	namespace, ok := scalarValue(meta, "namespace")
	if !ok && mappingValue(meta, "namespace") != nil {
		return Identity{}, false // namespace present but not a scalar
	}
	return identityOf(apiVersion, kind, namespace, name), true
}

// identityOf is the identity of an object with these fields: its group is apiVersion's
// part before "/" ("" for the core group's "v1").
func identityOf(apiVersion, kind, namespace, name string) Identity {
	group := ""
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return Identity{Group: group, Kind: kind, Namespace: namespace, Name: name}
}

// mappingValue returns the value node of key in a mapping node, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalarValue returns the text of a non-null scalar value of key in a mapping node.
func scalarValue(m *yaml.Node, key string) (string, bool) {
	v := mappingValue(m, key)
	if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		return "", false
	}
	return v.Value, true
}

// checkSafeIdentity refuses names and namespaces that could leave the folder
// when used as path segments.
func checkSafeIdentity(id Identity) error {
	if err := checkSafeSegment("name", id.Name); err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if id.Namespace != "" {
		if err := checkSafeSegment("namespace", id.Namespace); err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
	}
	return nil
}

func checkSafeSegment(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrUnsafeName, what)
	case s == "." || s == "..":
		return fmt.Errorf("%w: %s %q is a relative path element", ErrUnsafeName, what, s)
	case strings.ContainsAny(s, `/\`):
		return fmt.Errorf("%w: %s %q contains a path separator", ErrUnsafeName, what, s)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %s %q contains a control character", ErrUnsafeName, what, s)
	}
	return nil
}
