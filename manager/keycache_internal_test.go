package manager

import (
	"bytes"
	"testing"
)

func FuzzKeyFile(f *testing.F) {
	f.Add([]byte(keyFileMagic))
	f.Add(append([]byte(keyFileMagic), make([]byte, 60)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		salt, check, a, p, err := decodeKeyFile(b)
		if err != nil {
			return
		}
		// What decodes encodes back to the same octets.
		out := append([]byte(keyFileMagic), salt...)
		out = append(append(out, check...), byte(len(a)))
		out = append(append(append(out, a...), byte(len(p))), p...)
		if !bytes.Equal(out, b) {
			t.Fatalf("decoded %x, encodes to %x", b, out)
		}
	})
}
