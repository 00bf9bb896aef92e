package secrets

import (
	"testing"

	"github.com/getsops/sops/v3/version"
)

// A sealed document records the version of the SOPS library that sealed it, as `sops` does:
// the constant must follow go.mod when SOPS is upgraded.
func TestTheSealedVersionIsTheLinkedSOPS(t *testing.T) {
	sealed, err := newSealer(t, newIdentity(t)).Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	if got := get(parse(t, sealed), "sops", "version"); got != version.Version {
		t.Errorf("sops.version = %v, the linked SOPS is %s: set sopsVersion in seal.go", got, version.Version)
	}
}
