package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// Placement are the GitTarget's spec.placement templates for NEW documents.
//
// A template is a path relative to the folder with placeholders {name},
// {namespace}, {namespaceOrCluster}, {group} ("core" for the core group),
// {version}, {resource} and {kind}. It must yield a clean relative path ending
// in ".yaml".
type Placement struct {
	// Default applies to every type without a ByType entry; "" means none.
	Default string
	// ByType maps "[group/]version/resource" (e.g. "v1/configmaps",
	// "apps/v1/deployments") to a template.
	ByType map[string]string
}

// typeKey is the ByType key of a type: "[group/]version/resource".
func typeKey(t TypeInfo) string {
	if t.Group == "" {
		return t.Version + "/" + t.Resource
	}
	return t.Group + "/" + t.Version + "/" + t.Resource
}

// template returns the template that applies to t, if any.
func (p Placement) template(t TypeInfo) (string, bool) {
	if tpl, ok := p.ByType[typeKey(t)]; ok {
		return tpl, true
	}
	if p.Default != "" {
		return p.Default, true
	}
	return "", false
}

// placeNew is where a new document goes, and the kustomization that must list
// it ("" for none).
type placeNew struct {
	path          string
	kustomization string
}

// choosePath walks the placement ladder for a new document.
func choosePath(ix *Index, t TypeInfo, id Identity, sealed bool, p Placement) (placeNew, error) {
	if tpl, ok := p.template(t); ok {
		out, err := expandTemplate(tpl, t, id)
		if err != nil {
			return placeNew{}, fmt.Errorf("placement template %q: %w", tpl, err)
		}
		if err := checkPlacedPath(out); err != nil {
			return placeNew{}, fmt.Errorf("placement template %q gives %q: %w", tpl, out, err)
		}
		return placeNew{path: out}, nil
	}
	if ks := ix.placementKustomizations(); len(ks) == 1 {
		file := fileName(id.Name, "-"+strings.ToLower(id.Kind)+fileExt(sealed))
		out := path.Join(path.Dir(ks[0]), file)
		if err := checkPlacedPath(out); err != nil {
			return placeNew{}, fmt.Errorf("place %s beside %s: %w", id, ks[0], err)
		}
		return placeNew{path: out, kustomization: ks[0]}, nil
	}
	out := canonicalPath(t, id, sealed)
	if err := checkPlacedPath(out); err != nil {
		return placeNew{}, fmt.Errorf("place %s at %q: %w", id, out, err)
	}
	return placeNew{path: out}, nil
}

// canonicalPath is {namespace|_cluster}/{group|core}/{resource}/{name}.yaml,
// with ".sops.yaml" for a Secret.
func canonicalPath(t TypeInfo, id Identity, sealed bool) string {
	return namespaceOrCluster(id) + "/" + groupOrCore(t.Group) + "/" + t.Resource + "/" + fileName(id.Name, fileExt(sealed))
}

// maxFileName is the longest file name most filesystems can check out (bytes).
const maxFileName = 255

// fileName is name followed by suffix. A Kubernetes name may be 253 characters long, too
// long for a file name with its suffix: such a name is cut and made unique again with a
// hash of the whole name. Nothing is lost: the document inside still names the object,
// and the writer finds documents by what they hold, not by their file's name.
func fileName(name, suffix string) string {
	if len(name)+len(suffix) <= maxFileName {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name))
	tag := "-" + hex.EncodeToString(sum[:])[:12]
	return name[:maxFileName-len(suffix)-len(tag)] + tag + suffix
}

// fileExt is the extension of a new file: ".sops.yaml" for a sealed document (a Secret,
// or any document encrypted with SOPS), so that SOPS's creation rule matches it.
func fileExt(sealed bool) string {
	if sealed {
		return ".sops.yaml"
	}
	return ".yaml"
}

func namespaceOrCluster(id Identity) string {
	if id.Namespace == "" {
		return "_cluster"
	}
	return id.Namespace
}

// expandTemplate replaces the placeholders of tpl.
func expandTemplate(tpl string, t TypeInfo, id Identity) (string, error) {
	var b strings.Builder
	rest := tpl
	for {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		if rest[open] == '}' {
			return "", fmt.Errorf("unmatched '}'")
		}
		b.WriteString(rest[:open])
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 || rest[open+1+end] != '}' {
			return "", fmt.Errorf("unclosed '{'")
		}
		name := rest[open+1 : open+1+end]
		value, err := placeholder(name, t, id)
		if err != nil {
			return "", err
		}
		b.WriteString(value)
		rest = rest[open+1+end+1:]
	}
}

func placeholder(name string, t TypeInfo, id Identity) (string, error) {
	switch name {
	case "name":
		return id.Name, nil
	case "namespace":
		return id.Namespace, nil
	case "namespaceOrCluster":
		return namespaceOrCluster(id), nil
	case "group":
		return groupOrCore(t.Group), nil
	case "version":
		return t.Version, nil
	case "resource":
		return t.Resource, nil
	case "kind":
		return id.Kind, nil
	}
	return "", fmt.Errorf("unknown placeholder {%s}", name)
}

// checkPlacedPath accepts a clean relative path of a YAML object file.
func checkPlacedPath(p string) error {
	if !validRelPath(p) {
		return fmt.Errorf("not a clean relative path inside the folder")
	}
	base := path.Base(p)
	switch {
	case !strings.HasSuffix(base, ".yaml"):
		return fmt.Errorf("does not end in .yaml")
	case base == ".yaml" || base == ".sops.yaml":
		return fmt.Errorf("file name %q is empty or reserved", base)
	case classify(p) != classObjects:
		return fmt.Errorf("file name %q is reserved", base)
	case longestSegment(p) > maxFileName:
		return fmt.Errorf("a path segment is longer than %d bytes, which most filesystems cannot check out", maxFileName)
	}
	return nil
}

func longestSegment(p string) int {
	longest := 0
	for _, seg := range strings.Split(p, "/") {
		longest = max(longest, len(seg))
	}
	return longest
}
