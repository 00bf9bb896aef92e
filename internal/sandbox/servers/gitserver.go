package servers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// GitServer holds bare repositories on disk. Its front ends (ServeHTTP, ServeSSH) serve
// every repository it holds; its methods read the repositories directly, as an
// administrator of the Git host would.
type GitServer struct {
	root string

	mu     sync.Mutex
	pushes map[string]int // repository name -> receive-pack sessions that reached the server
}

// NewGitServer returns a Git server whose repositories live in the folder root, which must
// exist. The caller owns the folder and removes it when done.
func NewGitServer(root string) *GitServer {
	return &GitServer{root: root, pushes: map[string]int{}}
}

// RepoDir returns the folder of a repository, for tools that read it directly.
func (g *GitServer) RepoDir(name string) (string, error) { return g.repoDir(name) }

// Root is the folder holding the bare repositories.
func (g *GitServer) Root() string { return g.root }

// CreateRepo creates an empty bare repository, named like "team/app.git", whose default
// branch is main.
func (g *GitServer) CreateRepo(name string) error {
	dir, err := g.repoDir(name)
	if err != nil {
		return err
	}
	if _, err := runGit("", "init", "--quiet", "--bare", "--initial-branch=main", dir); err != nil {
		return fmt.Errorf("create repository %s: %w", name, err)
	}
	if _, err := runGit(dir, "config", "http.receivepack", "true"); err != nil {
		return fmt.Errorf("enable push over HTTP for %s: %w", name, err)
	}
	return nil
}

// repoDir maps a repository name to its folder, refusing names that leave the root.
func (g *GitServer) repoDir(name string) (string, error) {
	clean := filepath.Clean("/" + name)
	if clean == "/" || !strings.HasSuffix(clean, ".git") {
		return "", fmt.Errorf("repository name %q must end in .git", name)
	}
	return filepath.Join(g.root, clean), nil
}

// Refs returns every ref of a repository with the commit it points at.
func (g *GitServer) Refs(name string) (map[string]string, error) {
	dir, err := g.repoDir(name)
	if err != nil {
		return nil, err
	}
	out, err := runGit(dir, "for-each-ref", "--format=%(refname) %(objectname)")
	if err != nil {
		return nil, fmt.Errorf("refs of %s: %w", name, err)
	}
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if ref, sha, ok := strings.Cut(line, " "); ok {
			refs[ref] = sha
		}
	}
	return refs, nil
}

// BranchTip returns the commit a branch points at, or "" when the branch does not exist.
func (g *GitServer) BranchTip(name, branch string) (string, error) {
	refs, err := g.Refs(name)
	if err != nil {
		return "", err
	}
	return refs["refs/heads/"+branch], nil
}

// ReadFile returns a file's content at a ref (a branch name or a commit).
func (g *GitServer) ReadFile(name, ref, path string) ([]byte, error) {
	dir, err := g.repoDir(name)
	if err != nil {
		return nil, err
	}
	out, err := runGit(dir, "show", ref+":"+path)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s in %s: %w", path, ref, name, err)
	}
	return []byte(out), nil
}

// ListFiles returns every file path at a ref, sorted.
func (g *GitServer) ListFiles(name, ref string) ([]string, error) {
	dir, err := g.repoDir(name)
	if err != nil {
		return nil, err
	}
	out, err := runGit(dir, "ls-tree", "-r", "--name-only", ref)
	if err != nil {
		return nil, fmt.Errorf("list files at %s in %s: %w", ref, name, err)
	}
	files := strings.Fields(out)
	sort.Strings(files)
	return files, nil
}

// Commit is one commit of a repository's history.
type Commit struct {
	SHA     string
	Author  string // "Name <email>"
	Subject string
}

// Log returns the first-parent history of a ref, newest first; with paths, only the
// commits that changed one of them.
func (g *GitServer) Log(name, ref string, paths ...string) ([]Commit, error) {
	dir, err := g.repoDir(name)
	if err != nil {
		return nil, err
	}
	args := []string{"log", "--first-parent", "--format=%H%x00%an <%ae>%x00%s", ref}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	out, err := runGit(dir, args...)
	if err != nil {
		return nil, fmt.Errorf("log of %s in %s: %w", ref, name, err)
	}
	var commits []Commit
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		parts := strings.SplitN(line, "\x00", 3)
		if len(parts) == 3 {
			commits = append(commits, Commit{SHA: parts[0], Author: parts[1], Subject: parts[2]})
		}
	}
	return commits, nil
}

