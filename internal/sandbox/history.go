package sandbox

import (
	"fmt"
	"io"
	"strings"
)

// CommitSummary is one commit with its author and the files it created, updated and
// deleted.
type CommitSummary struct {
	Short, Author, Subject    string
	Created, Updated, Deleted []string
}

// Kinds names what the commit did, e.g. "create+update".
func (c CommitSummary) Kinds() string {
	var kinds []string
	if len(c.Created) > 0 {
		kinds = append(kinds, "create")
	}
	if len(c.Updated) > 0 {
		kinds = append(kinds, "update")
	}
	if len(c.Deleted) > 0 {
		kinds = append(kinds, "delete")
	}
	if len(kinds) == 0 {
		return "empty"
	}
	return strings.Join(kinds, "+")
}

// summaryFormat starts each commit of `git log --name-status` with a NUL-marked header
// line: the short hash, the author's name and the subject, separated by tabs.
const summaryFormat = "--format=%x00%h%x09%an%x09%s"

// ParseCommitSummaries reads the output of `git log --name-status` with summaryFormat.
func ParseCommitSummaries(out string) []CommitSummary {
	var commits []CommitSummary
	for _, line := range strings.Split(out, "\n") {
		if header, ok := strings.CutPrefix(line, "\x00"); ok {
			short, rest, _ := strings.Cut(header, "\t")
			author, subject, _ := strings.Cut(rest, "\t")
			commits = append(commits, CommitSummary{Short: short, Author: author, Subject: subject})
			continue
		}
		if len(commits) == 0 || strings.TrimSpace(line) == "" {
			continue
		}
		c := &commits[len(commits)-1]
		fields := strings.Split(line, "\t")
		if len(fields) < 2 {
			continue
		}
		switch status, file := fields[0], fields[len(fields)-1]; {
		case status == "A":
			c.Created = append(c.Created, file)
		case status == "D":
			c.Deleted = append(c.Deleted, file)
		case strings.HasPrefix(status, "R"): // a rename deletes the old path, creates the new
			c.Deleted = append(c.Deleted, fields[1])
			c.Created = append(c.Created, file)
		default: // M, T, C
			c.Updated = append(c.Updated, file)
		}
	}
	return commits
}

// CommitSummaries returns the branch's commits, oldest first.
func (s *Sandbox) CommitSummaries() ([]CommitSummary, error) {
	out, err := s.RunGit("log", "--reverse", "--no-renames", "--name-status", summaryFormat, Branch)
	if err != nil {
		return nil, err
	}
	return ParseCommitSummaries(out), nil
}

// PrintHistory prints the branch's commits in brief, `git log --stat --summary` and the
// tree, each under the git command that shows it.
func (s *Sandbox) PrintHistory(w io.Writer) error {
	commits, err := s.CommitSummaries()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n# The commits on %s, oldest first\n", Branch)
	for _, c := range commits {
		fmt.Fprintf(w, "  %s  %-13s %-16s %s\n", c.Short, c.Kinds(), c.Author, c.Subject)
		for _, f := range c.Created {
			fmt.Fprintf(w, "             + %s\n", f)
		}
		for _, f := range c.Updated {
			fmt.Fprintf(w, "             ~ %s\n", f)
		}
		for _, f := range c.Deleted {
			fmt.Fprintf(w, "             - %s\n", f)
		}
	}
	for _, args := range [][]string{
		{"log", "--stat", "--summary", Branch},
		{"ls-tree", "-r", "--name-only", Branch},
	} {
		out, err := s.RunGit(args...)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n$ git -C %s %s\n%s", s.RepoDir, strings.Join(args, " "), out)
	}
	return nil
}
