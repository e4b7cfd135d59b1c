package scenario

import (
	"fmt"
	"strings"
)

// expand replaces ${NAME} in s with the value of the environment variable
// NAME, looked up with getenv; "$${" stands for a literal "${". Any other
// "$" is kept. Errors name the variable, never a value.
func expand(s string, getenv func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' { // $${ → ${
			b.WriteString(s[:i])
			b.WriteString("{")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ (write ${NAME}, or $${ for a literal ${)")
		}
		name := s[i+2 : i+end]
		if !envName(name) {
			return "", fmt.Errorf("${…} holds no variable name (letters, digits and _, not starting with a digit)")
		}
		v, ok := getenv(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		b.WriteString(v)
		s = s[i+end+1:]
	}
}

// envName reports whether s is a variable name.
func envName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
