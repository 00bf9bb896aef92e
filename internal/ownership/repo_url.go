package ownership

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// ErrInvalidURL is wrapped by every error of NormalizeURL and KeyFor about the repository URL,
// so callers can tell a bad spec.url (errors.Is) from other failures.
var ErrInvalidURL = errors.New("invalid repository URL")

// defaultPorts are dropped from keys: "host:443" and "host" name one https server.
var defaultPorts = map[string]int{"https": 443, "http": 80, "ssh": 22}

// NormalizeURL returns the key form of a repository URL, so that two spellings of one
// repository compare equal.
//
// The key is scheme://host[:port]/path with the scheme and host lower-cased, the default port
// (https 443, http 80, ssh 22) dropped, no user information (a user name or password is never
// part of a key, also not the ssh user: git@ and deploy@ name the same repository), the path
// cleaned (duplicate slashes collapsed, "." and ".." segments resolved) and trailing "/" and
// ".git" suffixes dropped in any order. An '@' in the path stays percent-encoded, so a key
// never holds one. Path case is kept (Git paths are case sensitive on most hosts and on
// disk). The scp-like form [user@]host:path becomes ssh://host/path; ssh treats that
// path as relative to the login's home directory while ssh://host/path is absolute, but the
// key does not tell them apart (Git hosts serve both spellings as one repository). A file URL
// keeps its absolute path: file:///srv/x.git becomes file:///srv/x, and file://localhost/...
// is the same as file:///.... An https URL and an ssh URL of one repository stay different
// keys by design.
//
// It fails, wrapping ErrInvalidURL, on an empty string, a bare local path, a scheme other than
// https, http, ssh and file, a missing host or path, a query or fragment, and an unencoded '@'
// in the path (which usually means a password with an unencoded '/' in it). Error messages
// show the URL only through Redact, so they never carry a password.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", invalidURL(raw, "the URL is empty")
	}
	var u *url.URL
	if i := strings.Index(s, "://"); i >= 0 {
		if !validScheme(s[:i]) {
			return "", invalidURL(raw, "the URL cannot be parsed")
		}
		scheme := strings.ToLower(s[:i])
		if _, ok := defaultPorts[scheme]; !ok && scheme != "file" {
			return "", invalidURL(raw, fmt.Sprintf("unsupported scheme %q (use https, http, ssh or file)", scheme))
		}
		parsed, err := url.Parse(s)
		if err != nil {
			// The parser's own message quotes the input, password included: never pass it on.
			return "", invalidURL(raw, "the URL cannot be parsed")
		}
		if parsed.Opaque != "" {
			return "", invalidURL(raw, "the URL cannot be parsed")
		}
		if scheme != "file" && strings.Contains(parsed.EscapedPath(), "@") {
			return "", invalidURL(raw, `unencoded "@" in the path (a password in a URL must be percent-encoded, "/" as %2F and "@" as %40; better, use spec.secretRef)`)
		}
		parsed.Scheme = scheme
		u = parsed
	} else {
		scp, problem := parseSCPLike(s)
		if problem != "" {
			return "", invalidURL(raw, problem)
		}
		u = scp
	}
	return normalizeParsed(raw, u)
}

// normalizeParsed builds the key from a parsed URL whose scheme is already known to be supported.
func normalizeParsed(raw string, u *url.URL) (string, error) {
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", invalidURL(raw, "a repository URL has no query or fragment")
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if u.Scheme == "file" {
		if port != "" || (host != "" && host != "localhost") {
			return "", invalidURL(raw, "a file URL names a local path: use file:///absolute/path")
		}
		host = ""
	} else {
		if host == "" {
			return "", invalidURL(raw, "the host is missing")
		}
		if strings.Contains(host, ":") { // IPv6 literal
			host = "[" + host + "]"
		}
		if port != "" {
			n, err := strconv.Atoi(port)
			if err != nil || n < 1 || n > 65535 {
				return "", invalidURL(raw, "the port is not a number from 1 to 65535")
			}
			if n != defaultPorts[u.Scheme] {
				host = net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(n))
			}
		}
	}
	p := repoPath(u.Path)
	if p == "" {
		return "", invalidURL(raw, "the repository path is missing")
	}
	// A literal '@' in a key would read as user information: keep it encoded, so that the key
	// is free of '@' and normalizes to itself.
	escaped := strings.ReplaceAll((&url.URL{Path: p}).EscapedPath(), "@", "%40")
	return u.Scheme + "://" + host + escaped, nil
}

