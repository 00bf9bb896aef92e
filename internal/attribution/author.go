package attribution

import (
	"sort"
	"strings"
)

// The author of a change no fact was found for in time (docs/attribution.md#authors): never
// the committer, never a guess.
const (
	UnresolvedName  = "unknown (attribution unresolved)"
	UnresolvedEmail = "attribution-unresolved@gitops-reverser.invalid"
)

// DerivedEmailDomain is the domain of the address derived for a user without an email
// claim. .invalid never resolves (RFC 2606), so the address can never reach anyone.
const DerivedEmailDomain = "users.kubernetes.invalid"

// Author is who made a change, as Kubernetes recorded it.
type Author struct {
	// Name is the user name Kubernetes recorded: for a service account
	// "system:serviceaccount:<namespace>:<name>"; for an impersonated request the
	// impersonated user.
	Name string
	// Email comes from an OIDC email claim in the user's extra (a key "email" or ending
	// in "/email"), else is derived from Name (DerivedEmail).
	Email string
	// Groups are the user's groups as recorded (for an impersonated request, the
	// impersonated groups).
	Groups []string
	// Impersonator is the authenticated user who impersonated Name, or "".
	Impersonator string
	// AuditID is the audit event's ID, to look the change up in the audit log.
	AuditID string
}

// Unresolved is the author of a change without a fact in time.
func Unresolved() Author { return Author{Name: UnresolvedName, Email: UnresolvedEmail} }

// IsUnresolved reports whether a is the unresolved author.
func (a Author) IsUnresolved() bool { return a.Name == UnresolvedName && a.AuditID == "" }

// userInfo is the part of an audit user the author is built from.
type userInfo struct {
	Username string
	Groups   []string
	Extra    map[string][]string
}

// authorOf names the author of an audit event: the impersonated user when there is one
// (that is the identity Kubernetes authorized the request as), with the authenticated
// user as Impersonator.
func authorOf(user userInfo, impersonated *userInfo, auditID string) Author {
	eff := user
	impersonator := ""
	if impersonated != nil && impersonated.Username != "" {
		eff = *impersonated
		impersonator = gitSafe(user.Username)
	}
	name := gitSafe(eff.Username)
	email := emailClaim(eff.Extra)
	if email == "" {
		email = DerivedEmail(eff.Username)
	}
	var groups []string
	if len(eff.Groups) > 0 {
		groups = append([]string(nil), eff.Groups...)
	}
	return Author{Name: name, Email: email, Groups: groups, Impersonator: impersonator, AuditID: auditID}
}

// emailClaim returns the email claim of a user's extra: the key "email", else the first
// key (in sorted order) ending in "/email" (structured authentication configuration
// requires domain-prefixed extra keys, e.g. "example.com/email"). Keys compare without
// case. A value that is not a plausible address is skipped.
func emailClaim(extra map[string][]string) string {
	if len(extra) == 0 {
		return ""
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ei, ej := strings.EqualFold(keys[i], "email"), strings.EqualFold(keys[j], "email")
		if ei != ej {
			return ei
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		lk := strings.ToLower(k)
		if lk != "email" && !strings.HasSuffix(lk, "/email") {
			continue
		}
		for _, v := range extra[k] {
			if plausibleEmail(v) {
				return v
			}
		}
	}
	return ""
}

func plausibleEmail(v string) bool {
	at := strings.IndexByte(v, '@')
	if at <= 0 || at == len(v)-1 || len(v) > 254 {
		return false
	}
	return !strings.ContainsAny(v, "<>\r\n\t ,")
}

// DerivedEmail is the stable address of a user without an email claim:
// "<sanitized user name>@users.kubernetes.invalid", where the name is lower-cased and
// every run of characters outside [a-z0-9._+-] becomes one "-" (so
// "system:serviceaccount:team-a:deployer" becomes
// "system-serviceaccount-team-a-deployer@users.kubernetes.invalid"). The local part is
// at most 64 characters.
func DerivedEmail(username string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(username) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '+' || r == '-'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	local := strings.Trim(b.String(), "-.")
	if len(local) > 64 {
		local = strings.Trim(local[:64], "-.")
	}
	if local == "" {
		local = "unknown"
	}
	return local + "@" + DerivedEmailDomain
}

// gitSafe makes a name usable as a Git author name: no angle brackets, no control
// characters (Git would refuse or mangle them).
func gitSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '<' || r == '>':
			return -1
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}

// Trailers are the commit trailers that link a change to its audit event, in this order:
//
//	Audit-ID: <audit ID>
//	Kubernetes-User: <user name>
//	Kubernetes-Impersonator: <impersonating user>   (only for an impersonated request)
//
// The unresolved author has no trailers (its author line already says so).
func Trailers(a Author) []string {
	if a.AuditID == "" {
		return nil
	}
	out := []string{"Audit-ID: " + oneLine(a.AuditID), "Kubernetes-User: " + oneLine(a.Name)}
	if a.Impersonator != "" {
		out = append(out, "Kubernetes-Impersonator: "+oneLine(a.Impersonator))
	}
	return out
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
