package secrets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"filippo.io/age"
)

// ErrNoRecipients is returned when no age recipient is given.
// IdentitySuffix ends the Secret keys that hold private age identities (as Flux's
// decryption expects); RecipientsFromSecretData skips them.
const IdentitySuffix = ".agekey"

var ErrNoRecipients = errors.New("secrets: no age recipients")

// ParseRecipients validates age X25519 recipients ("age1…"), trims surrounding white space and
// drops duplicates (keeping the first). Errors name the bad entry by its index and never echo
// it: a private key pasted by mistake must not end up in a status condition or a log.
func ParseRecipients(recipients []string) ([]string, error) {
	out := make([]string, 0, len(recipients))
	for i, r := range recipients {
		r, err := parseRecipient(r)
		if err != nil {
			return nil, fmt.Errorf("secrets: recipient %d: %w", i, err)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, ErrNoRecipients
	}
	return out, nil
}

// RecipientsFromSecretData reads recipients from the data of a Secret holding public keys.
// Every value may hold one or more recipients, one per line; blank lines and lines starting
// with '#' are ignored. Keys are read in sorted order; duplicates are dropped. Errors name the
// data key and line, never the line's content.
func RecipientsFromSecretData(data map[string][]byte) ([]string, error) {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if strings.HasSuffix(k, IdentitySuffix) {
			continue // a private identity kept beside its recipient (a generated pair)
		}
		sc := bufio.NewScanner(bytes.NewReader(data[k]))
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		line := 0
		for sc.Scan() {
			line++
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			r, err := parseRecipient(text)
			if err != nil {
				return nil, fmt.Errorf("secrets: key %q line %d: %w", k, line, err)
			}
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		if sc.Err() != nil {
			return nil, fmt.Errorf("secrets: key %q: cannot read line %d", k, line+1)
		}
	}
	if len(out) == 0 {
		return nil, ErrNoRecipients
	}
	return out, nil
}

// parseRecipient returns the trimmed recipient or an error that does not contain it.
func parseRecipient(s string) (string, error) {
	s = strings.TrimSpace(s)
	upper := strings.ToUpper(s)
	switch {
	case s == "":
		return "", errors.New("empty")
	case strings.HasPrefix(upper, "AGE-SECRET-KEY-") || strings.HasPrefix(upper, "AGE-PLUGIN-"):
		return "", errors.New("is an age identity (a private key), not a recipient: give its public key (age-keygen -y), and keep the private key out of the cluster's configuration")
	case strings.HasPrefix(s, "age1pq1"):
		return "", errors.New("post-quantum (age1pq1…) recipients are not supported: use an X25519 recipient (age1…)")
	case !strings.HasPrefix(s, "age1"):
		return "", errors.New("not an age recipient (age1…)")
	case strings.Count(s, "1") > 1:
		// The bech32 data part has no '1', so a second one is an age1<plugin>1… recipient,
		// which needs an external plugin program.
		return "", errors.New("age plugin recipients are not supported: use an X25519 recipient (age1…)")
	}
	if _, err := age.ParseX25519Recipient(s); err != nil {
		// age's error quotes the input; it is not wrapped.
		return "", errors.New("malformed age recipient")
	}
	return s, nil
}

// GenerateIdentity creates a new age X25519 key pair. The integration stores it in a Secret it
// creates only when asked to; the operator itself keeps only the recipient.
func GenerateIdentity() (identity, recipient string, err error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", "", fmt.Errorf("secrets: generating an age identity: %w", err)
	}
	return id.String(), id.Recipient().String(), nil
}
