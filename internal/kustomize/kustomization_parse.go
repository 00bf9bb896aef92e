package kustomize

import (
	"fmt"
	"path"
	"sort"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// kustomization is one parsed kustomization file.
type kustomization struct {
	// path is the file's repository path; dir its directory.
	path, dir string
	// writable is true when the file lies in the target folder.
	writable bool
	// resources are the entries of resources:, as written.
	resources []string
	// patches are the repository paths of the strategic-merge patch files.
	patches []string
}

// modelled are the kustomization fields the writer understands. Any other field refuses
// the folder, including fields a later kustomize version adds.
var modelled = map[string]bool{
	"apiVersion": true, "kind": true, "metadata": true,
	"resources": true, "namespace": true, "images": true, "replicas": true,
	"labels": true, "commonLabels": true, "commonAnnotations": true, "patches": true,
	"sortOptions": true,
}

// refusedHints say what to do instead of a known unsupported field.
var refusedHints = map[string]string{
	"bases":                 "list the bases under resources: instead",
	"patchesStrategicMerge": "list each patch file under patches: with path:",
	"patchesJson6902":       "JSON 6902 patches are not supported; use a strategic-merge patch file under patches:",
	"configMapGenerator":    "generated objects cannot be edited back; write the ConfigMap as a file",
	"secretGenerator":       "generated objects cannot be edited back; write the Secret as a file",
	"generatorOptions":      "generators are not supported",
	"components":            "components are not supported",
	"namePrefix":            "renamed objects cannot be matched back to their source",
	"nameSuffix":            "renamed objects cannot be matched back to their source",
	"replacements":          "replacements are not supported",
	"vars":                  "vars are not supported",
	"helmCharts":            "Helm charts are never inflated by the writer",
	"helmGlobals":           "Helm charts are never inflated by the writer",
	"transformers":          "plugins are not supported",
	"generators":            "plugins are not supported",
	"validators":            "plugins are not supported",
	"configurations":        "custom transformer configurations are not supported",
	"openapi":               "custom OpenAPI schemas are not supported",
	"crds":                  "custom CRD schemas are not supported",
	"buildMetadata":         "build metadata changes the render; remove it",
}

// parseKustomization reads and checks one kustomization file
// (docs/kustomize.md#unsupported-features).
func parseKustomization(p string, content []byte, writable bool) (*kustomization, error) {
	unsupported := func(feature, hint string) error {
		return &UnsupportedError{Path: p, Feature: feature, Hint: hint}
	}
	var raw map[string]any
	if err := yaml.Unmarshal(content, &raw); err != nil {
		return nil, unsupported("unparseable", fmt.Sprintf("the file is not valid YAML: %v", err))
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !modelled[k] {
			hint, known := refusedHints[k]
			if !known {
				hint = "remove it, or mirror into a folder without it"
			}
			return nil, unsupported(k, hint)
		}
	}
	if kind, _ := raw["kind"].(string); kind != "" && kind != "Kustomization" {
		return nil, unsupported(kind, "only kind Kustomization is supported")
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict(content, &k); err != nil {
		return nil, unsupported("unparseable", fmt.Sprintf("kustomize cannot read it: %v", err))
	}
	out := &kustomization{path: p, dir: path.Dir(p), writable: writable, resources: k.Resources}
	if out.dir == "." {
		out.dir = ""
	}
	for _, r := range k.Resources {
		if isRemote(r) {
			return nil, unsupported("remote base", fmt.Sprintf("resources entry %q would be fetched over the network; vendor it into the repository", r))
		}
	}
	for i, img := range k.Images {
		switch {
		case img.Name == "":
			return nil, unsupported("malformed images", fmt.Sprintf("images entry %d has no name", i))
		case img.TagSuffix != "":
			return nil, unsupported("images tagSuffix", "set newTag instead")
		}
	}
	for i, r := range k.Replicas {
		if r.Name == "" {
			return nil, unsupported("malformed replicas", fmt.Sprintf("replicas entry %d has no name", i))
		}
	}
	for i, patch := range k.Patches {
		switch {
		case patch.Patch != "":
			return nil, unsupported("inline patches", "move the patch into a file and list it with path:")
		case patch.Target != nil || patch.Options != nil:
			return nil, unsupported("targeted patches", "only strategic-merge patch files listed by path: alone are supported")
		case patch.Path == "":
			return nil, unsupported("malformed patches", fmt.Sprintf("patches entry %d has no path", i))
		}
		full, ok := repoJoin(out.dir, patch.Path)
		if !ok {
			return nil, unsupported("patches outside the repository", fmt.Sprintf("patch %q leaves the repository", patch.Path))
		}
		out.patches = append(out.patches, full)
	}
	return out, nil
}
