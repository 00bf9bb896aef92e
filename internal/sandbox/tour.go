package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// What the tour configures: one namespace, mirrored into one folder of main.
const (
	Namespace  = "demo"
	TargetName = "sandbox"
	Branch     = "main"
	TargetPath = "clusters/sandbox"
)

// DefaultStepTimeout bounds every wait of the tour.
const DefaultStepTimeout = 2 * time.Minute

// Tour configures the mirror on a sandbox, then creates, edits and deletes a few objects
// through the API (printing the equivalent kubectl command of each call) and waits for
// each change to reach the repository.
type Tour struct {
	Sandbox *Sandbox
	Out     io.Writer
	// StepTimeout bounds every wait; DefaultStepTimeout when zero.
	StepTimeout time.Duration

	tip string // the branch tip the last wait saw
}

// Run runs the whole tour.
func (t *Tour) Run(ctx context.Context) error {
	if t.StepTimeout == 0 {
		t.StepTimeout = DefaultStepTimeout
	}
	if err := t.configure(ctx); err != nil {
		return err
	}
	users, err := t.users()
	if err != nil {
		return err
	}
	for _, s := range t.steps() {
		fmt.Fprintf(t.Out, "\n# %s, as %s\n", s.title, s.user)
		for _, a := range s.actions {
			fmt.Fprintf(t.Out, "%s$ %s\n", s.user, a.kubectl)
			if err := a.call(ctx, users[s.user]); err != nil {
				return fmt.Errorf("%s: %w", a.kubectl, err)
			}
		}
		if err := t.waitForRepo(ctx, s.waitFor, s.check); err != nil {
			return err
		}
	}
	return nil
}

// users returns a client for each user of the tour. They are administrators of the
// sandbox: what matters here is the name the API server records for them.
func (t *Tour) users() (map[string]client.Client, error) {
	cp := t.Sandbox.ControlPlane
	out := map[string]client.Client{}
	for _, name := range []string{Alice, Bob} {
		cfg, err := cp.AddUser(name, "system:masters")
		if err != nil {
			return nil, err
		}
		if out[name], err = client.New(cfg, client.Options{Scheme: cp.Client.Scheme()}); err != nil {
			return nil, fmt.Errorf("client of %s: %w", name, err)
		}
	}
	return out, nil
}

// configure applies the namespace, the Secret with the Git credentials, the GitProvider,
// the GitTarget and the WatchRule, and waits for the GitTarget to be Ready.
func (t *Tour) configure(ctx context.Context) error {
	s := t.Sandbox
	c := s.ControlPlane.Client
	fmt.Fprintf(t.Out, "\n# Point the operator at the Git server: what to mirror, and where\n")
	fmt.Fprintf(t.Out, "$ kubectl create namespace %s\n", Namespace)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); err != nil {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	fmt.Fprintf(t.Out, "$ kubectl create secret generic git-creds -n %s --from-literal=username=%s --from-literal=password=%s\n",
		Namespace, GitUsername, s.GitPassword)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: Namespace},
		StringData: map[string]string{v1.SecretKeyUsername: GitUsername, v1.SecretKeyPassword: s.GitPassword},
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("create secret git-creds: %w", err)
	}
	manifest := MirrorManifest(s.RepoURL)
	fmt.Fprintf(t.Out, "$ kubectl apply -f - <<'EOF'\n%sEOF\n", manifest)
	objs, err := decodeMirror(manifest)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return t.waitForTargetReady(ctx)
}

// MirrorManifest is the GitProvider, GitTarget and WatchRule of the tour, as YAML.
func MirrorManifest(repoURL string) string {
	return fmt.Sprintf(`apiVersion: gitops-reverser.io/v1alpha1
kind: GitProvider
metadata: {name: %[2]s, namespace: %[3]s}
spec:
  url: %[1]s
  secretRef: {name: git-creds}
  allowedBranches: ["%[4]s"]
  push: {commitWindow: 1s}
---
apiVersion: gitops-reverser.io/v1alpha1
kind: GitTarget
metadata: {name: %[2]s, namespace: %[3]s}
spec:
  gitProviderRef: {name: %[2]s}
  branch: %[4]s
  path: %[5]s
---
apiVersion: gitops-reverser.io/v1alpha1
kind: WatchRule
metadata: {name: %[2]s, namespace: %[3]s}
spec:
  targetRef: {name: %[2]s}
  rules:
    - apiGroups: ["", "apps"]
      resources: ["configmaps", "deployments"]
`, repoURL, TargetName, Namespace, Branch, TargetPath)
}

func decodeMirror(manifest string) ([]client.Object, error) {
	docs := strings.Split(manifest, "\n---\n")
	objs := []client.Object{&v1.GitProvider{}, &v1.GitTarget{}, &v1.WatchRule{}}
	if len(docs) != len(objs) {
		return nil, fmt.Errorf("mirror manifest has %d documents, want %d", len(docs), len(objs))
	}
	for i, doc := range docs {
		if err := yaml.UnmarshalStrict([]byte(doc), objs[i]); err != nil {
			return nil, fmt.Errorf("mirror manifest document %d: %w", i+1, err)
		}
	}
	return objs, nil
}