// repoPath cleans an absolute URL path and drops trailing "/" and ".git" suffixes; it returns
// "" when nothing names a repository.
func repoPath(p string) string {
	if p == "" {
		return ""
	}
	p = path.Clean("/" + p)
	for strings.HasSuffix(p, ".git") {
		p = path.Clean(strings.TrimSuffix(p, ".git"))
	}
	if p == "/" {
		return ""
	}
	return p
}

// parseSCPLike reads Git's scp-like syntax [user@]host:path (host may be an [IPv6] literal),
// following Git's rule: without "://", a ':' before any '/' makes it scp-like, otherwise it is
// a local path. It returns a problem text instead of an error so the caller can redact.
func parseSCPLike(s string) (*url.URL, string) {
	colon := strings.Index(s, ":")
	slash := strings.Index(s, "/")
	if colon < 0 || (slash >= 0 && slash < colon) {
		return nil, "a local path is not a repository URL (use file:///absolute/path)"
	}
	// Git's host_end: an [IPv6] host, possibly after user@, may itself contain ':'.
	hostStart := 0
	if i := strings.Index(s, "@["); i >= 0 {
		hostStart = i + 1
	}
	if strings.HasPrefix(s[hostStart:], "[") {
		end := strings.Index(s[hostStart:], "]")
		if end < 0 {
			return nil, "the URL cannot be parsed"
		}
		next := strings.Index(s[hostStart+end:], ":")
		if next < 0 {
			return nil, "the URL cannot be parsed"
		}
		colon = hostStart + end + next
	}
	userHost, repo := s[:colon], s[colon+1:]
	host := userHost
	if at := strings.LastIndex(userHost, "@"); at >= 0 {
		host = userHost[at+1:]
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return nil, "the host is missing"
	}
	if strings.Contains(repo, "@") {
		return nil, `unencoded "@" in the path (an scp-like URL carries no password; use spec.secretRef)`
	}
	bracketed := host
	if strings.Contains(host, ":") {
		bracketed = "[" + host + "]"
	}
	// Let net/url validate the host the same way it does for ssh:// URLs.
	check, err := url.Parse("ssh://" + bracketed + "/")
	if err != nil || check.Hostname() != host || check.Port() != "" {
		return nil, "the host is not valid"
	}
	return &url.URL{Scheme: "ssh", Host: bracketed, Path: "/" + repo}, ""
}

// validScheme reports whether s is a syntactically valid URL scheme (RFC 3986, section 3.1).
// It keeps text that is not a scheme (for example user:password@host) out of error messages.
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// invalidURL is the error of NormalizeURL: it names the problem and shows only the redacted URL.
func invalidURL(raw, problem string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidURL, Redact(raw), problem)
}

// Redact returns raw fit for a log line, an event, a status message or an error: any password
// becomes "***" and a query becomes "?***". For ssh (ssh:// and scp-like) the user name is kept
// (ssh://git:***@host/..., git@host:...). For every other scheme the whole user information
// becomes "***" (https://***@host/...), because HTTP Git hosts accept a token in the user name
// too (https://TOKEN@host/...). Redact never fails; when the text is ambiguous it hides more
// rather than less: everything up to the last '@' counts as user information, since a password
// may hold an unencoded '/' (https://host/a@b becomes https://***@b; NormalizeURL refuses such
// a URL anyway).
func Redact(raw string) string {
	head, rest, isURL, scheme := "", raw, false, ""
	if i := strings.Index(raw, "://"); i >= 0 && validScheme(raw[:i]) {
		head, rest, isURL, scheme = raw[:i+3], raw[i+3:], true, strings.ToLower(raw[:i])
	}
	stops := "/"
	if isURL {
		stops = "/?#"
	}
	end := strings.IndexAny(rest, stops)
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 && end > 0 {
		// No '@' before the path: a later one may end a password or token that holds '/',
		// '?' or '#'. With nothing before the path (file:///...) there is no user information.
		at = strings.LastIndex(rest, "@")
	}
	if at > 0 {
		userinfo := rest[:at]
		user, _, hasPassword := strings.Cut(userinfo, ":")
		switch {
		case isURL && scheme != "ssh":
			head += "***"
			rest = rest[at:]
		case hasPassword:
			head += user + ":***"
			rest = rest[at:]
		}
	}
	if isURL {
		rest = redactQuery(rest)
	}
	return head + rest
}

// redactQuery replaces a non-empty query with "***", keeping any fragment.
func redactQuery(s string) string {
	q := strings.Index(s, "?")
	if q < 0 {
		return s
	}
	query, fragment := s[q+1:], ""
	if h := strings.Index(query, "#"); h >= 0 {
		query, fragment = query[:h], query[h:]
	}
	if query == "" {
		return s
	}
	return s[:q] + "?***" + fragment
}
