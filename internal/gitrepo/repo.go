package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	git "github.com/go-git/go-git/v6"
	"github.com/go-git/go-git/v6/config"
	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/client"
	formatcfg "github.com/go-git/go-git/v6/plumbing/format/config"
	"github.com/go-git/go-git/v6/plumbing/transport"

	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
)

const remoteName = "origin"

// Repo is a bare local copy of one remote repository.
type Repo struct {
	url     string // as configured; shown only through redact
	dir     string // the bare local copy
	repo    *git.Repository
	options []client.Option
	// http is the HTTP session of an http(s) remote, nil for ssh (push_stream.go).
	http *httpSession
	// streamAbove is the size of a pack sent from which a push over HTTP streams its
	// request (largePack; tests lower it).
	streamAbove int64
	// noStreaming: no push is streamed, because the remote refused a streamed push for its
	// form, or because the URL has a query (go-git posts with it, its discovery carries none).
	noStreaming bool
	// packsAdded counts the packs written or fetched since MergePacks last looked.
	packsAdded int
	// maxFileBytes bounds every file read (bounds.DefaultMaxFileBytes when 0).
	maxFileBytes int64
	// trees are the trees decoded lately.
	trees treeCache
	// written are the packs written for commits since the last push (push_pack.go).
	written []writtenPack
	// format is the local copy's object format, read once when it is opened.
	format formatcfg.ObjectFormat
}

// LimitFileSize sets the size of the largest file read; a larger one is not read and
// reading it fails with a *bounds.ExceededError naming it. Call it before any read.
func (r *Repo) LimitFileSize(max int64) { r.maxFileBytes = max }

// Open opens (or creates) the bare local copy in dir for the remote at rawURL.
func Open(dir, rawURL string, creds Credentials) (*Repo, error) {
	u, err := parseRemote(rawURL)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open local copy of %s: %w", ownership.Redact(rawURL), err)
	}
	opts, session, err := clientOptions(u, creds, dir)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", ownership.Redact(rawURL), err)
	}
	// go-git posts a push to the repository URL with its query (a token some hosts take
	// there), which a streamed push, posting where the discovery went, would leave out.
	r := &Repo{url: rawURL, dir: dir, options: opts, http: session, streamAbove: largePack, noStreaming: u.RawQuery != ""}
	repo, err := openLocal(dir, &r.trees)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if _, err = git.PlainInit(dir, true); err == nil {
			repo, err = openLocal(dir, &r.trees)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open local copy of %s: %w", ownership.Redact(rawURL), err)
	}
	r.repo = repo
	if err := setRemote(repo, rawURL); err != nil {
		return nil, err
	}
	if err := noDeltaSearch(repo); err != nil {
		return nil, err
	}
	cfg, err := repo.Config()
	if err != nil {
		return nil, fmt.Errorf("read local config: %w", err)
	}
	r.format = cfg.Extensions.ObjectFormat
	return r, nil
}

func parseRemote(rawURL string) (*url.URL, error) {
	if strings.Contains(rawURL, "://") {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, fmt.Errorf("repository URL %s is not valid", ownership.Redact(rawURL))
		}
		return u, nil
	}
	// scp-like user@host:path is SSH.
	return &url.URL{Scheme: "ssh"}, nil
}

func setRemote(repo *git.Repository, rawURL string) error {
	if remote, err := repo.Remote(remoteName); err == nil {
		if urls := remote.Config().URLs; len(urls) == 1 && urls[0] == rawURL {
			return nil
		}
		if err := repo.DeleteRemote(remoteName); err != nil {
			return fmt.Errorf("reset remote: %w", err)
		}
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: remoteName, URLs: []string{rawURL}}); err != nil {
		return fmt.Errorf("configure remote %s: %w", ownership.Redact(rawURL), err)
	}
	return nil
}

// Fetch brings the remote branch into the local copy and returns its tip, or "" when the
// branch (or the whole repository) is still empty.
func (r *Repo) Fetch(ctx context.Context, branch string) (string, error) {
	spec := config.RefSpec(fmt.Sprintf("+refs/heads/%s:%s", branch, trackingRef(branch)))
	err := r.repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName:    remoteName,
		RefSpecs:      []config.RefSpec{spec},
		ClientOptions: r.options,
		Tags:          plumbing.NoTags,
		Force:         true,
	})
	switch {
	case err == nil:
		r.packsAdded++ // what came is one more pack (MergePacks)
		// The branch moved: unpushed writes are replayed onto it as new commits, in new
		// packs (push_pack.go).
		r.written = nil
	case errors.Is(err, git.NoErrAlreadyUpToDate):
	case errors.Is(err, transport.ErrEmptyRemoteRepository), errors.Is(err, git.ErrRemoteRefNotFound):
		_ = r.repo.Storer.RemoveReference(trackingRef(branch))
		return "", nil
	default:
		return "", r.wrap("fetch "+branch, err)
	}
	ref, err := r.repo.Reference(trackingRef(branch), true)
	if err != nil {
		return "", fmt.Errorf("read fetched tip of %s: %w", branch, err)
	}
	return ref.Hash().String(), nil
}

