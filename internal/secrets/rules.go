package secrets

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultPathRegex is the creation rule's path_regex when CreationRules is given none: every
// file ending in .sops.yaml.
const DefaultPathRegex = `\.sops\.yaml$`

// CreationRules returns the content of a .sops.yaml for the repository: one creation rule for
// files matching pathRegex (DefaultPathRegex when empty) with encrypted_regex
// SecretEncryptedRegex and the age recipients, and the YAML store's indentation, so that
// `sops edit` and `sops encrypt` on a file there behave like the operator. Recipients are
// written as given (validate them with ParseRecipients first).
func CreationRules(recipients []string, pathRegex string) []byte {
	if pathRegex == "" {
		pathRegex = DefaultPathRegex
	}
	type rule struct {
		PathRegex      string `yaml:"path_regex"`
		EncryptedRegex string `yaml:"encrypted_regex"`
		Age            string `yaml:"age"`
	}
	type yamlStore struct {
		Indent int `yaml:"indent"`
	}
	type stores struct {
		YAML yamlStore `yaml:"yaml"`
	}
	type file struct {
		CreationRules []rule `yaml:"creation_rules"`
		Stores        stores `yaml:"stores"`
	}
	f := file{
		CreationRules: []rule{{PathRegex: pathRegex, EncryptedRegex: SecretEncryptedRegex, Age: strings.Join(recipients, ",")}},
		Stores:        stores{YAML: yamlStore{Indent: Indent}},
	}
	var b strings.Builder
	b.WriteString("# Written by GitOps Reverser: SOPS settings for the Secrets mirrored here.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	// Encoding plain structs of strings and ints cannot fail.
	_ = enc.Encode(f)
	_ = enc.Close()
	return []byte(b.String())
}
