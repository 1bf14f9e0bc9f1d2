package ssh

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDocumentedDefaults: the default algorithm lists of docs/ssh.md are
// the ones the package offers, in the same order.
func TestDocumentedDefaults(t *testing.T) {
	doc, err := os.ReadFile("../docs/ssh.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) != 4 {
			continue
		}
		var names []string
		for _, f := range strings.Fields(cells[2]) {
			names = append(names, strings.Trim(f, "`"))
		}
		rows[strings.TrimSpace(cells[1])] = names
	}
	for _, tc := range []struct {
		row  string
		code []string
	}{
		{"key exchange", defaultKexAlgos},
		{"host key", defaultHostKeyAlgos},
		{"ciphers", defaultCiphers},
		{"MACs", defaultMACs},
	} {
		if !slices.Equal(rows[tc.row], tc.code) {
			t.Errorf("docs/ssh.md %s: %v; the code offers %v", tc.row, rows[tc.row], tc.code)
		}
	}
	if defaultKexAlgos[0] != KexMLKEM768X25519 {
		t.Errorf("first key exchange %s, want %s", defaultKexAlgos[0], KexMLKEM768X25519)
	}
}