// IsAncestor reports whether commit ancestor is reachable from commit descendant.
func (g *GitServer) IsAncestor(name, ancestor, descendant string) (bool, error) {
	dir, err := g.repoDir(name)
	if err != nil {
		return false, err
	}
	cmd := gitCommand(dir, "merge-base", "--is-ancestor", ancestor, descendant)
	err = cmd.Run()
	if err == nil {
		return true, nil
	}
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 {
		return false, nil
	}
	return false, fmt.Errorf("merge-base in %s: %w", name, err)
}

// ForeignChange is a commit made by someone other than the operator.
type ForeignChange struct {
	// Files maps a path to its new content.
	Files map[string]string
	// Delete lists paths to remove.
	Delete []string
	// Message of the commit; defaults to "foreign change".
	Message string
}

// PushForeign commits a change on a branch as another user of the Git host would (with a
// clone of their own, then a plain push) and returns the new tip. The branch is created
// when it does not exist.
func (g *GitServer) PushForeign(name, branch string, change ForeignChange) (string, error) {
	dir, err := g.repoDir(name)
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "foreign-clone-")
	if err != nil {
		return "", fmt.Errorf("foreign clone: %w", err)
	}
	defer os.RemoveAll(work)
	// --no-local: a clone by path copies the objects folder file by file, a push in flight
	// included (its quarantine folder, gone when the push lands: "failed to copy file"); the
	// Git protocol reads what the repository holds.
	if _, err := runGit("", "clone", "--quiet", "--no-local", dir, work); err != nil {
		return "", fmt.Errorf("foreign clone of %s: %w", name, err)
	}
	if _, err := runGit(work, "checkout", "--quiet", "-B", branch, "--no-track", "origin/"+branch); err != nil {
		if _, err := runGit(work, "checkout", "--quiet", "--orphan", branch); err != nil {
			return "", fmt.Errorf("foreign checkout of %s: %w", branch, err)
		}
	}
	for path, content := range change.Files {
		full := filepath.Join(work, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", fmt.Errorf("foreign write %s: %w", path, err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return "", fmt.Errorf("foreign write %s: %w", path, err)
		}
	}
	for _, path := range change.Delete {
		if _, err := runGit(work, "rm", "--quiet", "-r", "--", path); err != nil {
			return "", fmt.Errorf("foreign delete %s: %w", path, err)
		}
	}
	message := change.Message
	if message == "" {
		message = "foreign change"
	}
	if _, err := runGit(work, "add", "-A"); err != nil {
		return "", fmt.Errorf("foreign add: %w", err)
	}
	if _, err := runGit(work, "commit", "--quiet", "--allow-empty", "-m", message); err != nil {
		return "", fmt.Errorf("foreign commit: %w", err)
	}
	if _, err := runGit(work, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch); err != nil {
		return "", fmt.Errorf("foreign push to %s: %w", branch, err)
	}
	sha, err := runGit(work, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("foreign rev-parse: %w", err)
	}
	return strings.TrimSpace(sha), nil
}

// Pushes returns how many push sessions (receive-pack) for a repository reached a front end.
func (g *GitServer) Pushes(name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pushes[strings.TrimPrefix(filepath.Clean("/"+name), "/")]
}

func (g *GitServer) countPush(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pushes[strings.TrimPrefix(filepath.Clean("/"+name), "/")]++
}

// foreignIdentity is who makes "foreign" commits.
var foreignIdentity = []string{
	"GIT_AUTHOR_NAME=Foreign User", "GIT_AUTHOR_EMAIL=foreign@example.com",
	"GIT_COMMITTER_NAME=Foreign User", "GIT_COMMITTER_EMAIL=foreign@example.com",
}

func gitCommand(dir string, args ...string) *exec.Cmd {
	return GitCommand(dir, foreignIdentity, args...)
}

func runGit(dir string, args ...string) (string, error) { return GitOutput(gitCommand(dir, args...)) }
