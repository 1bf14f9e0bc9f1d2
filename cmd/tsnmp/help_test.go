package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/internal/testenv"
)

var updateDist = flag.Bool("update-dist", false, "rewrite dist/man/tsnmp*.1 and dist/completion/tsnmp.bash and _tsnmp")

// manDate is the date in the generated manual pages.
const manDate = "2026-11-25"

// TestDistUpToDate: the manual pages and the bash completion script in
// dist/ are those the help makes (go test -run TestDistUpToDate
// -update-dist ./cmd/tsnmp rewrites them), and every page formats
// without a warning from groff.
func TestDistUpToDate(t *testing.T) {
	files := map[string]string{filepath.Join("..", "..", "dist", "completion", "tsnmp.bash"): bashCompletion(),
		filepath.Join("..", "..", "dist", "completion", "_tsnmp"): zshCompletion()}
	for name, text := range manPages(manDate) {
		files[filepath.Join("..", "..", "dist", "man", name)] = text
	}
	if *updateDist {
		old, _ := filepath.Glob(filepath.Join("..", "..", "dist", "man", "tsnmp*.1"))
		for _, f := range old {
			os.Remove(f)
		}
		for f, text := range files {
			os.MkdirAll(filepath.Dir(f), 0o755)
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for f, text := range files {
		b, err := os.ReadFile(f)
		if err != nil || string(b) != text {
			t.Errorf("%s is not what the help makes (%v): run go test -run TestDistUpToDate -update-dist ./cmd/tsnmp", f, err)
		}
	}
	old, _ := filepath.Glob(filepath.Join("..", "..", "dist", "man", "tsnmp*.1"))
	for _, f := range old {
		if _, ok := files[f]; !ok {
			t.Errorf("%s is not made by the help any more", f)
		}
	}
	groff := testenv.Need(t, "groff")
	for f := range files {
		if !strings.HasSuffix(f, ".1") {
			continue
		}
		out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", f).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v\n%s", f, err, out)
		}
	}
	bash := testenv.Need(t, "bash")
	if out, err := exec.Command(bash, "-n", filepath.Join("..", "..", "dist", "completion", "tsnmp.bash")).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
}

// TestHelp: tsnmp --help lists every command, tsnmp help CMD and
// tsnmp CMD --help describe each option the command line parser takes,
// and --version prints the version.
func TestHelp(t *testing.T) {
	runArgs := func(args ...string) (string, string, int) {
		var o, e bytes.Buffer
		code := run(context.Background(), "tsnmp", args, &o, &e)
		return o.String(), e.String(), code
	}
	out, _, code := runArgs("--help")
	for _, c := range helpCommands {
		if !strings.Contains(out, "  "+c.name+" ") || code != 0 {
			t.Errorf("tsnmp --help (exit %d) does not list %s", code, c.name)
		}
	}
	for _, letter := range withArg + "hVd" {
		switch letter {
		case 'Y', 'P', 'L', 'Z', 'p', 's', 'S':
			continue // accepted for compatibility, not described
		}
		found := false
		for _, o := range commonOptions {
			if strings.Contains(o.flag, "-"+string(letter)) {
				found = true
			}
		}
		if !found && letter != 'C' {
			t.Errorf("option -%c is not described", letter)
		}
	}
	for _, c := range []string{"get", "walk", "table", "set", "bulkwalk"} {
		h, _, code := runArgs("help", c)
		g, _, code2 := runArgs(c, "--help")
		if code != 0 || code2 != 0 || h != g || !strings.Contains(h, "usage: tsnmp "+c+" [OPTIONS]") || !strings.Contains(h, "-D[TOKEN,...]") {
			t.Errorf("help %s (exit %d, %d):\n%s\n%s --help:\n%s", c, code, code2, h, c, g)
		}
	}
	if h, _, _ := runArgs("table", "-h"); !strings.Contains(h, "-Cf SEP") {
		t.Errorf("table -h lacks -Cf: %s", h)
	}
	for _, v := range []string{"--version", "-V"} {
		if out, _, code := runArgs(v); code != 0 || !strings.HasPrefix(out, "tsnmp ") {
			t.Errorf("%s: %d %q", v, code, out)
		}
	}
	if out, _, code := runArgs("get", "--version"); code != 0 || !strings.HasPrefix(out, "tsnmp ") {
		t.Errorf("get --version: %d %q", code, out)
	}
	if _, e, code := runArgs("nosuch"); code != 1 || !strings.Contains(e, `unknown command "nosuch"`) {
		t.Errorf("unknown command: %d %q", code, e)
	}
}

