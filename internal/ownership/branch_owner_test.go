package ownership

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestKeyFor(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		branch  string
		want    BranchKey
		wantErr error
	}{
		{"plain", "https://git.example.com/team/app", "main", BranchKey{"https://git.example.com/team/app", "main"}, nil},
		{"url normalized", "HTTPS://user:pw@Git.Example.com:443/team/app.git/", "main", BranchKey{"https://git.example.com/team/app", "main"}, nil},
		{"full ref name", "https://git.example.com/team/app", "refs/heads/release/1", BranchKey{"https://git.example.com/team/app", "release/1"}, nil},
		{"branch case kept", "https://git.example.com/team/app", "Main", BranchKey{"https://git.example.com/team/app", "Main"}, nil},
		{"invalid url", "ftp://git.example.com/team/app", "main", BranchKey{}, ErrInvalidURL},
		{"empty branch", "https://git.example.com/team/app", "", BranchKey{}, ErrInvalidBranch},
		{"empty branch after prefix", "https://git.example.com/team/app", "refs/heads/", BranchKey{}, ErrInvalidBranch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KeyFor(tt.url, tt.branch)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("KeyFor(%q, %q) error = %v, want %v", tt.url, tt.branch, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("KeyFor(%q, %q) = %#v, want %#v", tt.url, tt.branch, got, tt.want)
			}
		})
	}
}

