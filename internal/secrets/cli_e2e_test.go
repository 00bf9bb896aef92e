//go:build e2e

package secrets

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The standard sops command-line tool, built once from the module go.mod requires (a `tool`
// of go.mod), so it is the same SOPS version as the library.
var (
	sopsOnce sync.Once
	sopsBin  string
	sopsErr  error
	sopsOut  []byte
	sopsDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sopsDir != "" {
		os.RemoveAll(sopsDir)
	}
	os.Exit(code)
}

func sopsCLI(t *testing.T) string {
	t.Helper()
	sopsOnce.Do(func() {
		sopsDir, sopsErr = os.MkdirTemp("", "sops-cli-")
		if sopsErr != nil {
			return
		}
		sopsBin = filepath.Join(sopsDir, "sops")
		start := time.Now()
		cmd := exec.Command("go", "build", "-o", sopsBin, "github.com/getsops/sops/v3/cmd/sops")
		sopsOut, sopsErr = cmd.CombinedOutput()
		t.Logf("built the sops CLI in %s", time.Since(start).Round(time.Millisecond))
	})
	if sopsErr != nil {
		t.Fatalf("building the sops CLI: %v\n%s", sopsErr, sopsOut)
	}
	return sopsBin
}

// runSOPS runs the CLI in dir with only the given age identity available: HOME and the
// config directories point into the test's directory, so no key of the machine is used.
// A failure's standard error is logged by the callers that expect success.
func runSOPS(t *testing.T, dir, identity string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(sopsCLI(t), args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"SOPS_AGE_KEY=" + identity,
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("sops %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func TestSealedDocumentDecryptsWithTheSOPSCommandLineTool(t *testing.T) {
	a, b := newIdentity(t), newIdentity(t)
	s := newSealer(t, a, b)
	sealed, err := s.Seal(secretDoc())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // test data only: the library itself writes nothing to disk
	file := filepath.Join(dir, "db.sops.yaml")
	if err := os.WriteFile(file, sealed, 0o600); err != nil {
		t.Fatal(err)
	}
	orig := parse(t, secretDoc())
	for _, id := range []identity{a, b} {
		out, err := runSOPS(t, dir, id.id, "decrypt", "--input-type", "yaml", "--output-type", "yaml", file)
		if err != nil {
			t.Fatal(err)
		}
		got := parse(t, out)
		for _, f := range []string{"apiVersion", "kind", "data", "stringData", "type"} {
			if !equalYAML(got[f], orig[f]) {
				t.Errorf("%s differs after sops decrypt:\n%s", f, out)
			}
		}
		want, _ := s.Digest(secretDoc())
		if d, _ := DigestOf(out); d != want {
			t.Errorf("annotation after sops decrypt %q, want %q", d, want)
		}
		if d, _ := s.Digest(out); d != want {
			t.Errorf("digest of sops's plaintext %q, want %q", d, want)
		}
	}
	if _, err := runSOPS(t, dir, newIdentity(t).id, "decrypt", file); err == nil {
		t.Errorf("sops decrypted with a foreign identity")
	}
}

func TestSOPSEncryptsWithTheCreationRulesAndTheLibraryDecrypts(t *testing.T) {
	id := newIdentity(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".sops.yaml"), CreationRules([]string{id.recipient}, ""), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "shop", "core", "secrets")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, "db.sops.yaml")
	if err := os.WriteFile(file, secretDoc(), 0o600); err != nil {
		t.Fatal(err)
	}
	// No --age flag: the recipients and encrypted_regex come from .sops.yaml.
	if _, err := runSOPS(t, dir, "", "encrypt", "--in-place", file); err != nil {
		t.Fatal(err)
	}
	enc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range secretValues() {
		if bytes.Contains(enc, []byte(v)) {
			t.Errorf("sops left a value in clear")
		}
	}
	m := parse(t, enc)
	if get(m, "metadata", "name") != "db" || get(m, "sops", "encrypted_regex") != SecretEncryptedRegex {
		t.Errorf("unexpected document from sops encrypt:\n%s", enc)
	}
	if !strings.HasPrefix(string(enc), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n") {
		t.Errorf("the stores.yaml.indent of .sops.yaml was not applied:\n%.120s", enc)
	}
	plain, err := Decrypt(enc, id.id)
	if err != nil {
		t.Fatal(err)
	}
	got, orig := parse(t, plain), parse(t, secretDoc())
	for _, f := range []string{"data", "stringData", "type"} {
		if !equalYAML(got[f], orig[f]) {
			t.Errorf("%s differs", f)
		}
	}
	// A file outside the rule's path_regex is not encrypted by the rule.
	other := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(other, secretDoc(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runSOPS(t, dir, "", "encrypt", other); err == nil {
		t.Errorf("sops encrypted a file that no creation rule matches")
	}
}
