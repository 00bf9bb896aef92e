//go:build e2e

package controller_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/secrets"
)

func TestSecretsAreMirroredEncryptedAndNoPlaintextIsAnywhere(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	workDir := t.TempDir()
	startOperator(t, cp.Config, workDir)
	identity, recipient, err := secrets.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	gt.Spec.Encryption = &v1.EncryptionSpec{Provider: "sops", Age: v1.AgeSpec{Recipients: []string{recipient}}}
	create(t, gt)
	create(t, watchRule(ns, "all", "live", v1.ResourceRule{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}}))
	targetReady(t, gt)
	waitCondition(t, gt, func() []metav1.Condition { return gt.Status.Conditions }, v1.ConditionEncryptionConfigured, metav1.ConditionTrue, "")

	password, user := "pw-"+rand.Text(), "user-"+rand.Text()
	values := []string{password, user}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Data: map[string][]byte{"password": []byte(password)}}
	create(t, secret)
	path := "live/" + ns + "/core/secrets/db.sops.yaml"
	waitFor(t, "the sealed Secret", func() bool { return r.has(path) })
	if got := decrypted(t, r.file(path), identity); got["password"] != password {
		t.Fatalf("decrypted password %q", got["password"])
	}
	if !strings.Contains(r.file("live/.sops.yaml"), recipient) {
		t.Fatal("the folder's .sops.yaml with the recipient was not bootstrapped")
	}

	// A key added before the existing one: the file is sealed afresh and still decrypts.
	secret.Data["aaa-user"] = []byte(user)
	if err := cp.Client.Update(ctxOf(t), secret); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the edited Secret", func() bool { return decrypted(t, r.file(path), identity)["aaa-user"] == user })

	// Re-applied unchanged (only bookkeeping differs): no new ciphertext.
	sealed := r.file(path)
	secret.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
	if err := cp.Client.Update(ctxOf(t), secret); err != nil {
		t.Fatal(err)
	}
	create(t, configMap(ns, "marker", map[string]string{"k": "v"}))
	waitFor(t, "the marker", func() bool { return r.has("live/" + ns + "/core/configmaps/marker.yaml") })
	if r.file(path) != sealed {
		t.Fatal("an unchanged Secret was encrypted again")
	}

	if err := cp.Client.Delete(ctxOf(t), secret); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted Secret's file to go", func() bool { return !r.has(path) })

	for _, dir := range []string{filepath.Join(r.server.Root(), r.name), workDir} {
		assertNoPlaintext(t, dir, values)
	}
}

