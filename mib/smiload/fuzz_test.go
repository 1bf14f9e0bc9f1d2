package smiload

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad parses arbitrary module text and loads it with the modules it
// defines: it must report faults, never panic or hang.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(testMIB))
	f.Add([]byte("A DEFINITIONS ::= BEGIN\na OBJECT IDENTIFIER ::= { b 1 }\nb OBJECT IDENTIFIER ::= { a 1 }\nEND\n"))
	f.Add([]byte("A DEFINITIONS ::= BEGIN\nT ::= TEXTUAL-CONVENTION SYNTAX T\nx OBJECT-TYPE SYNTAX T ::= { iso 1 }\nEND"))
	f.Add([]byte("A { iso 3 } DEFINITIONS IMPLICIT TAGS ::= BEGIN IMPORTS ; t TRAP-TYPE ENTERPRISE t ::= -1 END"))
	for _, name := range []string{"SNMPv2-SMI.txt", "SNMPv2-TC.txt", "IF-MIB.txt", "RFC1213-MIB.txt"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "shared", "mibs", name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		ix := &Index{mods: map[string]*module{}}
		ix.addFile("fuzz", src)
		for n := range ix.mods {
			ix.names = append(ix.names, n)
		}
		ix.Load("ALL")
	})
}

// FuzzDecodeCache feeds damaged cache files to the decoder: it must
// refuse them, never panic.
func FuzzDecodeCache(f *testing.F) {
	mods, _ := parseModules("seed", testMIB)
	ix := &Index{mods: map[string]*module{}}
	for _, m := range mods {
		ix.mods[m.name] = m
		ix.names = append(ix.names, m.name)
	}
	set, diags := ix.Load("ALL")
	good := encodeSet(set, diags)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(codecMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeSet(b)
	})
}