// waitForTargetReady waits for the GitTarget's Ready condition to be True.
func (t *Tour) waitForTargetReady(ctx context.Context) error {
	c := t.Sandbox.ControlPlane.Client
	what := fmt.Sprintf("GitTarget %s/%s to be Ready", Namespace, TargetName)
	fmt.Fprintf(t.Out, "  waiting for %s ...\n", what)
	start := time.Now()
	var last v1.GitTarget
	err := poll(ctx, t.StepTimeout, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: TargetName}, &last); err != nil {
			return false, nil // transient; the deadline reports it
		}
		return meta.IsStatusConditionTrue(last.Status.Conditions, v1.ConditionReady), nil
	})
	if err != nil {
		return t.timedOut(what, err, "its conditions: "+describeConditions(last.Status.Conditions))
	}
	fmt.Fprintf(t.Out, "  ready after %s\n", roundDuration(time.Since(start)))
	return nil
}

// timedOut builds the error of a wait that failed, with the operator's last log lines.
func (t *Tour) timedOut(what string, err error, state string) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted while waiting for %s", what)
	}
	return fmt.Errorf("%w waiting for %s; %s\nthe operator's log %s ends with:\n%s",
		err, what, state, t.Sandbox.OperatorLog, LogTail(t.Sandbox.OperatorLog, 15))
}

func describeConditions(conds []metav1.Condition) string {
	if len(conds) == 0 {
		return "none yet"
	}
	var parts []string
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

// DocumentPath is where the canonical layout writes an object of the tour's namespace.
func DocumentPath(group, resource, name string) string {
	if group == "" {
		group = "core"
	}
	return path.Join(TargetPath, Namespace, group, resource, name+".yaml")
}

// tree is one commit of the branch, as a wait sees it.
type tree struct {
	s      *Sandbox
	commit string
	files  []string
}

func (tr tree) has(p string) bool { return slices.Contains(tr.files, p) }

// object parses the document at p into out; false when it is missing or unreadable.
func (tr tree) object(p string, out any) bool {
	if !tr.has(p) {
		return false
	}
	data, err := tr.s.Git.ReadFile(RepoName, tr.commit, p)
	if err != nil {
		return false
	}
	return yaml.Unmarshal(data, out) == nil
}

func (tr tree) configMapValue(name, key string) (string, bool) {
	var cm corev1.ConfigMap
	if !tr.object(DocumentPath("", "configmaps", name), &cm) {
		return "", false
	}
	v, ok := cm.Data[key]
	return v, ok
}

func (tr tree) deploymentImage(name string) string {
	var d appsv1.Deployment
	if !tr.object(DocumentPath("apps", "deployments", name), &d) || len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// waitForRepo polls the branch until check holds, then prints the commits that arrived.
func (t *Tour) waitForRepo(ctx context.Context, what string, check func(tree) bool) error {
	s := t.Sandbox
	fmt.Fprintf(t.Out, "  waiting for %s ...\n", what)
	start := time.Now()
	var tip string
	err := poll(ctx, t.StepTimeout, func() (bool, error) {
		select {
		case <-s.OperatorExited():
			return false, fmt.Errorf("the operator exited (%v)", s.OperatorError())
		default:
		}
		var err error
		if tip, err = s.Git.BranchTip(RepoName, Branch); err != nil || tip == "" {
			return false, nil
		}
		files, err := s.Git.ListFiles(RepoName, tip)
		if err != nil {
			return false, nil
		}
		return check(tree{s: s, commit: tip, files: files}), nil
	})
	if err != nil {
		state := "branch " + Branch + " does not exist yet"
		if tip != "" {
			state = "the last commit of " + Branch + " is " + t.oneLine(tip)
		}
		return t.timedOut(what, err, state)
	}
	rangeArg := tip
	if t.tip != "" {
		rangeArg = t.tip + ".." + tip
	}
	t.tip = tip
	out, err := s.RunGit("log", "--reverse", "--format=%h %s", rangeArg)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fmt.Fprintf(t.Out, "  committed %s\n", line)
	}
	fmt.Fprintf(t.Out, "  (%s after the change)\n", roundDuration(time.Since(start)))
	return nil
}

func (t *Tour) oneLine(sha string) string {
	out, err := t.Sandbox.RunGit("log", "-1", "--format=%h %s", sha)
	if err != nil {
		return sha
	}
	return strings.TrimSpace(out)
}

// poll calls cond every 250ms until it holds, fails, ctx ends or timeout passes.
func poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("timed out after %s", timeout)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// RunGit runs git on the sandbox's bare repository and returns its standard output. It
// ignores the machine's and the user's Git configuration.
func (s *Sandbox) RunGit(args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", s.RepoDir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_PAGER=cat", "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