// TestCompletionNames: the completion lists MIB names by prefix, also
// from modules loaded with -m and -M, and module-qualified.
func TestCompletionNames(t *testing.T) {
	mibs := testenv.MIBDir(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	var o, e bytes.Buffer
	if code := run(context.Background(), "tsnmp", []string{"completion", "names", "--", "sysDe"}, &o, &e); code != 0 || o.String() != "sysDescr\n" {
		t.Errorf("names sysDe: %d %q %q", code, o.String(), e.String())
	}
	o.Reset()
	run(context.Background(), "tsnmp", []string{"completion", "names", "-M", mibs, "-m", "IF-MIB", "--", "IF-MIB::ifHCIn"}, &o, &e)
	if got := o.String(); got != "IF-MIB::ifHCInBroadcastPkts\nIF-MIB::ifHCInMulticastPkts\nIF-MIB::ifHCInOctets\nIF-MIB::ifHCInUcastPkts\n" {
		t.Errorf("names IF-MIB::ifHCIn: %q", got)
	}
}

// TestZshCompletion runs the zsh completion function in zsh with the
// completion system's builtins replaced by stubs that print what they
// are given: commands, option values, options with descriptions and MIB
// names (from tsnmp completion names, run as this test binary).
func TestZshCompletion(t *testing.T) {
	zsh := testenv.Need(t, "zsh")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("SNMPCONFPATH", t.TempDir())
	t.Setenv("MIBS", "")
	t.Setenv("MIBDIRS", "")
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nTSNMP_TEST_MAIN=1 exec " + os.Args[0] + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "tsnmp"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "_tsnmp")
	// The function alone: the file's last line, which runs it when zsh
	// autoloads the file, is left out.
	fn := strings.TrimSuffix(zshCompletion(), "_tsnmp \"$@\"\n")
	if err := os.WriteFile(script, []byte(fn), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		words  []string
		prefix string
		want   []string
	}{
		{[]string{"tsnmp", ""}, "", []string{"_describe -t commands", "get:get the values of objects", "netstat:print the agent's network connections"}},
		{[]string{"tsnmp", "get", "-v", ""}, "", []string{"compadd 1 2c 3"}},
		{[]string{"tsnmp", "set", "-x", ""}, "", []string{"compadd DES AES AES128"}},
		{[]string{"tsnmp", "get", "-"}, "-", []string{"-3m:authentication and privacy master keys", "-I:input: r no type and range checks"}},
		{[]string{"tsnmp", "netstat", "-C"}, "-C", []string{"-Cs:print the statistics", "-Cw:print the traffic"}},
		{[]string{"tsnmp", "get", "localhost", "sysDes"}, "sysDes", []string{"compadd -- sysDescr"}},
		{[]string{"tsnmp", "completion", ""}, "", []string{"compadd bash zsh"}},
	} {
		var words strings.Builder
		for _, w := range c.words {
			words.WriteString(" '" + w + "'")
		}
		prog := "_describe() { print -r -- _describe \"$@\"; local a; for a in \"$@\"; do if [[ $a == [a-z]* && $a != *' '* ]] && (( ${(P)+a} )); then print -rl -- ${(P)a}; fi; done; true }\n" +
			"compadd() { print -r -- compadd \"$@\" }\n_files() { print -r -- _files \"$@\" }\n" +
			"source " + script + "\n" +
			"words=(" + words.String() + ")\nCURRENT=" + fmt.Sprint(len(c.words)) + "\nPREFIX='" + c.prefix + "'\n_tsnmp\n"
		cmd := exec.Command(zsh, "-f", "-c", prog)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", c.words, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%q: completion gives\n%s\nwithout %q", c.words, out, w)
			}
		}
	}
}
