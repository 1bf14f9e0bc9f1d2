package dist

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/tsnmp/tsnmp/agent/config"
	"github.com/tsnmp/tsnmp/internal/testenv"
)

var manPages = []string{"man/tsnmpd.8", "man/tsnmpd.conf.5", "man/tsnmp-trapd.8"}

// TestManPages: each page formats without a warning from groff, and the
// option lists are complete: tsnmpd(8) names every flag tsnmpd defines,
// tsnmp-trapd(8) every option of tsnmp trapd's usage, and tsnmpd.conf(5)
// every AgentX directive the snmpd.conf reader implements.
func TestManPages(t *testing.T) {
	groff := testenv.Need(t, "groff")
	text := map[string]string{}
	for _, p := range manPages {
		out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", p).CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v\n%s", p, err, out)
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text[p] = strings.ReplaceAll(string(src), `\-`, "-")
	}
	check := func(page, source string, re *regexp.Regexp, prefix string) {
		t.Helper()
		src, err := os.ReadFile(source)
		if err != nil {
			t.Fatal(err)
		}
		ms := re.FindAllStringSubmatch(string(src), -1)
		if len(ms) < 5 {
			t.Fatalf("%s: found only %d options; the pattern no longer matches the source", source, len(ms))
		}
		for _, m := range ms {
			if !strings.Contains(strings.ToLower(text[page]), strings.ToLower(prefix+m[1])) {
				t.Errorf("%s does not describe %s%s (%s)", page, prefix, m[1], source)
			}
		}
	}
	// The YAML example of tsnmpd.conf(5) is a valid configuration.
	conf := text["man/tsnmpd.conf.5"]
	i, j := strings.Index(conf, "\n.nf\n.RS\n"), strings.Index(conf, "\n.RE\n.fi\n")
	if i < 0 || j < i {
		t.Fatal("tsnmpd.conf.5 has no YAML example between .nf/.RS and .RE/.fi")
	}
	example := conf[i+len("\n.nf\n.RS\n") : j+1]
	c, err := config.ParseYAML("tsnmpd.conf.5", []byte(example))
	if err != nil {
		t.Errorf("the YAML example of tsnmpd.conf(5): %v\n%s", err, example)
	} else if _, err := c.BuildUSMUsers([]byte{0x80, 0, 0x1f, 0x88, 4, 't'}); err != nil {
		t.Errorf("the YAML example's users: %v", err)
	}
	check("man/tsnmpd.8", "../cmd/tsnmpd/main.go", regexp.MustCompile(`fs\.(?:StringVar|BoolVar|IntVar|Func|Bool|String|Int)\((?:&[\w.]+, )?"([a-z0-9-]+)"`), "--")
	check("man/tsnmp-trapd.8", "../cmd/tsnmp/trapd.go", regexp.MustCompile(`(?m)^  --([a-z0-9.-]+)`), "--")
	check("man/tsnmpd.conf.5", "../agent/config/agentx.go", regexp.MustCompile(`case "(master|agentx[a-z]+)"`), "")
}
