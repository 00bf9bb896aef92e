package layout

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans and YAML 1.2 reads as strings.
var yaml11Bools = [...]string{
	"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
	"on", "On", "ON", "off", "Off", "OFF",
}

// NeedsDoubleQuotes reports whether the string s must be written double-quoted for every
// reader to read it back: YAML 1.1 reads it as another type (YAML11Special), or it starts
// with a line break, which yaml.v3 would write as a literal block whose leading empty lines
// every reader drops.
func NeedsDoubleQuotes(s string) bool {
	return YAML11Special(s) || startsWithLineBreak(s)
}

func startsWithLineBreak(s string) bool { return len(s) > 0 && (s[0] == '\n' || s[0] == '\r') }

// YAML11Special reports whether a YAML 1.1 parser (kubectl's, Flux's, kustomize's) would
// read the plain scalar s as something other than a string: such a string is written
// double-quoted (docs/sanitize.md#the-byte-format).
func YAML11Special(s string) bool {
	if s == "<<" {
		return true // the merge key, of YAML 1.1 and of yaml.v3: as a key, plain, it merges
	}
	for _, b := range yaml11Bools {
		if s == b {
			return true
		}
	}
	return isSexagesimal(s)
}

// isSexagesimal matches YAML 1.1 base-60 numbers such as 1:20 or -190:20:30.15:
// [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?
func isSexagesimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i >= len(s) || !isDigit(s[i]) {
		return false
	}
	for i < len(s) && (isDigit(s[i]) || s[i] == '_') {
		i++
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		i++
		switch {
		case i+1 < len(s) && s[i] >= '0' && s[i] <= '5' && isDigit(s[i+1]):
			i += 2
		case i < len(s) && isDigit(s[i]):
			i++
		default:
			return false
		}
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && (isDigit(s[i]) || s[i] == '_') {
			i++
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
