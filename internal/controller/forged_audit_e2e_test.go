//go:build e2e

package controller_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// The audit port accepts only the certificate names of --audit-allowed-names. A client
// certificate the same CA signed for another name (a kubelet's) posts an audit event that
// claims mallory made a change: the operator refuses it at the handshake, and the commit
// is authored by who really made the change, as kube-apiserver (the allowed name) reports.
func TestAForgedAuditEventFromAnotherCertificateNameAuthorsNoCommit(t *testing.T) {
	serverCA, clientCA := testenv.NewCA(t, "audit-server-ca"), testenv.NewCA(t, "cluster-ca")
	addr, metricsAddr := testenv.LoopbackAddress(t), testenv.LoopbackAddress(t)
	apiCert, apiKey := clientCA.Issue(t, "kube-apiserver", false)
	hook := testenv.WebhookKubeconfig("https://"+addr+"/audit-webhook", string(serverCA.PEM), string(apiCert), string(apiKey))
	serverCert, serverKey := serverCA.Issue(t, "gitops-reverser-audit", true)
	pair, err := tls.X509KeyPair(serverCert, serverKey)
	if err != nil {
		t.Fatal(err)
	}
	own := auditingControlPlane(t, addr, hook, &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	dir := t.TempDir()
	files := map[string][]byte{"tls.crt": serverCert, "tls.key": serverKey, "ca.crt": clientCA.PEM}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := newRepo(t)
	startOperatorWith(t, own.Config, t.TempDir(), func(o *operator.Options) {
		o.AuditBindAddress, o.AttributionGrace, o.MetricsBindAddress = addr, 10*time.Second, metricsAddr
		o.AuditCertFile, o.AuditKeyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		o.AuditClientCAFile, o.AuditAllowedNames = filepath.Join(dir, "ca.crt"), "kube-apiserver"
	})
	ns := "forged"
	mirrorNamespace(t, own, r, ns)
	alice := userClient(t, own, "alice")

	cm := configMap(ns, "contested", map[string]string{"v": "1"})
	if err := alice.Create(ctxOf(t), cm); err != nil {
		t.Fatal(err)
	}
	kubelet := clientTLSWith(t, serverCA, clientCA, "system:node:worker-1")
	forged := forgedCreate(cm.Namespace, cm.Name, string(cm.UID), cm.ResourceVersion, "mallory")
	// Posted until the operator counts its refusal: before the audit port is up (and ready)
	// a post fails for other reasons, which prove nothing.
	refused := regexp.MustCompile(`gitops_reverser_audit_events_total\{outcome="refused",reason="name_not_allowed"\} [1-9]`)
	lastErr := ""
	waitFor(t, "the forged post refused for its certificate name", func() bool {
		err := postAudit(addr, kubelet, forged)
		if err == nil {
			t.Fatal("a kubelet's certificate posted an audit event")
		}
		if err.Error() != lastErr {
			lastErr = err.Error()
			t.Logf("the forged post: %v", err)
		}
		return refused.MatchString(get(t, "http://"+metricsAddr+"/metrics"))
	})

	path := "live/" + ns + "/core/configmaps/contested.yaml"
	waitFor(t, "the change in Git", func() bool { return r.has(path) })
	for _, c := range r.log() {
		if strings.Contains(c.Author, "mallory") {
			t.Fatalf("a commit is authored by the forged user: %+v", c)
		}
	}
	if log := r.log(); !strings.HasPrefix(log[0].Author, "alice") {
		t.Fatalf("the change's commit is authored %q, want alice", log[0].Author)
	}
}

// clientTLSWith trusts serverCA and presents a client certificate for cn signed by ca.
func clientTLSWith(t *testing.T, serverCA, ca *testenv.CA, cn string) *tls.Config {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(serverCA.Cert)
	c, k := ca.Issue(t, cn, false)
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

// postAudit posts body to the audit port at addr; an error when the request did not get
// a 2xx answer.
func postAudit(addr string, cfg *tls.Config, body []byte) error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := c.Post("https://"+addr+"/audit-webhook", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

// forgedCreate is an audit EventList claiming user created the ConfigMap ns/name at rv, as
// kube-apiserver would report it.
func forgedCreate(ns, name, uid, rv, user string) []byte {
	obj := fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":%q,"uid":%q,"resourceVersion":%q}}`, name, ns, uid, rv)
	ev := auditv1.Event{
		Level: auditv1.LevelRequestResponse, AuditID: types.UID("forged-" + uid), Stage: auditv1.StageResponseComplete,
		RequestURI: fmt.Sprintf("/api/v1/namespaces/%s/configmaps", ns), Verb: "create",
		User:           authnv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}},
		ObjectRef:      &auditv1.ObjectReference{Resource: "configmaps", Namespace: ns, Name: name, APIVersion: "v1"},
		ResponseStatus: &metav1.Status{Code: 201}, StageTimestamp: metav1.NewMicroTime(time.Now()),
		ResponseObject: &runtime.Unknown{Raw: []byte(obj), ContentType: runtime.ContentTypeJSON},
	}
	b, _ := json.Marshal(auditv1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "audit.k8s.io/v1"}, Items: []auditv1.Event{ev}})
	return b
}
