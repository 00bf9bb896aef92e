//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
)

const (
	branch     = "main"
	targetPath = "clusters/bench"
	gitUser    = "bench"
	crName     = "bench"
)

// env is the control plane, the Git server and the operator binary, started once.
type env struct {
	dir        string
	cp         *servers.ControlPlane
	c          client.Client // no client-side rate limit
	kubeconfig string
	git        *servers.GitServer
	http       *servers.HTTPFrontend
	password   string
	// operatorArgv is the operator binary with `run`; profiledArgv the profiled one.
	operatorArgv, profiledArgv []string

	// kubeconfigEnv passes the kubeconfig as $KUBECONFIG rather than --kubeconfig.
	kubeconfigEnv bool
	// keep leaves repositories and work dirs on disk, for a look after the run.
	keep bool

	mu   sync.Mutex
	live map[*operatorProc]bool
}

func startEnv(dir string, operatorArgv, profiledArgv []string) (e *env, err error) {
	e = &env{dir: dir, operatorArgv: operatorArgv, profiledArgv: profiledArgv, live: map[*operatorProc]bool{}}
	defer func() {
		if err != nil {
			_ = e.Close()
		}
	}()
	if e.cp, err = servers.StartControlPlane(); err != nil {
		return e, err
	}
	if e.kubeconfig, err = e.cp.WriteKubeconfig(dir); err != nil {
		return e, err
	}
	cfg := rest.CopyConfig(e.cp.Config)
	cfg.QPS, cfg.Burst = 5000, 10000
	if e.c, err = client.New(cfg, client.Options{Scheme: e.cp.Scheme}); err != nil {
		return e, err
	}
	gitRoot := filepath.Join(dir, "git")
	if err := os.Mkdir(gitRoot, 0o755); err != nil {
		return e, err
	}
	e.git = servers.NewGitServer(gitRoot)
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	e.password = hex.EncodeToString(b)
	if e.http, err = e.git.StartHTTP(servers.HTTPAuth{Username: gitUser, Password: e.password}); err != nil {
		return e, err
	}
	return e, nil
}

// Close stops every operator still running, the Git server and the control plane.
func (e *env) Close() error {
	var errs []error
	e.mu.Lock()
	live := make([]*operatorProc, 0, len(e.live))
	for p := range e.live {
		live = append(live, p)
	}
	e.mu.Unlock()
	for _, p := range live {
		if err := p.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if e.http != nil {
		if err := e.http.Close(); err != nil {
			errs = append(errs, err)
		}
		e.http = nil
	}
	if e.cp != nil {
		if err := e.cp.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop the control plane: %w", err))
		}
		e.cp = nil
	}
	return errors.Join(errs...)
}

// repo is one bare repository on the Git server with a watcher of its branch.
type repo struct {
	name, dir, url string
	watch          *refWatcher
}

// newRepo creates an empty repository and starts watching its branch. Auto gc after a push
// is turned off so that no background git gc runs during a measurement (or outlives it).
func (e *env) newRepo(name string) (*repo, error) {
	if err := e.git.CreateRepo(name); err != nil {
		return nil, err
	}
	dir, err := e.git.RepoDir(name)
	if err != nil {
		return nil, err
	}
	if _, err := git(dir, "config", "receive.autogc", "false"); err != nil {
		return nil, err
	}
	w, err := watchRef(dir, branch)
	if err != nil {
		return nil, err
	}
	return &repo{name: name, dir: dir, url: e.http.URL(name), watch: w}, nil
}

// authURL is the repository's URL with the credentials, for the git command line.
func (e *env) authURL(r *repo) string {
	return strings.Replace(r.url, "://", "://"+gitUser+":"+e.password+"@", 1)
}

func (e *env) dropRepo(r *repo) {
	r.watch.Close()
	if !e.keep {
		_ = os.RemoveAll(r.dir)
	}
}

