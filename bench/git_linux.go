//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
)

// floorEnv is the identity of the floor's commits; large packs are sent with a
// Content-Length, since the Git server's CGI front end refuses chunked request bodies.
var floorEnv = []string{
	"GIT_AUTHOR_NAME=Bench Floor", "GIT_AUTHOR_EMAIL=floor@example.com",
	"GIT_COMMITTER_NAME=Bench Floor", "GIT_COMMITTER_EMAIL=floor@example.com",
	"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.postBuffer", "GIT_CONFIG_VALUE_0=2147483647",
}

func gitCmd(dir string, args ...string) *exec.Cmd { return servers.GitCommand(dir, floorEnv, args...) }

func git(dir string, args ...string) (string, error) { return servers.GitOutput(gitCmd(dir, args...)) }

// gitStdin runs git with stdin.
func gitStdin(dir string, stdin io.Reader, args ...string) (string, error) {
	cmd := gitCmd(dir, args...)
	cmd.Stdin = stdin
	return servers.GitOutput(cmd)
}

// countFiles counts the files under prefix at a commit.
func countFiles(repo, rev, prefix string) (int, error) {
	out, err := git(repo, "ls-tree", "-r", "--name-only", rev, "--", prefix)
	if err != nil {
		return 0, err
	}
	return strings.Count(out, "\n"), nil
}

// catFiles reads "<rev>:<path>" blobs in one git cat-file --batch; a missing one maps to nil.
func catFiles(repo string, specs []string) (map[string][]byte, error) {
	var in bytes.Buffer
	for _, s := range specs {
		in.WriteString(s)
		in.WriteByte('\n')
	}
	cmd := gitCmd(repo, "cat-file", "--batch")
	cmd.Stdin = &in
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(out, 1<<16)
	res := make(map[string][]byte, len(specs))
	var perr error
	for _, s := range specs {
		header, err := r.ReadString('\n')
		if err != nil {
			perr = fmt.Errorf("cat-file: %w", err)
			break
		}
		fields := strings.Fields(header)
		if len(fields) == 2 && fields[1] == "missing" {
			res[s] = nil
			continue
		}
		if len(fields) != 3 {
			perr = fmt.Errorf("cat-file: unexpected header %q", header)
			break
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil {
			perr = fmt.Errorf("cat-file: size in %q", header)
			break
		}
		body := make([]byte, size+1) // the content and a newline
		if _, err := io.ReadFull(r, body); err != nil {
			perr = fmt.Errorf("cat-file: %w", err)
			break
		}
		res[s] = body[:size]
	}
	_, _ = io.Copy(io.Discard, r)
	if err := cmd.Wait(); err != nil && perr == nil {
		perr = fmt.Errorf("cat-file: %w: %s", err, stderr.String())
	}
	return res, perr
}

// seqOf finds `seq: "<n>"` (or seq: n) in a document's data; -1 when absent.
func seqOf(doc []byte) int {
	for _, line := range strings.Split(string(doc), "\n") {
		t := strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(t, "seq:"); ok {
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}
