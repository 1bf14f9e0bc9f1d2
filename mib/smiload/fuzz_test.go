package smiload

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tsnmp/tsnmp/mib/smi"
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
		ix.addFile("fuzz", string(src))
		for n := range ix.mods {
			ix.names = append(ix.names, n)
		}
		ix.Load("ALL")
	})
}

// FuzzDecodeCache feeds damaged cache files to the reader: every read
// must report the damage or succeed, never panic or hang.
func FuzzDecodeCache(f *testing.F) {
	mods, _ := parseModules("seed", testMIB)
	ix := &Index{mods: map[string]*module{}}
	for _, m := range mods {
		ix.mods[m.name] = m
		ix.names = append(ix.names, m.name)
	}
	set, diags := ix.Load("ALL")
	good := encodeCache(&cacheContent{set: set, diags: diags, files: []fileStat{{path: "seed", size: 1, mtime: 2}},
		moduleFor: map[string]int{"TEST-MIB": 0}})
	f.Add(good)
	f.Add(good[:len(good)/2])
	set.Anon = []smi.AnonArc{{OID: []uint32{1, 3, 6, 1, 4, 1, 99999}, Module: "TEST-MIB"}, {OID: []uint32{1, 3, 6, 1, 4, 1, 99998, 7}}}
	f.Add(encodeCache(&cacheContent{set: set, diags: diags, files: []fileStat{{path: "seed", size: 1, mtime: 2}},
		moduleFor: map[string]int{"TEST-MIB": 0}}))
	f.Add([]byte(codecMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		src, err := newSource(Request{}, string(b))
		if err != nil {
			return
		}
		src.checked = make([]int8, len(src.checked)) // no stat of fuzzed paths
		for i := range src.checked {
			src.checked[i] = 1
		}
		src.AnonArcs()
		src.decodeAll()
		src.Diags(true)
		src.Named("testMIB")
		src.TCs("TestString")
		for _, o := range [][]uint32{{1, 3, 6, 1, 4, 1, 99999, 1}, {1}, nil} {
			src.Prefixes(o)
			src.Subtree(o)
			src.Under(o)
		}
		for i := range min(src.Len(), 64) {
			src.Def(i)
		}
	})
}