// configure creates the Secret, GitProvider, GitTarget and WatchRule (ConfigMaps) that
// mirror namespace ns into targetPath of r. window nil leaves the default (5s).
func (e *env) configure(ctx context.Context, ns string, r *repo, window *time.Duration) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: ns},
		StringData: map[string]string{v1.SecretKeyUsername: gitUser, v1.SecretKeyPassword: e.password},
	}
	provider := &v1.GitProvider{
		ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns},
		Spec: v1.GitProviderSpec{
			URL:             r.url,
			SecretRef:       &v1.LocalObjectReference{Name: "git-creds"},
			AllowedBranches: []string{branch},
		},
	}
	if window != nil {
		provider.Spec.Push.CommitWindow = &metav1.Duration{Duration: *window}
	}
	target := &v1.GitTarget{
		ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns},
		Spec: v1.GitTargetSpec{
			GitProviderRef: v1.GitProviderReference{Name: crName},
			Branch:         branch,
			Path:           targetPath,
		},
	}
	rule := &v1.WatchRule{
		ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns},
		Spec: v1.WatchRuleSpec{
			TargetRef: v1.LocalObjectReference{Name: crName},
			Rules:     []v1.ResourceRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}}},
		},
	}
	for _, obj := range []client.Object{secret, provider, target, rule} {
		if err := e.c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %T %s/%s: %w", obj, ns, obj.GetName(), err)
		}
	}
	return nil
}

// unconfigure deletes what configure created (the operator is stopped by then).
func (e *env) unconfigure(ctx context.Context, ns string) error {
	objs := []client.Object{
		&v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns}},
		&v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns}},
		&v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Name: crName, Namespace: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: ns}},
	}
	for _, obj := range objs {
		if err := e.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %T %s/%s: %w", obj, ns, obj.GetName(), err)
		}
	}
	return nil
}

// runOperator starts the operator (profiled with a CPU profile written to cpuProfile when
// that is set, and a heap profile at its largest heap to heapProfileOf(cpuProfile)) with a
// fresh work dir.
// viaEnv passes the kubeconfig as $KUBECONFIG for this run (always, with kubeconfigEnv).
func (e *env) runOperator(name, cpuProfile string, viaEnv bool) (*operatorProc, error) {
	argv := e.operatorArgv
	if cpuProfile != "" {
		argv = append(append([]string{}, e.profiledArgv...), "-cpuprofile", cpuProfile, "-heapprofile", heapProfileOf(cpuProfile), "--")
	}
	work := filepath.Join(e.dir, "work-"+name)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	p, err := startOperator(argv, e.kubeconfig, viaEnv || e.kubeconfigEnv, work, filepath.Join(e.dir, name+".log"))
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.live[p] = true
	e.mu.Unlock()
	return p, nil
}

// stopOperator stops p and removes its work dir.
func (e *env) stopOperator(p *operatorProc) error {
	err := p.stop()
	e.mu.Lock()
	delete(e.live, p)
	e.mu.Unlock()
	if !e.keep {
		_ = os.RemoveAll(p.workDir)
	}
	return err
}

// payload returns n printable bytes that differ per object (so Git cannot share blobs).
func payload(seed uint64, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	r := mrand.New(mrand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// deleteConfigMaps deletes every ConfigMap of ns in one request (the namespace stays: the
// test control plane runs no namespace controller).
func (e *env) deleteConfigMaps(ctx context.Context, ns string) error {
	if err := e.c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("delete the ConfigMaps of %s: %w", ns, err)
	}
	return nil
}

// createConfigMaps creates namespace ns and n ConfigMaps name-00000... in it, each with a
// payload of size bytes and seq "0", with a few concurrent requests.
func (e *env) createConfigMaps(ctx context.Context, ns, prefix string, n, size int) error {
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	jobs := make(chan int)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				data := map[string]string{"seq": "0"}
				if size > 0 {
					data["payload"] = payload(uint64(i)<<20^uint64(len(ns)), size)
				}
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: cmName(prefix, i), Namespace: ns, Labels: map[string]string{"app": "bench"}},
					Data:       data,
				}
				if err := e.c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
					select {
					case errc <- fmt.Errorf("create configmap %s/%s: %w", ns, cm.Name, err):
					default:
					}
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case err := <-errc:
			close(jobs)
			wg.Wait()
			return err
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return ctx.Err()
}

func cmName(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }

// docPath is where the canonical layout places a ConfigMap of namespace ns.
func docPath(ns, name string) string {
	return fmt.Sprintf("%s/%s/core/configmaps/%s.yaml", targetPath, ns, name)
}

// setSeq sets data.seq of a ConfigMap with a merge patch and returns when the API server
// answered.
func (e *env) setSeq(ctx context.Context, ns, name string, seq int) (time.Time, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	patch := fmt.Appendf(nil, `{"data":{"seq":"%d"}}`, seq)
	err := e.c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
	return time.Now(), err
}