func trackingRef(branch string) plumbing.ReferenceName {
	return plumbing.ReferenceName("refs/remotes/" + remoteName + "/" + branch)
}

func localRef(branch string) plumbing.ReferenceName {
	return plumbing.NewBranchReferenceName(branch)
}

// RemoteMovedError reports that the remote branch is no longer at the tip a push was built
// on: someone else pushed. Nothing was overwritten.
type RemoteMovedError struct {
	Branch   string
	Expected string
}

func (e *RemoteMovedError) Error() string {
	expected := e.Expected
	if expected == "" {
		expected = "(absent)"
	}
	return fmt.Sprintf("push %s: the remote branch moved since %s; fetch and replay", e.Branch, expected)
}

// Push moves the remote branch from expected (the tip the commits were built on; "" when the
// branch does not exist yet) to next. It is a compare-and-swap: when the remote is no longer
// at expected it returns *RemoteMovedError and changes nothing. It never forces.
func (r *Repo) Push(ctx context.Context, branch, expected, next string) error {
	nextHash := plumbing.NewHash(next)
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference(localRef(branch), nextHash)); err != nil {
		return fmt.Errorf("push %s: set local ref: %w", branch, err)
	}
	err := r.sendPack(ctx, branch, expected, nextHash)
	if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	if moved := r.movedSince(ctx, branch, expected, err); moved != nil {
		r.written = nil // the commits are replayed on the remote's tip: new packs
		return moved
	}
	return r.wrap("push "+branch, err)
}

// movedSince decides whether a failed push failed because the remote moved, by asking the
// remote where the branch is now.
func (r *Repo) movedSince(ctx context.Context, branch, expected string, pushErr error) error {
	if isRejection(pushErr) {
		return &RemoteMovedError{Branch: branch, Expected: expected}
	}
	tip, err := r.RemoteTip(ctx, branch)
	if err != nil || tip == expected {
		return nil
	}
	return &RemoteMovedError{Branch: branch, Expected: expected}
}

func isRejection(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "required to be") || strings.Contains(msg, "is absent") ||
		strings.Contains(msg, "non-fast-forward") || errors.Is(err, git.ErrForceNeeded) ||
		strings.Contains(msg, "failed to lock") || strings.Contains(msg, "fetch first")
}

// RemoteTip asks the remote where a branch is, without fetching objects ("" when absent).
func (r *Repo) RemoteTip(ctx context.Context, branch string) (string, error) {
	remote, err := r.repo.Remote(remoteName)
	if err != nil {
		return "", fmt.Errorf("remote: %w", err)
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{ClientOptions: r.options})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return "", nil
	}
	if err != nil {
		return "", r.wrap("list refs", err)
	}
	for _, ref := range refs {
		if ref.Name() == localRef(branch) {
			return ref.Hash().String(), nil
		}
	}
	return "", nil
}

// wrap gives an error the operation and the (redacted) remote, and makes sure no
// credential the URL may hold is in its text.
func (r *Repo) wrap(op string, err error) error {
	return &RemoteError{Op: op, Remote: ownership.Redact(r.url), Err: err}
}

// RemoteError is a failure talking to the remote.
type RemoteError struct {
	Op, Remote string
	Err        error
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("%s at %s: %s", e.Op, e.Remote, redactText(e.Err.Error()))
}

func (e *RemoteError) Unwrap() error { return e.Err }

// Permanent reports failures that retrying will not fix until someone changes the
// configuration: refused credentials, an unknown host key, a missing repository.
func (e *RemoteError) Permanent() bool {
	return errors.Is(e.Err, transport.ErrAuthenticationRequired) ||
		errors.Is(e.Err, transport.ErrAuthorizationFailed) ||
		errors.Is(e.Err, transport.ErrRepositoryNotFound) ||
		errors.Is(e.Err, ErrUnknownHostKey) ||
		strings.Contains(e.Err.Error(), "unable to authenticate")
}

// redactText removes any user:password@ that a library put into an error message.
func redactText(s string) string {
	for _, scheme := range []string{"https://", "http://", "ssh://"} {
		for start := 0; ; {
			i := strings.Index(s[start:], scheme)
			if i < 0 {
				break
			}
			i += start + len(scheme)
			end := strings.IndexAny(s[i:], " /\"'")
			if end < 0 {
				end = len(s) - i
			}
			if at := strings.LastIndex(s[i:i+end], "@"); at >= 0 {
				s = s[:i] + "***@" + s[i+at+1:]
			}
			start = i
		}
	}
	return s
}

// noDeltaSearch turns off the delta search of pushes (pack.window 0). The operator pushes
// small documents that rarely resemble each other; measured (BENCH.md), the search took a
// third of a 10,000-object first push and found nothing worth it.
func noDeltaSearch(repo *git.Repository) error {
	cfg, err := repo.Config()
	if err != nil {
		return fmt.Errorf("read local config: %w", err)
	}
	if cfg.Pack.Window == 0 {
		return nil
	}
	cfg.Pack.Window = 0
	if err := repo.SetConfig(cfg); err != nil {
		return fmt.Errorf("write local config: %w", err)
	}
	return nil
}
