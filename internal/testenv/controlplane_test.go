//go:build e2e

package testenv

import (
	"context"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestControlPlaneServesCRDsAndAuthenticatesUsers(t *testing.T) {
	cp := NewControlPlane(t, WithAPIServerFlag("audit-log-maxage", "1"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var providers v1.GitProviderList
	if err := cp.Client.List(ctx, &providers); err != nil {
		t.Fatalf("the GitProvider CRD is not served: %v", err)
	}

	cfg, err := cp.AddUser("alice", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().
		Create(ctx, &authv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != "alice" {
		t.Fatalf("the added user authenticates as %q, want alice", got)
	}
	if err := cp.CreateNamespace(ctx, "team-a", map[string]string{"tier": "dev"}); err != nil {
		t.Fatal(err)
	}
}