func TestBranchKeyString(t *testing.T) {
	k := BranchKey{URL: "https://git.example.com/team/app", Branch: "main"}
	if got, want := k.String(), "https://git.example.com/team/app#main"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

const repo = "https://git.example.com/team/app"

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func nn(s string) types.NamespacedName {
	ns, name, _ := strings.Cut(s, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}

// claim builds an admitted claim; age is minutes after t0.
func claim(target string, age int, provider, url, branch, path string) Claim {
	return Claim{
		Target:   nn(target),
		Created:  t0.Add(time.Duration(age) * time.Minute),
		Provider: nn(provider),
		URL:      url,
		Branch:   branch,
		Path:     path,
		Admitted: true,
	}
}

func notAdmitted(c Claim) Claim {
	c.Admitted = false
	return c
}

// want is the expected verdict of one target; the message is checked by substrings.
type want struct {
	target   string
	key      BranchKey
	owner    string
	conflict bool
	message  []string
}

func mainKey() BranchKey { return BranchKey{URL: repo, Branch: "main"} }

func TestDecideOwnership(t *testing.T) {
	tests := []struct {
		name   string
		claims []Claim
		want   []want
	}{
		{
			name:   "no claims",
			claims: nil,
			want:   nil,
		},
		{
			name:   "single target",
			claims: []Claim{claim("team/live", 0, "team/git", repo, "main", "clusters/live")},
			want:   []want{{target: "team/live", key: mainKey(), owner: "team/git"}},
		},
		{
			name: "two providers on one branch: the younger target conflicts and is told the owner",
			claims: []Claim{
				claim("platform/live", 0, "platform/shared", repo, "main", "live"),
				claim("team/app", 5, "team/own", repo, "main", "apps/team"),
			},
			want: []want{
				{target: "platform/live", key: mainKey(), owner: "platform/shared"},
				{target: "team/app", key: mainKey(), owner: "platform/shared", conflict: true, message: []string{
					`branch "main" of https://git.example.com/team/app is written through GitProvider platform/shared (owner of the branch since GitTarget platform/live was created); point spec.gitProviderRef at platform/shared to share it`,
					`spec.accessFrom must admit namespace "team"`,
				}},
			},
		},
		{
			name: "the oldest target decides the owner, not the input order or the provider name",
			claims: []Claim{
				claim("a/first", 10, "a/zz", repo, "main", "a"),
				claim("b/second", 1, "b/aa", repo, "main", "b"),
			},
			want: []want{
				{target: "a/first", key: mainKey(), owner: "b/aa", conflict: true, message: []string{"GitProvider b/aa", "GitTarget b/second", "point spec.gitProviderRef at b/aa"}},
				{target: "b/second", key: mainKey(), owner: "b/aa"},
			},
		},
		{
			name: "same namespace as the owner needs no accessFrom hint",
			claims: []Claim{
				claim("platform/live", 0, "platform/shared", repo, "main", "live"),
				claim("platform/other", 5, "platform/own", repo, "main", "other"),
			},
			want: []want{
				{target: "platform/live", key: mainKey(), owner: "platform/shared"},
				{target: "platform/other", key: mainKey(), owner: "platform/shared", conflict: true, message: []string{"point spec.gitProviderRef at platform/shared to share it"}},
			},
		},
		{
			name: "same provider, sibling paths share the branch",
			claims: []Claim{
				claim("ns/a", 0, "ns/git", repo, "main", "apps/a"),
				claim("ns/b", 1, "ns/git", repo, "main", "apps/b"),
				claim("ns/c", 2, "ns/git", repo, "main", "apps/ab"),
				claim("ns/d", 3, "ns/git", repo, "main", "apps/a-b"),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git"},
				{target: "ns/b", key: mainKey(), owner: "ns/git"},
				{target: "ns/c", key: mainKey(), owner: "ns/git"},
				{target: "ns/d", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "a prefix that is not a parent folder is a sibling",
			claims: []Claim{
				claim("ns/a", 0, "ns/git", repo, "main", "a"),
				claim("ns/ab", 1, "ns/git", repo, "main", "ab"),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git"},
				{target: "ns/ab", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "nested path inside an older one conflicts",
			claims: []Claim{
				claim("ns/outer", 0, "ns/git", repo, "main", "a"),
				claim("ns/inner", 1, "ns/git", repo, "main", "a/b"),
			},
			want: []want{
				{target: "ns/inner", key: mainKey(), owner: "ns/git", conflict: true, message: []string{`spec.path "a/b" overlaps path "a" of GitTarget ns/outer`, `branch "main" of ` + repo}},
				{target: "ns/outer", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "younger path containing an older one conflicts",
			claims: []Claim{
				claim("ns/inner", 0, "ns/git", repo, "main", "a/b/c"),
				claim("ns/outer", 1, "ns/git", repo, "main", "a"),
			},
			want: []want{
				{target: "ns/inner", key: mainKey(), owner: "ns/git"},
				{target: "ns/outer", key: mainKey(), owner: "ns/git", conflict: true, message: []string{`spec.path "a" overlaps path "a/b/c" of GitTarget ns/inner`}},
			},
		},
		{
			name: "equal paths conflict, also when spelled differently",
			claims: []Claim{
				claim("ns/one", 0, "ns/git", repo, "main", "apps/x"),
				claim("ns/two", 1, "ns/git", repo, "main", "apps//x/"),
			},
			want: []want{
				{target: "ns/one", key: mainKey(), owner: "ns/git"},
				{target: "ns/two", key: mainKey(), owner: "ns/git", conflict: true, message: []string{`overlaps path "apps/x" of GitTarget ns/one`}},
			},
		},
		{
			name: "an older root conflicts with everything",
			claims: []Claim{
				claim("ns/root", 0, "ns/git", repo, "main", "."),
				claim("ns/a", 1, "ns/git", repo, "main", "a"),
				claim("ns/b", 2, "ns/git", repo, "main", "b/c"),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git", conflict: true, message: []string{`path "." (the repository root) of GitTarget ns/root`, "use another branch"}},
				{target: "ns/b", key: mainKey(), owner: "ns/git", conflict: true, message: []string{"GitTarget ns/root"}},
				{target: "ns/root", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "a younger root conflicts with everything",
			claims: []Claim{
				claim("ns/a", 0, "ns/git", repo, "main", "a"),
				claim("ns/root", 1, "ns/git", repo, "main", "."),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git"},
				{target: "ns/root", key: mainKey(), owner: "ns/git", conflict: true, message: []string{`spec.path "." (the repository root) overlaps path "a" of GitTarget ns/a`}},
			},
		},
		{
			name: "a refused target does not block younger ones",
			claims: []Claim{
				claim("ns/ab", 0, "ns/git", repo, "main", "a/b"),
				claim("ns/a", 1, "ns/git", repo, "main", "a"),
				claim("ns/ac", 2, "ns/git", repo, "main", "a/c"),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git", conflict: true, message: []string{"GitTarget ns/ab"}},
				{target: "ns/ab", key: mainKey(), owner: "ns/git"},
				{target: "ns/ac", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "a provider conflict is not a path owner",
			claims: []Claim{
				claim("ns/first", 0, "ns/git", repo, "main", "x"),
				claim("other/root", 1, "other/git", repo, "main", "."),
				claim("ns/y", 2, "ns/git", repo, "main", "y"),
			},
			want: []want{
				{target: "ns/first", key: mainKey(), owner: "ns/git"},
				{target: "ns/y", key: mainKey(), owner: "ns/git"},
				{target: "other/root", key: mainKey(), owner: "ns/git", conflict: true, message: []string{"point spec.gitProviderRef at ns/git"}},
			},
		},
		{
			name: "different branches are independent",
			claims: []Claim{
				claim("ns/main", 0, "ns/git", repo, "main", "."),
				claim("ns/dev", 1, "other/git", repo, "dev", "."),
			},
			want: []want{
				{target: "ns/dev", key: BranchKey{URL: repo, Branch: "dev"}, owner: "other/git"},
				{target: "ns/main", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "different repositories are independent",
			claims: []Claim{
				claim("ns/a", 0, "ns/git", repo, "main", "."),
				claim("ns/b", 1, "other/git", "https://git.example.com/team/other", "main", "."),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git"},
				{target: "ns/b", key: BranchKey{URL: "https://git.example.com/team/other", Branch: "main"}, owner: "other/git"},
			},
		},
		{
			name: "spellings of one repository share the branch",
			claims: []Claim{
				claim("ns/a", 0, "ns/git", "https://Git.Example.com:443/team/app.git", "main", "a"),
				claim("other/b", 1, "other/git", "https://deploy:hunter2@git.example.com/team/app/", "refs/heads/main", "b"),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git"},
				{target: "other/b", key: mainKey(), owner: "ns/git", conflict: true, message: []string{"is written through GitProvider ns/git"}},
			},
		},
		{
			name: "https and ssh spellings are different branches",
			claims: []Claim{
				claim("ns/a", 0, "ns/https", repo, "main", "."),
				claim("ns/b", 1, "ns/ssh", "git@git.example.com:team/app.git", "main", "."),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/https"},
				{target: "ns/b", key: BranchKey{URL: "ssh://git.example.com/team/app", Branch: "main"}, owner: "ns/ssh"},
			},
		},
		{
			name: "a target that is not admitted is ignored and owns nothing",
			claims: []Claim{
				notAdmitted(claim("intruder/x", 0, "intruder/git", repo, "main", ".")),
				claim("ns/a", 1, "ns/git", repo, "main", "a"),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "a tie on Created is broken by namespace, then name",
			claims: []Claim{
				claim("b/x", 0, "b/git", repo, "main", "x"),
				claim("a/z", 0, "a/git", repo, "main", "z"),
				claim("a/y", 0, "a/other", repo, "main", "y"),
			},
			want: []want{
				{target: "a/y", key: mainKey(), owner: "a/other"},
				{target: "a/z", key: mainKey(), owner: "a/other", conflict: true, message: []string{"since GitTarget a/y was created"}},
				{target: "b/x", key: mainKey(), owner: "a/other", conflict: true, message: []string{"GitProvider a/other"}},
			},
		},
		{
			name: "a tie on Created with overlapping paths: the first name wins the path",
			claims: []Claim{
				claim("ns/b", 0, "ns/git", repo, "main", "apps"),
				claim("ns/a", 0, "ns/git", repo, "main", "apps"),
			},
			want: []want{
				{target: "ns/a", key: mainKey(), owner: "ns/git"},
				{target: "ns/b", key: mainKey(), owner: "ns/git", conflict: true, message: []string{"GitTarget ns/a"}},
			},
		},
		{
			name: "an invalid URL gets a conflict without leaking the password and owns nothing",
			claims: []Claim{
				claim("ns/bad", 0, "ns/bad-git", "ftp://user:hunter2@git.example.com/team/app", "main", "."),
				claim("ns/ok", 1, "ns/git", repo, "main", "."),
			},
			want: []want{
				{target: "ns/bad", conflict: true, message: []string{"GitProvider ns/bad-git", "invalid repository URL", `unsupported scheme "ftp"`}},
				{target: "ns/ok", key: mainKey(), owner: "ns/git"},
			},
		},
		{
			name: "an empty branch gets a conflict",
			claims: []Claim{
				claim("ns/bad", 0, "ns/git", repo, "", "."),
			},
			want: []want{
				{target: "ns/bad", conflict: true, message: []string{"invalid branch name"}},
			},
		},
		{
			name: "a path outside the repository gets a conflict and takes no part",
			claims: []Claim{
				claim("ns/abs", 0, "other/git", repo, "main", "/etc"),
				claim("ns/up", 1, "other/git", repo, "main", "../x"),
				claim("ns/ok", 2, "ns/git", repo, "main", "."),
			},
			want: []want{
				{target: "ns/abs", key: mainKey(), conflict: true, message: []string{`spec.path "/etc"`, "not a relative path"}},
				{target: "ns/ok", key: mainKey(), owner: "ns/git"},
				{target: "ns/up", key: mainKey(), conflict: true, message: []string{`spec.path "../x"`}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecideOwnership(tt.claims)
			if err != nil {
				t.Fatalf("DecideOwnership error: %v", err)
			}
			checkVerdicts(t, got, tt.want)
			for _, v := range got {
				if strings.Contains(v.Message, "hunter2") {
					t.Errorf("verdict for %s leaks a password: %s", v.Target, v.Message)
				}
			}
			for i, perm := range permutations(tt.claims) {
				again, err := DecideOwnership(perm)
				if err != nil {
					t.Fatalf("permutation %d: error %v", i, err)
				}
				if !reflect.DeepEqual(again, got) {
					t.Fatalf("permutation %d of the claims changes the result:\n got %+v\nwant %+v", i, again, got)
				}
			}
		})
	}
}

func checkVerdicts(t *testing.T, got []Verdict, want []want) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d verdicts, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		v := got[i]
		if v.Target != nn(w.target) {
			t.Errorf("verdict %d is for %s, want %s", i, v.Target, w.target)
			continue
		}
		if v.Key != w.key {
			t.Errorf("%s: key %#v, want %#v", w.target, v.Key, w.key)
		}
		wantOwner := types.NamespacedName{}
		if w.owner != "" {
			wantOwner = nn(w.owner)
		}
		if v.Owner != wantOwner {
			t.Errorf("%s: owner %s, want %s", w.target, v.Owner, wantOwner)
		}
		if v.Conflict != w.conflict {
			t.Errorf("%s: conflict %v, want %v (message %q)", w.target, v.Conflict, w.conflict, v.Message)
		}
		if !w.conflict && v.Message != "" {
			t.Errorf("%s: message %q without a conflict", w.target, v.Message)
		}
		if w.conflict && v.Message == "" {
			t.Errorf("%s: conflict without a message", w.target)
		}
		for _, m := range w.message {
			if !strings.Contains(v.Message, m) {
				t.Errorf("%s: message %q does not contain %q", w.target, v.Message, m)
			}
		}
	}
}

// permutations returns every order of claims (up to 6 claims), or 200 shuffles beyond that.
func permutations(claims []Claim) [][]Claim {
	if len(claims) > 6 {
		r := rand.New(rand.NewPCG(1, 2))
		out := make([][]Claim, 200)
		for i := range out {
			p := append([]Claim(nil), claims...)
			r.Shuffle(len(p), func(a, b int) { p[a], p[b] = p[b], p[a] })
			out[i] = p
		}
		return out
	}
	var out [][]Claim
	var walk func(prefix, rest []Claim)
	walk = func(prefix, rest []Claim) {
		if len(rest) == 0 {
			out = append(out, append([]Claim(nil), prefix...))
			return
		}
		for i := range rest {
			next := append(append([]Claim(nil), rest[:i]...), rest[i+1:]...)
			walk(append(prefix, rest[i]), next)
		}
	}
	walk(nil, claims)
	return out
}

func TestDecideOwnershipOrderIndependenceAtScale(t *testing.T) {
	// Many targets, several providers, branches and URL spellings, overlapping paths and
	// equal creation times: every shuffle must give the same verdicts.
	spellings := []string{repo, "https://GIT.example.com/team/app.git", "https://u:p@git.example.com:443/team/app/"}
	paths := []string{".", "a", "a/b", "ab", "b", "b/c/d", "c"}
	var claims []Claim
	for i := range 40 {
		claims = append(claims, claim(
			fmt.Sprintf("ns%d/t%02d", i%3, i),
			i%7, // many ties
			fmt.Sprintf("ns%d/git%d", i%3, i%2),
			spellings[i%len(spellings)],
			[]string{"main", "dev"}[i%2],
			paths[i%len(paths)],
		))
		if i%11 == 0 {
			claims[i].Admitted = false
		}
	}
	want, err := DecideOwnership(claims)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 36 {
		t.Fatalf("got %d verdicts, want 36 (40 claims, 4 not admitted)", len(want))
	}
	owners := map[BranchKey]types.NamespacedName{}
	for _, v := range want {
		if o, ok := owners[v.Key]; ok && o != v.Owner {
			t.Errorf("branch %s has two owners: %s and %s", v.Key, o, v.Owner)
		}
		owners[v.Key] = v.Owner
	}
	if len(owners) != 2 {
		t.Errorf("got %d branches, want 2: %v", len(owners), owners)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		p := append([]Claim(nil), claims...)
		r.Shuffle(len(p), func(a, b int) { p[a], p[b] = p[b], p[a] })
		got, err := DecideOwnership(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffle %d changes the result", i)
		}
	}
}

func TestDecideOwnershipInputErrors(t *testing.T) {
	tests := []struct {
		name   string
		claims []Claim
	}{
		{"duplicate target", []Claim{
			claim("ns/a", 0, "ns/git", repo, "main", "a"),
			claim("ns/a", 1, "ns/git", repo, "main", "b"),
		}},
		{"duplicate target, one not admitted", []Claim{
			claim("ns/a", 0, "ns/git", repo, "main", "a"),
			notAdmitted(claim("ns/a", 1, "ns/git", repo, "main", "b")),
		}},
		{"target without a name", []Claim{
			claim("ns/", 0, "ns/git", repo, "main", "a"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecideOwnership(tt.claims)
			if err == nil {
				t.Fatalf("DecideOwnership = %+v, want an error", got)
			}
			if got != nil {
				t.Errorf("DecideOwnership returned verdicts with an error: %+v", got)
			}
		})
	}
}

func TestDecideOwnershipDoesNotModifyInput(t *testing.T) {
	claims := []Claim{
		claim("ns/b", 1, "ns/git", repo, "main", "b"),
		claim("ns/a", 0, "ns/git", repo, "main", "a"),
	}
	before := append([]Claim(nil), claims...)
	if _, err := DecideOwnership(claims); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(claims, before) {
		t.Errorf("DecideOwnership reordered or changed its input: %+v", claims)
	}
}