func TestUnusableRecipientsKeepSecretsOutAndConfigMapsFlowing(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	gt.Spec.Encryption = &v1.EncryptionSpec{Provider: "sops", Age: v1.AgeSpec{Recipients: []string{"age1thisisnotarecipient"}}}
	create(t, gt)
	create(t, watchRule(ns, "all", "live", v1.ResourceRule{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps"}}))
	cond := waitCondition(t, gt, func() []metav1.Condition { return gt.Status.Conditions }, v1.ConditionEncryptionConfigured, metav1.ConditionFalse, controller.ReasonRecipientsInvalid)
	if !strings.Contains(cond.Message, "recipient") {
		t.Fatalf("the message does not say what is wrong: %q", cond.Message)
	}
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, StringData: map[string]string{"password": "never-in-git"}})
	create(t, configMap(ns, "still-mirrored", map[string]string{"k": "v"}))
	waitFor(t, "the ConfigMap", func() bool { return r.has("live/" + ns + "/core/configmaps/still-mirrored.yaml") })
	for _, f := range r.files() {
		if strings.Contains(f, "secrets/") {
			t.Fatalf("a Secret file appeared without usable encryption: %s", f)
		}
	}
}

// decrypted returns the data of a sealed Secret document, decoded.
func decrypted(t *testing.T, sealed, identity string) map[string]string {
	t.Helper()
	if sealed == "" {
		return nil
	}
	plain, err := secrets.Decrypt([]byte(sealed), identity)
	if err != nil {
		t.Fatalf("decrypt: %v", err)
	}
	var doc struct {
		Data map[string]string `json:"data"`
	}
	if err := sigsyaml.Unmarshal(plain, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range doc.Data {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

// assertNoPlaintext scans every file under dir and, for each Git repository in it, every
// object of every kind (decompressed), for the values and their base64 forms.
func assertNoPlaintext(t *testing.T, dir string, values []string) {
	t.Helper()
	var needles [][]byte
	for _, v := range values {
		needles = append(needles, []byte(v), []byte(base64.StdEncoding.EncodeToString([]byte(v))))
	}
	check := func(where string, b []byte) {
		for _, n := range needles {
			if bytes.Contains(b, n) {
				t.Fatalf("a Secret value in plaintext in %s", where)
			}
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if _, err := os.Stat(filepath.Join(p, "objects")); err == nil {
				out, err := exec.Command("git", "--git-dir", p, "cat-file", "--batch-all-objects", "--batch").Output()
				if err != nil {
					t.Fatalf("dump objects of %s: %v", p, err)
				}
				check("the objects of "+p, out)
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		check(p, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAGeneratedKeyPairIsCreatedOnlyWhenAskedAndDecryptsTheMirror(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	gt.Spec.Encryption = &v1.EncryptionSpec{Provider: "sops", Age: v1.AgeSpec{
		RecipientsSecretRef: &v1.LocalObjectReference{Name: "generated-keys"}, GenerateKeyPair: true}}
	create(t, gt)
	create(t, watchRule(ns, "secrets", "live", v1.ResourceRule{APIGroups: []string{""}, Resources: []string{"secrets"}}))
	waitCondition(t, gt, func() []metav1.Condition { return gt.Status.Conditions }, v1.ConditionEncryptionConfigured, metav1.ConditionTrue, "")
	var keys corev1.Secret
	if err := cp.Client.Get(ctxOf(t), keyOf(ns, "generated-keys"), &keys); err != nil {
		t.Fatalf("the asked-for key pair Secret: %v", err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(ctxOf(t), &keys) })
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}, StringData: map[string]string{"token": "tok-123"}})
	path := "live/" + ns + "/core/secrets/api.sops.yaml"
	waitFor(t, "the sealed Secret", func() bool { return r.has(path) })
	if got := decrypted(t, r.file(path), string(keys.Data["identity.agekey"])); got["token"] != "tok-123" {
		t.Fatalf("the generated identity decrypts %v", got)
	}

	// Without the flag a missing recipients Secret is an error, not a reason to make keys.
	other := target(ns, "other", "origin", "other", v1.PruneOnEvent)
	other.Spec.Encryption = &v1.EncryptionSpec{Provider: "sops", Age: v1.AgeSpec{RecipientsSecretRef: &v1.LocalObjectReference{Name: "not-there"}}}
	create(t, other)
	waitCondition(t, other, func() []metav1.Condition { return other.Status.Conditions }, v1.ConditionEncryptionConfigured, metav1.ConditionFalse, controller.ReasonRecipientsInvalid)
	if err := cp.Client.Get(ctxOf(t), keyOf(ns, "not-there"), &corev1.Secret{}); err == nil {
		t.Fatal("keys were generated without being asked for")
	}
}

func TestATypeMarkedSensitiveIsSealedLikeSecrets(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	workDir := t.TempDir()
	startOperatorWith(t, cp.Config, workDir, func(o *operator.Options) { o.SensitiveTypes = "configmaps" })
	identity, recipient, err := secrets.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	gt.Spec.Encryption = &v1.EncryptionSpec{Provider: "sops", Age: v1.AgeSpec{Recipients: []string{recipient}}}
	create(t, gt)
	create(t, watchRule(ns, "cms", "live", configMapsRule()))
	targetReady(t, gt)
	value := "cm-value-" + rand.Text()
	create(t, configMap(ns, "settings", map[string]string{"token": value}))
	path := "live/" + ns + "/core/configmaps/settings.sops.yaml"
	waitFor(t, "the sealed ConfigMap", func() bool { return r.has(path) })
	plain, err := secrets.Decrypt([]byte(r.file(path)), identity)
	if err != nil || !strings.Contains(string(plain), value) {
		t.Fatalf("decrypt: %v\n%s", err, plain)
	}
	assertNoPlaintext(t, filepath.Join(r.server.Root(), r.name), []string{value})
	assertNoPlaintext(t, workDir, []string{value})
}
