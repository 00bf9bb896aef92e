package attribution

import (
	"reflect"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
)

func TestAuthorNaming(t *testing.T) {
	cases := []struct {
		name         string
		user         authnv1.UserInfo
		impersonated *authnv1.UserInfo
		want         Author
	}{
		{"plain user", authnv1.UserInfo{Username: "alice", Groups: []string{"dev"}},
			nil, Author{Name: "alice", Email: "alice@users.kubernetes.invalid", Groups: []string{"dev"}, AuditID: "id"}},
		{"service account keeps the Kubernetes name", authnv1.UserInfo{Username: "system:serviceaccount:team-a:deployer"},
			nil, Author{Name: "system:serviceaccount:team-a:deployer", Email: "system-serviceaccount-team-a-deployer@users.kubernetes.invalid", AuditID: "id"}},
		{"impersonated user is the author, the real user the impersonator",
			authnv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}},
			&authnv1.UserInfo{Username: "bob", Groups: []string{"team-b"}},
			Author{Name: "bob", Email: "bob@users.kubernetes.invalid", Groups: []string{"team-b"}, Impersonator: "admin", AuditID: "id"}},
		{"impersonated service account", authnv1.UserInfo{Username: "admin"},
			&authnv1.UserInfo{Username: "system:serviceaccount:ci:bot"},
			Author{Name: "system:serviceaccount:ci:bot", Email: "system-serviceaccount-ci-bot@users.kubernetes.invalid", Impersonator: "admin", AuditID: "id"}},
		{"OIDC email claim", authnv1.UserInfo{Username: "oidc:https://issuer#1234", Extra: map[string]authnv1.ExtraValue{
			"example.com/email": {"Carol@Example.com"}, "example.com/name": {"Carol"}}},
			nil, Author{Name: "oidc:https://issuer#1234", Email: "Carol@Example.com", AuditID: "id"}},
		{"bare email key wins over prefixed ones", authnv1.UserInfo{Username: "dave", Extra: map[string]authnv1.ExtraValue{
			"a.example/email": {"other@example.com"}, "email": {"dave@example.com"}}},
			nil, Author{Name: "dave", Email: "dave@example.com", AuditID: "id"}},
		{"implausible email claim is ignored", authnv1.UserInfo{Username: "Eve Smith", Extra: map[string]authnv1.ExtraValue{
			"email": {"not an address"}}},
			nil, Author{Name: "Eve Smith", Email: "eve-smith@users.kubernetes.invalid", AuditID: "id"}},
		{"angle brackets cannot break the author line", authnv1.UserInfo{Username: "x<y@z>"},
			nil, Author{Name: "xy@z", Email: "x-y-z@users.kubernetes.invalid", AuditID: "id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var imp *userInfo
			if tc.impersonated != nil {
				u := userOf(*tc.impersonated)
				imp = &u
			}
			got := authorOf(userOf(tc.user), imp, "id")
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDerivedEmailIsStableAndBounded(t *testing.T) {
	if a, b := DerivedEmail("Alice"), DerivedEmail("alice"); a != b || a != "alice@users.kubernetes.invalid" {
		t.Fatalf("%q %q", a, b)
	}
	long := DerivedEmail("u" + strings.Repeat("x", 300))
	if at := len(long) - len("@"+DerivedEmailDomain); at > 64 {
		t.Fatalf("local part %d long", at)
	}
	if got := DerivedEmail(":::"); got != "unknown@users.kubernetes.invalid" {
		t.Fatal(got)
	}
}

func TestTrailers(t *testing.T) {
	got := Trailers(Author{Name: "bob", Impersonator: "admin", AuditID: "1b2c"})
	want := []string{"Audit-ID: 1b2c", "Kubernetes-User: bob", "Kubernetes-Impersonator: admin"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q", got)
	}
	if got := Trailers(Author{Name: "alice", AuditID: "x\ny"}); !reflect.DeepEqual(got, []string{"Audit-ID: x y", "Kubernetes-User: alice"}) {
		t.Fatalf("%q", got)
	}
	if Trailers(Unresolved()) != nil {
		t.Fatal("unresolved author has trailers")
	}
}
