package attribution

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// event is a ResponseComplete, successful audit event of verb on a ConfigMap, shaped as
// kube-apiserver sends it at RequestResponse level.
func event(id, verb, ns, name, uid, rv, user string) auditv1.Event {
	ev := auditv1.Event{
		Level:      auditv1.LevelRequestResponse,
		AuditID:    types.UID(id),
		Stage:      auditv1.StageResponseComplete,
		RequestURI: fmt.Sprintf("/api/v1/namespaces/%s/configmaps/%s", ns, name),
		Verb:       verb,
		User:       authnv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}},
		ObjectRef: &auditv1.ObjectReference{
			Resource: "configmaps", Namespace: ns, Name: name, APIVersion: "v1",
		},
		ResponseStatus: &metav1.Status{Code: 200},
		StageTimestamp: metav1.NewMicroTime(time.Now()),
	}
	if uid != "" {
		obj := fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":%q,"uid":%q,"resourceVersion":%q}}`, name, ns, uid, rv)
		ev.ResponseObject = &runtime.Unknown{Raw: []byte(obj), ContentType: runtime.ContentTypeJSON}
	}
	return ev
}

func eventList(evs ...auditv1.Event) []byte {
	l := auditv1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "audit.k8s.io/v1"}, Items: evs}
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	return b
}

// post sends body to the handler and returns the status code.
func post(t *testing.T, h http.Handler, body []byte) int {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	return rec.Code
}

func cmKey(ns, name, uid, rv string) ObjectKey {
	return ObjectKey{Resource: cmGR, Namespace: ns, Name: name, UID: uid, ResourceVersion: rv}
}
