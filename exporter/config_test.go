package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const newFormat = `auths:
  public_v1:
    version: 1
  v3user:
    version: 3
    username: alice
    security_level: authPriv
    password: authpass1
    auth_protocol: SHA256
    priv_password: privpass1
    priv_protocol: AES
  broken_auth:
    version: 3
    security_level: authPriv
modules:
  good:
    walk: [1.3.6.1.2.1.1]
    max_repetitions: 10
    retries: 0
    timeout: 2s
    metrics:
    - name: sysUpTime
      oid: 1.3.6.1.2.1.1.3
      type: gauge
      help: up
  bad_index:
    walk: [1.3.6.1.2.1.2]
    metrics:
    - name: ifThing
      oid: 1.3.6.1.2.1.2.2.1.1
      type: gauge
      indexes:
      - labelname: ifIndex
        type: NoSuchType
  typo:
    walk: [1.3.6.1.2.1.2]
    metricz: []
`

func TestLoadNewFormat(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "snmp.yml")
	os.WriteFile(f, []byte(newFormat), 0o600)
	c, err := LoadFiles([]string{filepath.Join(dir, "*.yml")})
	if err != nil {
		t.Fatal(err)
	}
	if c.Modules["good"] == nil || c.Auths["v3user"] == nil || c.Auths["public_v1"].Version != 1 {
		t.Fatalf("good entries not loaded: %v %v", c.ModuleNames(), c.Auths)
	}
	g := c.Modules["good"]
	if g.MaxRepetitions != 10 || *g.Retries != 0 || g.Timeout.Seconds() != 2 {
		t.Errorf("walk params: %+v", g)
	}
	if c.Modules["bad_index"] != nil || c.Modules["typo"] != nil || c.Auths["broken_auth"] != nil {
		t.Errorf("bad entries loaded")
	}
	want := []string{
		f + `:12: module "auths: broken_auth": priv_password is missing`,
		f + `:26: module "bad_index": metric ifThing: invalid index type "NoSuchType"`,
		f + `:35: module "typo": line 37: field metricz not found`,
	}
	var got []string
	for _, e := range c.Errors {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("errors lack %q:\n%s", w, all)
		}
	}
}

func TestLoadOldFormat(t *testing.T) {
	c, err := LoadFiles([]string{"testdata/snmp-old.yml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Errors) > 0 {
		t.Fatal(c.Errors)
	}
	m := c.Modules["if_mib"]
	if m == nil || m.auth != nil || len(m.Metrics) < 20 {
		t.Fatalf("if_mib: %+v", m)
	}
	// 0.22 and older: the module's own version and auth.
	var o Config
	err = o.Add("old.yml", []byte("v3mod:\n  walk: [1.3.6.1.2.1.1]\n  version: 3\n  auth:\n    username: bob\n    security_level: authNoPriv\n    password: authpass1\n    auth_protocol: SHA\nv1mod:\n  walk: [1.3.6.1.2.1.1]\n  version: 1\n  auth:\n    community: secret\n"))
	if err != nil || len(o.Errors) > 0 {
		t.Fatal(err, o.Errors)
	}
	a := o.Modules["v3mod"].auth
	if a == nil || a.Version != 3 || a.Username != "bob" || a.AuthProtocol != "SHA" || a.SecurityLevel != "authNoPriv" {
		t.Errorf("v3mod auth: %+v", a)
	}
	if a := o.Modules["v1mod"].auth; a == nil || a.Version != 1 || a.Community != "secret" {
		t.Errorf("v1mod auth: %+v", a)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := LoadFiles([]string{filepath.Join(t.TempDir(), "none*.yml")})
	if err == nil || !strings.Contains(err.Error(), "matches no file") {
		t.Fatalf("err = %v", err)
	}
	f := filepath.Join(t.TempDir(), "x.yml")
	os.WriteFile(f, []byte("modules: [\n"), 0o600)
	if _, err := LoadFiles([]string{f}); err == nil || !strings.Contains(err.Error(), f) {
		t.Fatalf("err = %v", err)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(newFormat))
	old, _ := os.ReadFile("testdata/snmp-old.yml")
	f.Add(old)
	f.Add([]byte("modules:\n  m:\n    walk: [1.3]\n    metrics:\n    - {name: a, oid: 1.3, type: DisplayString, indexes: [{labelname: i, type: InetAddress}], lookups: [{labels: [i], labelname: j, oid: 1.4}], regex_extracts: {'': [{regex: '(.*)'}]}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Config
		if err := c.Add("fuzz.yml", b); err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, e := range c.Errors {
			if !strings.HasPrefix(e.Error(), "fuzz.yml:") {
				t.Fatalf("error does not name the file: %v", e)
			}
		}
	})
}
