package ssh

import (
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestCheckPassword(t *testing.T) {
	argon, err := HashPassword("correct horse", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(argon, "$argon2id$v=19$") {
		t.Fatalf("hash %q", argon)
	}
	bc, err := bcrypt.GenerateFromPassword([]byte("correct horse"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{argon, string(bc)} {
		if !CheckPassword(h, "correct horse") {
			t.Fatalf("%q: right password refused", h)
		}
		if CheckPassword(h, "correct horsE") {
			t.Fatalf("%q: wrong password accepted", h)
		}
	}
	for _, bad := range []string{"", "correct horse", "$argon2id$v=19$m=1,t=1,p=1$$", "$argon2id$v=19$m=99999999,t=1,p=1$c2FsdA$aGFzaA", "$1$md5$x"} {
		if CheckPassword(bad, "correct horse") {
			t.Fatalf("malformed hash %q accepted", bad)
		}
	}
	// Hashes are salted.
	again, _ := HashPassword("correct horse", rand.Reader)
	if again == argon {
		t.Fatal("two hashes of one password are equal")
	}
}
