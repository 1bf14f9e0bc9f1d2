package hostres

import "testing"

// TestPartitionID writes a partition's device number as Net-SNMP writes
// the st_rdev of its device file, and gives "" for a malformed "dev"
// attribute (the row then serves the partition's number).
func TestPartitionID(t *testing.T) {
	for in, want := range map[string]string{
		"8:1\n":     "0x801",
		"259:1\n":   "0x10301",
		"259:300\n": "0x11032c", // minor bits past 8 go above the major's
		"7:0":       "0x700",
		"":          "",
		"8\n":       "",
		"8:x\n":     "",
		":1\n":      "",
		"8:1:2\n":   "",
		"-8:1\n":    "",
	} {
		if got := partitionID([]byte(in)); got != want {
			t.Errorf("partitionID(%q) = %q, want %q", in, got, want)
		}
	}
}
